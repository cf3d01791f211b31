// BPE merge order, added-token splitting and options, on small hand-made vocabularies.
#include "tokenizer/bpe.h"

#include <gtest/gtest.h>

#include <random>

#include "tokenizer/byte_level.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/unicode.h"
#include "tokenizer_test_util.h"

namespace brisk {
namespace {

// A vocabulary of the 256 byte tokens (id = byte), then merge results and extra tokens.
struct ToyVocab {
  std::vector<std::string> tokens;  // byte-level texts
  std::vector<TokenType> types;
  std::vector<std::pair<std::string, std::string>> merges;
  std::vector<uint8_t> normalized;

  ToyVocab() {
    for (int b = 0; b < 256; ++b) {
      tokens.push_back(tok::BytesToByteLevel(std::string(1, static_cast<char>(b))));
      types.push_back(TokenType::kNormal);
    }
  }
  // Adds the merge of raw-byte strings a + b (and its result token); returns the result's id.
  int32_t Merge(const std::string& a, const std::string& b) {
    merges.emplace_back(tok::BytesToByteLevel(a), tok::BytesToByteLevel(b));
    tokens.push_back(tok::BytesToByteLevel(a + b));
    types.push_back(TokenType::kNormal);
    return static_cast<int32_t>(tokens.size() - 1);
  }
  int32_t Added(const std::string& text, TokenType type, bool norm = false) {
    tokens.push_back(text);
    types.push_back(type);
    normalized.resize(tokens.size(), 0);
    normalized.back() = norm ? 1 : 0;
    return static_cast<int32_t>(tokens.size() - 1);
  }
  Tokenizer Build(bool ignore_merges = false) const {
    tok::VocabSpec spec;
    for (const std::string& t : tokens) spec.tokens.emplace_back(t);
    spec.types = types;
    for (const auto& [a, b] : merges) spec.merges.emplace_back(a, b);
    spec.added_normalized = normalized;
    spec.ignore_merges = ignore_merges;
    Result<Tokenizer> t = Tokenizer::FromSpec(spec);
    EXPECT_TRUE(t.ok()) << t.message();
    return std::move(t).value();
  }
};

using Ids = std::vector<int32_t>;

TEST(Bpe, LowestRankFirst) {
  ToyVocab v;
  const int32_t bc = v.Merge("b", "c");
  const int32_t ab = v.Merge("a", "b");
  const Tokenizer t = v.Build();
  EXPECT_EQ(t.Encode("abc"), (Ids{'a', bc}));
  EXPECT_EQ(t.Encode("ab"), (Ids{ab}));
}

TEST(Bpe, LeftmostOnTiesAndChains) {
  ToyVocab v;
  const int32_t aa = v.Merge("a", "a");
  const int32_t aaaa = v.Merge("aa", "aa");
  const Tokenizer t = v.Build();
  EXPECT_EQ(t.Encode("aaa"), (Ids{aa, 'a'}));
  EXPECT_EQ(t.Encode("aaaa"), (Ids{aaaa}));
  EXPECT_EQ(t.Encode("aaaaaaa"), (Ids{aaaa, aa, 'a'}));
}

TEST(Bpe, MergesWithUnknownPartsAreSkipped) {
  ToyVocab v;
  v.merges.emplace_back("x", "nosuchtoken");
  v.merges.emplace_back("nosuch", "y");
  const int32_t xy = v.Merge("x", "y");
  const Tokenizer t = v.Build();
  EXPECT_EQ(t.n_merges(), 1u);
  EXPECT_EQ(t.Encode("xy"), (Ids{xy}));
}

TEST(Bpe, ArrayAndHeapAgree) {
  ToyVocab v;
  std::mt19937 rng(5);
  // Random merges over a small alphabet so that long pieces merge a lot.
  std::vector<std::string> units = {"a", "b", "c", "d"};
  for (int i = 0; i < 200; ++i) {
    const std::string a = units[rng() % units.size()], b = units[rng() % units.size()];
    bool dup = false;
    for (const auto& [x, y] : v.merges)
      dup |= x == tok::BytesToByteLevel(a) && y == tok::BytesToByteLevel(b);
    if (dup || (a + b).size() > 12) continue;
    v.Merge(a, b);
    units.push_back(a + b);
  }
  const Tokenizer t = v.Build();
  const tok::BpeModel& bpe = t.bpe_model();
  ASSERT_TRUE(bpe.monotone());
  for (int iter = 0; iter < 3000; ++iter) {
    std::string s(1 + rng() % 120, 'a');
    for (char& c : s) c = static_cast<char>('a' + rng() % 4);
    Ids x, y, z;
    bpe.EncodeArray(s, &x);
    bpe.EncodeHeap(s, &y);
    bpe.EncodeBuckets(s, &z);
    ASSERT_EQ(x, y) << s;
    ASSERT_EQ(x, z) << s;
  }
}

TEST(Bpe, ArrayAndHeapAgreeOnTheRealVocabulary) {
  const Tokenizer* t = test::Qwen25Gguf();
  if (t == nullptr) t = test::SubsetHf();
  if (t == nullptr) GTEST_SKIP() << "no Qwen vocabulary";
  ASSERT_TRUE(t->bpe_model().monotone());
  const std::string path = test::FindGoldenOrData("tokenizer/qwen2.5-hf-cases.jsonl",
                                                  "tokenizer/qwen2.5-subset-cases.jsonl");
  for (const test::TokCase& c : test::LoadJsonlCases(path)) {
    for (size_t p = 0; p < c.text.size(); p += 97) {
      const std::string piece = c.text.substr(p, 97);
      Ids x, y, z;
      t->bpe_model().EncodeArray(piece, &x);
      t->bpe_model().EncodeHeap(piece, &y);
      t->bpe_model().EncodeBuckets(piece, &z);
      ASSERT_EQ(x, y) << nlohmann::json(tok::ToValidUtf8(piece)).dump();
      ASSERT_EQ(x, z) << nlohmann::json(tok::ToValidUtf8(piece)).dump();
    }
  }
}

// A vocabulary where a merge uses a token that a later merge creates: the bucketed path is off
// and the heap keeps HF's order.
TEST(Bpe, NonMonotoneVocabularyUsesTheHeap) {
  ToyVocab v;
  v.tokens.push_back(tok::BytesToByteLevel("ab"));  // "ab" exists before any merge creates it
  v.types.push_back(TokenType::kNormal);
  const int32_t ab = static_cast<int32_t>(v.tokens.size() - 1);
  v.merges.emplace_back(tok::BytesToByteLevel("ab"), tok::BytesToByteLevel("c"));  // rank 0
  v.tokens.push_back(tok::BytesToByteLevel("abc"));
  v.types.push_back(TokenType::kNormal);
  const int32_t abc = static_cast<int32_t>(v.tokens.size() - 1);
  v.merges.emplace_back(tok::BytesToByteLevel("a"), tok::BytesToByteLevel("b"));  // rank 1
  v.merges.emplace_back(tok::BytesToByteLevel("c"), tok::BytesToByteLevel("c"));  // rank 2
  v.tokens.push_back(tok::BytesToByteLevel("cc"));
  v.types.push_back(TokenType::kNormal);
  const int32_t cc = static_cast<int32_t>(v.tokens.size() - 1);
  const Tokenizer t = v.Build();
  EXPECT_FALSE(t.bpe_model().monotone());
  // HF: (c,c) rank 2 is pending, (a,b) rank 1 merges, then (ab,c) rank 0 beats (c,c).
  EXPECT_EQ(t.Encode("abcc"), (Ids{abc, 'c'}));
  std::string long_piece;
  for (int i = 0; i < 3000; ++i) long_piece += "abcc";
  Ids want;
  for (int i = 0; i < 3000; ++i) want.insert(want.end(), {abc, 'c'});
  EXPECT_EQ(t.Encode(long_piece), want);
  (void)ab;
  (void)cc;
}

TEST(Bpe, MissingByteTokensAreDropped) {
  tok::VocabSpec spec;
  spec.tokens = {"a", "b", "ab"};
  spec.types.assign(3, TokenType::kNormal);
  spec.merges = {{"a", "b"}};
  Result<Tokenizer> t = Tokenizer::FromSpec(spec);
  ASSERT_TRUE(t.ok());
  // HF drops characters the vocabulary lacks (no unk token); neighbours then merge.
  EXPECT_EQ(t->Encode("a?b"), (Ids{0, 1}));  // pieces "a", "?b"
  EXPECT_EQ(t->Encode("a\xc3\xa9"
                      "b"),
            (Ids{2}));  // one piece "aéb": é's bytes dropped
  EXPECT_EQ(t->Encode("\xc3\xa9"), (Ids{}));
}

TEST(AddedTokens, LeftmostLongestAndAdjacent) {
  ToyVocab v;
  const int32_t a = v.Added("<a>", TokenType::kControl);
  const int32_t ab = v.Added("<a><b>", TokenType::kControl);
  const int32_t b = v.Added("<b>", TokenType::kUserDefined);
  const int32_t bar = v.Added("|b", TokenType::kControl);
  const Tokenizer t = v.Build();
  EXPECT_EQ(t.Encode("<a><b>"), (Ids{ab}));
  EXPECT_EQ(t.Encode("<a><a><b>"), (Ids{a, ab}));
  EXPECT_EQ(t.Encode("x<b><a>"), (Ids{'x', b, a}));
  EXPECT_EQ(t.Encode("<|b>"), (Ids{'<', bar, '>'}));  // leftmost wins over a later longer one
  // parse_special = false: control tokens are text, user-defined ones still split out.
  EXPECT_EQ(t.Encode("<a><b>", false), (Ids{'<', 'a', '>', b}));
  EXPECT_EQ(t.Decode(t.Encode("x<a>y<b>")), "x<a>y<b>");
  EXPECT_EQ(t.Decode(t.Encode("x<a>y<b>"), /*show_special=*/false), "xy<b>");
}

TEST(AddedTokens, NormalizedOnesMatchAfterNfc) {
  ToyVocab v;
  const int32_t raw = v.Added("e\xcc\x81", TokenType::kUserDefined);         // e + U+0301
  const int32_t norm = v.Added("o\xcc\x81", TokenType::kUserDefined, true);  // NFC: U+00F3
  const Tokenizer t = v.Build();
  // Raw tokens match the text as written; normalised ones the NFC of it.
  EXPECT_EQ(t.Encode("e\xcc\x81"), (Ids{raw}));
  EXPECT_EQ(t.Encode("o\xcc\x81"), (Ids{norm}));
  EXPECT_EQ(t.Encode("\xc3\xb3"), (Ids{norm}));
}

TEST(Bpe, IgnoreMergesTakesWholeTokens) {
  ToyVocab v;
  v.tokens.push_back("abc");  // reachable by no merge
  v.types.push_back(TokenType::kNormal);
  const int32_t abc = static_cast<int32_t>(v.tokens.size() - 1);
  EXPECT_EQ(v.Build(false).Encode("abc"), (Ids{'a', 'b', 'c'}));
  EXPECT_EQ(v.Build(true).Encode("abc"), (Ids{abc}));
}

TEST(Tokenizer, UnusedAndOutOfRangeIdsDecodeToNothing) {
  ToyVocab v;
  const int32_t pad = v.Added("[PAD0]", TokenType::kUnused);
  const Tokenizer t = v.Build();
  EXPECT_EQ(t.Encode("[PAD0]"), t.Encode("[PAD0]", false));  // never matched as a token
  EXPECT_NE(t.Encode("[PAD0]"), (Ids{pad}));
  const Ids ids = {'h', pad, -1, 1 << 30, 'i'};
  EXPECT_EQ(t.Decode(ids), "hi");
  EXPECT_EQ(t.TokenText(-5), "");
  EXPECT_EQ(t.type(1 << 30), TokenType::kUndefined);
}

}  // namespace
}  // namespace brisk
