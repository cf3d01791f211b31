// UTF-8 decoding and lossy repair, the pre-tokenizer's character classes, NFC.
#include "tokenizer/unicode.h"

#include <gtest/gtest.h>
#include <utf8proc.h>

#include <random>

#include "tokenizer/byte_level.h"
#include "tokenizer_test_util.h"

namespace brisk::tok {
namespace {

using namespace std::literals;

// Expected output from Python's bytes.decode("utf-8", "replace") (= Rust from_utf8_lossy):
// one U+FFFD per maximal ill-formed subpart.
TEST(Utf8, LossyRepairMatchesPythonAndRust) {
  const std::pair<std::string_view, std::string_view> cases[] = {
      {"\x80"sv, "\xef\xbf\xbd"sv},
      {"\xc3"sv, "\xef\xbf\xbd"sv},
      {"\xc3\x28"sv, "\xef\xbf\xbd\x28"sv},
      {"\xe2\x82"sv, "\xef\xbf\xbd"sv},
      {"\xe2\x82\x28"sv, "\xef\xbf\xbd\x28"sv},
      {"\xf0\x9f\x98"sv, "\xef\xbf\xbd"sv},
      {"\xf0\x9f\x98\x80"sv, "\xf0\x9f\x98\x80"sv},
      {"\xed\xa0\x80"sv, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"sv},
      {"\xc0\xaf"sv, "\xef\xbf\xbd\xef\xbf\xbd"sv},
      {"\xe0\x80\xaf"sv, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"sv},
      {"\xf4\x90\x80\x80"sv, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"sv},
      {"\xf5"sv, "\xef\xbf\xbd"sv},
      {"\xff\xfe"sv, "\xef\xbf\xbd\xef\xbf\xbd"sv},
      {"\x61\xf1\x80\x80\x7a"sv, "\x61\xef\xbf\xbd\x7a"sv},
      {"\xf1\x80\x80\xf1\x80\x80\x80"sv, "\xef\xbf\xbd\xf1\x80\x80\x80"sv},
      {"\xe0\xa0"sv, "\xef\xbf\xbd"sv},
      {"\xef\xbf\xbf"sv, "\xef\xbf\xbf"sv},
      {"\xf4\x8f\xbf\xbf"sv, "\xf4\x8f\xbf\xbf"sv},
      {"\xed\x9f\xbf"sv, "\xed\x9f\xbf"sv},
      {"\x00\xc2\x80"sv, "\x00\xc2\x80"sv},
  };
  for (const auto& [in, want] : cases) {
    EXPECT_EQ(ToValidUtf8(in), want) << test::IdsToString({in.begin(), in.end()});
    EXPECT_EQ(IsValidUtf8(in), in == want);
  }
}

TEST(Utf8, NonFinalHoldsBackOnlyACompletablePrefix) {
  std::string out;
  EXPECT_EQ(AppendUtf8Lossy("ab\xf0\x9f"sv, false, &out), 2u);
  EXPECT_EQ(out, "ab");
  out.clear();
  EXPECT_EQ(AppendUtf8Lossy("ab\xf0\x28"sv, false, &out), 4u);  // cannot complete any more
  EXPECT_EQ(out, "ab\xef\xbf\xbd(");
  out.clear();
  EXPECT_EQ(AppendUtf8Lossy("\xf0\x9f\x98\x80"sv, false, &out), 4u);
  EXPECT_EQ(out, "\xf0\x9f\x98\x80");
}

TEST(Utf8, DecodeNeverReadsPastTheEnd) {
  // Every prefix of every byte pattern; ASan would flag an overread.
  std::mt19937 rng(7);
  for (int iter = 0; iter < 20000; ++iter) {
    const size_t n = 1 + rng() % 5;
    std::unique_ptr<char[]> buf(new char[n]);
    for (size_t i = 0; i < n; ++i) buf[i] = static_cast<char>(rng() % 256);
    const Utf8Step st = DecodeUtf8(buf.get(), n);
    ASSERT_GE(st.len, 1u);
    ASSERT_LE(st.len, n);
  }
}

TEST(Utf8, EncodeDecodeAllScalarValues) {
  for (char32_t cp = 0; cp < 0x110000; ++cp) {
    if (cp >= 0xD800 && cp <= 0xDFFF) continue;
    std::string s;
    AppendUtf8(cp, &s);
    const Utf8Step st = DecodeUtf8(s.data(), s.size());
    ASSERT_TRUE(st.ok) << std::hex << static_cast<uint32_t>(cp);
    ASSERT_EQ(static_cast<uint32_t>(st.cp), static_cast<uint32_t>(cp));
    ASSERT_EQ(st.len, s.size());
  }
}

TEST(CharClass, WhiteSpaceIsTheUnicodeProperty) {
  const char32_t ws[] = {0x09,   0x0A,   0x0B,   0x0C,   0x0D,   0x20,   0x85,   0xA0,  0x1680,
                         0x2000, 0x2005, 0x200A, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000};
  for (char32_t c : ws) EXPECT_TRUE(IsWhiteSpace(c)) << std::hex << static_cast<uint32_t>(c);
  for (char32_t c : {0x08u, 0x1Cu, 0x200Bu, 0x180Eu, 0xFEFFu, 0x2060u, 0x00u}) {
    EXPECT_FALSE(IsWhiteSpace(c)) << std::hex << static_cast<uint32_t>(c);
  }
  EXPECT_EQ(ClassOf('\r'), CharClass::kNewline);
  EXPECT_EQ(ClassOf('\n'), CharClass::kNewline);
  EXPECT_EQ(ClassOf(0x2028), CharClass::kSpace);  // not a \r\n for the regex
}

TEST(CharClass, LettersAndNumbersByGeneralCategory) {
  for (char32_t c : {U'a', U'Z', U'é', U'ß', U'ǅ', U'ʰ', U'中', U'한', U'ſ', U'Ａ', U'ℝ'}) {
    EXPECT_EQ(ClassOf(c), CharClass::kLetter) << std::hex << static_cast<uint32_t>(c);
  }
  for (char32_t c : {U'0', U'٣', U'०', U'Ⅻ', U'〇', U'²', U'½', U'①', U'０'}) {
    EXPECT_EQ(ClassOf(c), CharClass::kNumber) << std::hex << static_cast<uint32_t>(c);
  }
  for (char32_t c : {U'\'', U'.', U'\u0301', U'😀', U'€', U'\u200B', U'\uFFFD', U'_'}) {
    EXPECT_EQ(ClassOf(c), CharClass::kOther) << std::hex << static_cast<uint32_t>(c);
  }
}

// Cross-check of every code point against utf8proc's categories (the definition we use).
TEST(CharClass, AgreesWithCategoriesForEveryCodePoint) {
  for (char32_t cp = 0; cp < 0x110000; ++cp) {
    if (cp >= 0xD800 && cp <= 0xDFFF) continue;
    const auto cat = utf8proc_category(static_cast<utf8proc_int32_t>(cp));
    CharClass want = CharClass::kOther;
    if (cp == '\r' || cp == '\n')
      want = CharClass::kNewline;
    else if (IsWhiteSpace(cp))
      want = CharClass::kSpace;
    else if (cat >= UTF8PROC_CATEGORY_LU && cat <= UTF8PROC_CATEGORY_LO)
      want = CharClass::kLetter;
    else if (cat >= UTF8PROC_CATEGORY_ND && cat <= UTF8PROC_CATEGORY_NO)
      want = CharClass::kNumber;
    ASSERT_EQ(ClassOf(cp), want) << std::hex << static_cast<uint32_t>(cp);
  }
}

TEST(Nfc, ComposesAndReorders) {
  EXPECT_EQ(Nfc("e\u0301"), "\u00e9");
  EXPECT_EQ(Nfc("A\u030a"), "\u00c5");
  EXPECT_EQ(Nfc("\u212b"), "\u00c5");                // singleton decomposition
  EXPECT_EQ(Nfc("q\u0307\u0323"), "q\u0323\u0307");  // canonical reordering
  EXPECT_EQ(Nfc("\u1100\u1161\u11a8"), "\uac01");    // Hangul jamo compose
  EXPECT_EQ(Nfc("\uac00\u11a8"), "\uac01");          // LV + T
  EXPECT_EQ(Nfc("\uff21\ufb01"), "\uff21\ufb01");    // compatibility forms stay
  EXPECT_EQ(Nfc("\u0b47\u0b3e"), "\u0b4b");          // a starter as second element
  EXPECT_EQ(Nfc("abc"), "abc");
  EXPECT_EQ(Nfc(""), "");
  EXPECT_EQ(Nfc("a\0\u0301b"sv), "a\0\u0301b"sv);  // NUL is an ordinary character
}

// NfcView skips characters it proves stable; check that claim from utf8proc's own data: every
// non-initial character of every canonical decomposition must be treated as unstable, and
// random strings must normalise exactly as the plain utf8proc call does.
TEST(Nfc, ShortcutsAgreeWithUtf8proc) {
  std::vector<char32_t> interesting;
  for (char32_t cp = 0x80; cp < 0x110000; ++cp) {
    if (cp >= 0xD800 && cp <= 0xDFFF) continue;
    const utf8proc_property_t* p = utf8proc_get_property(static_cast<utf8proc_int32_t>(cp));
    if (p->combining_class != 0 || (p->decomp_seqindex != UINT16_MAX && p->decomp_type == 0)) {
      interesting.push_back(cp);
    }
    utf8proc_int32_t buf[32];
    utf8proc_int32_t bc = 0;
    const auto m = utf8proc_decompose_char(static_cast<utf8proc_int32_t>(cp), buf, 32,
                                           UTF8PROC_DECOMPOSE, &bc);
    for (utf8proc_ssize_t k = 1; k < m; ++k) {
      std::string s = "a";
      AppendUtf8(static_cast<char32_t>(buf[k]), &s);
      std::string storage;
      // An unstable character forces the slow path, so the view is not `s` itself.
      const std::string_view v = NfcView(s, &storage);
      ASSERT_EQ(std::string(v), NfcReference(s)) << std::hex << static_cast<uint32_t>(cp);
      ASSERT_NE(v.data(), s.data())
          << "U+" << std::hex << buf[k] << " (from U+" << static_cast<uint32_t>(cp)
          << ") must not be treated as NFC-stable";
    }
  }
  std::mt19937 rng(11);
  const char32_t extra[] = {U'a',      U'e',      U'A',      U' ',      U'中',     U'é', U'\u1100',
                            U'\u1161', U'\u11a8', U'\uac00', U'\u0b47', U'\u0b3e', U'ſ', U'\u212b'};
  for (int iter = 0; iter < 20000; ++iter) {
    std::string s;
    const int n = 1 + static_cast<int>(rng() % 8);
    for (int k = 0; k < n; ++k) {
      const char32_t cp =
          rng() % 2 ? interesting[rng() % interesting.size()] : extra[rng() % std::size(extra)];
      AppendUtf8(cp, &s);
    }
    ASSERT_EQ(Nfc(s), NfcReference(s)) << iter;
  }
}

TEST(Nfc, GoldenTextsAgreeWithUtf8proc) {
  const std::string path = test::FindGoldenOrData("tokenizer/qwen2.5-hf-cases.jsonl",
                                                  "tokenizer/qwen2.5-subset-cases.jsonl");
  if (path.empty()) GTEST_SKIP() << "no tokenizer cases";
  for (const test::TokCase& c : test::LoadJsonlCases(path)) {
    ASSERT_EQ(Nfc(c.text), NfcReference(c.text)) << nlohmann::json(c.text).dump();
  }
}

TEST(ByteLevel, AlphabetIsTheGpt2One) {
  EXPECT_EQ(static_cast<uint32_t>(ByteToUnicode(' ')), static_cast<uint32_t>(U'Ġ'));
  EXPECT_EQ(static_cast<uint32_t>(ByteToUnicode('\n')), static_cast<uint32_t>(U'Ċ'));
  EXPECT_EQ(static_cast<uint32_t>(ByteToUnicode('!')), static_cast<uint32_t>(U'!'));
  EXPECT_EQ(static_cast<uint32_t>(ByteToUnicode(0xAD)), static_cast<uint32_t>(U'\u0143'));
  EXPECT_EQ(static_cast<uint32_t>(ByteToUnicode(0x00)), static_cast<uint32_t>(U'\u0100'));
  EXPECT_EQ(static_cast<uint32_t>(ByteToUnicode(0xFF)), static_cast<uint32_t>(U'ÿ'));
  for (int b = 0; b < 256; ++b) EXPECT_EQ(UnicodeToByte(ByteToUnicode(static_cast<uint8_t>(b))), b);
  EXPECT_EQ(UnicodeToByte(U' '), -1);
  EXPECT_EQ(UnicodeToByte(0x10FFFF), -1);
  EXPECT_EQ(BytesToByteLevel(" hi\n"), "ĠhiĊ");
  EXPECT_EQ(ByteLevelToBytes("ĠhiĊ"), " hi\n");
  EXPECT_EQ(ByteLevelToBytes("<| a |>"), "<| a |>");  // not all in the alphabet: unchanged
}

}  // namespace
}  // namespace brisk::tok
