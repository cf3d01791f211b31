// Streaming detokenizer: never a partial UTF-8 sequence, and exactly the one-shot decode.
#include "tokenizer/detokenizer.h"

#include <gtest/gtest.h>

#include <random>

#include "tokenizer/byte_level.h"
#include "tokenizer/unicode.h"
#include "tokenizer_test_util.h"

namespace brisk {
namespace {

// 256 byte tokens (id = byte value), <|s|> control (256), <u> user-defined (257), a pad (258).
Tokenizer ByteTokenizer() {
  tok::VocabSpec spec;
  std::vector<std::string> texts;
  for (int b = 0; b < 256; ++b) texts.push_back(tok::BytesToByteLevel(std::string(1, char(b))));
  texts.push_back("<|s|>");
  texts.push_back("<u>");
  texts.push_back("[PAD]");
  for (const std::string& t : texts) spec.tokens.emplace_back(t);
  spec.types.assign(256, TokenType::kNormal);
  spec.types.push_back(TokenType::kControl);
  spec.types.push_back(TokenType::kUserDefined);
  spec.types.push_back(TokenType::kUnused);
  Result<Tokenizer> t = Tokenizer::FromSpec(spec);
  EXPECT_TRUE(t.ok());
  return std::move(t).value();
}

// Feeds ids one at a time; checks each piece is valid UTF-8 and the total equals Decode.
std::vector<std::string> Stream(const Tokenizer& t, const std::vector<int32_t>& ids, bool show) {
  StreamingDetokenizer d(t, show);
  std::vector<std::string> pieces;
  std::string all;
  for (int32_t id : ids) {
    pieces.push_back(d.Push(id));
    EXPECT_TRUE(tok::IsValidUtf8(pieces.back()));
    EXPECT_LE(d.pending_bytes(), 3u);
    all += pieces.back();
  }
  pieces.push_back(d.Flush());
  EXPECT_TRUE(tok::IsValidUtf8(pieces.back()));
  EXPECT_EQ(d.pending_bytes(), 0u);
  all += pieces.back();
  EXPECT_EQ(all, t.Decode(ids, show));
  return pieces;
}

std::vector<int32_t> Bytes(std::string_view s) {
  std::vector<int32_t> ids;
  for (char c : s) ids.push_back(static_cast<uint8_t>(c));
  return ids;
}

TEST(StreamingDetokenizer, HoldsBackIncompleteCharacters) {
  const Tokenizer t = ByteTokenizer();
  // "中" = E4 B8 AD, "😀" = F0 9F 98 80
  const auto pieces = Stream(t, Bytes("a\xe4\xb8\xad\xf0\x9f\x98\x80!"), true);
  const std::vector<std::string> want = {
      "a", "", "", "\xe4\xb8\xad", "", "", "", "\xf0\x9f\x98\x80", "!", ""};
  EXPECT_EQ(pieces, want);
}

TEST(StreamingDetokenizer, InvalidBytesBecomeReplacementCharacters) {
  const Tokenizer t = ByteTokenizer();
  const std::string r = "\xef\xbf\xbd";
  // A lead byte followed by a non-continuation: replaced as soon as that is known.
  EXPECT_EQ(Stream(t, Bytes("\xf0("), true), (std::vector<std::string>{"", r + "(", ""}));
  // A stray continuation byte: replaced at once.
  EXPECT_EQ(Stream(t, Bytes("\x80x"), true), (std::vector<std::string>{r, "x", ""}));
  // Truncated at the end: Flush emits one U+FFFD for the held bytes.
  EXPECT_EQ(Stream(t, Bytes("ok\xf0\x9f\x98"), true),
            (std::vector<std::string>{"o", "k", "", "", "", r}));
  // ED could start U+D000..U+D7FF, so it waits; ED A0 is a surrogate: both replaced then.
  EXPECT_EQ(Stream(t, Bytes("\xed\xa0\x80"), true), (std::vector<std::string>{"", r + r, r, ""}));
  // C0 and C1 never start a sequence.
  EXPECT_EQ(Stream(t, Bytes("\xc0\xaf"), true), (std::vector<std::string>{r, r, ""}));
}

TEST(StreamingDetokenizer, SpecialUnusedAndOutOfRange) {
  const Tokenizer t = ByteTokenizer();
  const std::vector<int32_t> ids = {'a', 256, 257, 258, -1, 99999, 'b'};
  EXPECT_EQ(t.Decode(ids, true), "a<|s|><u>b");
  EXPECT_EQ(t.Decode(ids, false), "a<u>b");
  Stream(t, ids, true);
  Stream(t, ids, false);
  // A control token between the bytes of one character does not break it up.
  const std::vector<int32_t> split = {0xe4, 0xb8, 256, 0xad};
  EXPECT_EQ(t.Decode(split, false), "\xe4\xb8\xad");
  EXPECT_EQ(t.Decode(split, true), "\xef\xbf\xbd<|s|>\xef\xbf\xbd");
  Stream(t, split, true);
  Stream(t, split, false);
}

TEST(StreamingDetokenizer, RandomByteTokensMatchOneShot) {
  const Tokenizer t = ByteTokenizer();
  std::mt19937 rng(1);
  for (int iter = 0; iter < 3000; ++iter) {
    std::vector<int32_t> ids(1 + rng() % 24);
    for (int32_t& id : ids) {
      // Mostly bytes near the UTF-8 boundaries, some specials.
      const uint32_t r = rng() % 10;
      id = r < 3   ? static_cast<int32_t>(0x80 + rng() % 0x40)
           : r < 6 ? static_cast<int32_t>(0xC0 + rng() % 0x40)
           : r < 9 ? static_cast<int32_t>(rng() % 0x80)
                   : static_cast<int32_t>(256 + rng() % 4);
    }
    Stream(t, ids, iter % 2 == 0);
    if (HasFailure()) return;
  }
}

TEST(StreamingDetokenizer, RandomIdsFromTheRealVocabulary) {
  const Tokenizer* t = test::Qwen25Gguf();
  if (t == nullptr) t = test::SubsetHf();
  if (t == nullptr) GTEST_SKIP() << "no Qwen vocabulary";
  std::mt19937 rng(2);
  for (int iter = 0; iter < 2000; ++iter) {
    std::vector<int32_t> ids(1 + rng() % 32);
    for (int32_t& id : ids) id = static_cast<int32_t>(rng() % (t->n_vocab() + 8)) - 4;
    Stream(*t, ids, iter % 2 == 0);
    if (HasFailure()) return;
  }
}

TEST(StreamingDetokenizer, ResetAndReuse) {
  const Tokenizer t = ByteTokenizer();
  StreamingDetokenizer d(t);
  EXPECT_EQ(d.Push(0xe4), "");
  d.Reset();
  EXPECT_EQ(d.Push('x'), "x");
  EXPECT_EQ(d.Flush(), "");
}

}  // namespace
}  // namespace brisk
