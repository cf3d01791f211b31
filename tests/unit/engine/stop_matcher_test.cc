#include "engine/stop_matcher.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace brisk {
namespace {

// Strict UTF-8 well-formedness (RFC 3629: no overlongs, no surrogates, <= U+10FFFF).
bool ValidUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const uint8_t b = uint8_t(s[i]);
    int len;
    uint32_t cp;
    if (b < 0x80) {
      ++i;
      continue;
    } else if ((b & 0xE0) == 0xC0) {
      len = 2;
      cp = b & 0x1F;
    } else if ((b & 0xF0) == 0xE0) {
      len = 3;
      cp = b & 0x0F;
    } else if ((b & 0xF8) == 0xF0) {
      len = 4;
      cp = b & 0x07;
    } else {
      return false;
    }
    if (i + size_t(len) > s.size()) return false;
    for (int k = 1; k < len; ++k) {
      const uint8_t c = uint8_t(s[i + size_t(k)]);
      if ((c & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (c & 0x3F);
    }
    const uint32_t min_cp[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min_cp[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += size_t(len);
  }
  return true;
}

struct Fed {
  std::vector<std::string> pieces;  // what each Append returned
  std::string text;                 // all of it concatenated
  std::string matched;
  size_t consumed = 0;  // inputs appended (stops at the first match)
};

Fed Feed(StopMatcher& m, const std::vector<std::string>& inputs) {
  Fed f;
  for (const std::string& in : inputs) {
    f.pieces.push_back(m.Append(in, &f.matched));
    f.text += f.pieces.back();
    ++f.consumed;
    if (!f.matched.empty()) break;
  }
  return f;
}

std::vector<std::string> Bytes(std::string_view s) {
  std::vector<std::string> out;
  for (char c : s) out.emplace_back(1, c);
  return out;
}

// Splits into whole code points (assumes valid UTF-8).
std::vector<std::string> CodePoints(std::string_view s) {
  std::vector<std::string> out;
  for (size_t i = 0; i < s.size();) {
    size_t j = i + 1;
    while (j < s.size() && (uint8_t(s[j]) & 0xC0) == 0x80) ++j;
    out.emplace_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

TEST(StopMatcher, ValidUtf8HelperRejectsBrokenText) {  // the checker used below can fail
  EXPECT_TRUE(ValidUtf8("abc \xC3\xA9 \xE6\x97\xA5 \xF0\x9F\x98\x80"));
  EXPECT_FALSE(ValidUtf8("\xC3"));
  EXPECT_FALSE(ValidUtf8("\xA9"));
  EXPECT_FALSE(ValidUtf8("\xE6\x97"));
  EXPECT_FALSE(ValidUtf8("\xC0\xAF"));          // overlong
  EXPECT_FALSE(ValidUtf8("\xED\xA0\x80"));      // surrogate
  EXPECT_FALSE(ValidUtf8("\xF4\x90\x80\x80"));  // > U+10FFFF
}

TEST(StopMatcher, StopSplitAcrossPieces) {
  StopMatcher m({"lo w"});
  EXPECT_TRUE(m.active());
  Fed f = Feed(m, {"He", "llo wor", "ld"});
  EXPECT_EQ(f.text, "Hel");
  EXPECT_EQ(f.matched, "lo w");
  EXPECT_EQ(f.consumed, 2u);  // the stop completed inside the second piece
  EXPECT_EQ(f.pieces[0], "He");
  EXPECT_EQ(m.Flush(), "");  // nothing after the stop string is kept
}

TEST(StopMatcher, StopSplitOverManyPiecesIsNeverPartlyEmitted) {
  StopMatcher m({"</end>"});
  Fed f = Feed(m, {"abc<", "/", "en", "d", ">tail"});
  EXPECT_EQ(f.matched, "</end>");
  EXPECT_EQ(f.text, "abc");
  EXPECT_EQ(f.pieces, (std::vector<std::string>{"abc", "", "", "", ""}));
}

TEST(StopMatcher, EarliestStopInTheTextWins) {
  for (const std::vector<std::string>& stops :
       {std::vector<std::string>{"world", "o w"}, std::vector<std::string>{"o w", "world"}}) {
    SCOPED_TRACE(stops[0]);
    StopMatcher m(stops);
    std::string matched;
    EXPECT_EQ(m.Append("hello world", &matched), "hell");
    EXPECT_EQ(matched, "o w");
  }
  // Both complete in the same piece; the one that starts first wins although it is longer.
  StopMatcher m({"d!", "bcd"});
  Fed f = Feed(m, {"ab", "cd!"});
  EXPECT_EQ(f.text, "a");
  EXPECT_EQ(f.matched, "bcd");
}

TEST(StopMatcher, HeldTextReleasedWhenItCanNoLongerMatch) {
  StopMatcher m({"abc"});
  std::string matched;
  EXPECT_EQ(m.Append("xab", &matched), "x");  // "ab" may start "abc"
  EXPECT_EQ(m.Append("d", &matched), "abd");
  EXPECT_EQ(m.Append("a", &matched), "");
  EXPECT_EQ(m.Append("a", &matched), "a");  // the first "a" can no longer start a match
  EXPECT_EQ(m.Append("b", &matched), "");
  EXPECT_EQ(m.Append("x", &matched), "abx");
  EXPECT_TRUE(matched.empty());
}

TEST(StopMatcher, OverlappingPrefixKeepsTheLongestCandidate) {
  StopMatcher m({"aab"});
  Fed f = Feed(m, {"a", "a", "a", "a", "b", "zzz"});
  EXPECT_EQ(f.matched, "aab");
  EXPECT_EQ(f.text, "aa");
  EXPECT_EQ(f.consumed, 5u);
}

TEST(StopMatcher, HoldsTheLongestTailOverAllStops) {
  StopMatcher m({"xy", "abcd"});
  std::string matched;
  EXPECT_EQ(m.Append("..abc", &matched), "..");  // "abc" could start "abcd"
  EXPECT_EQ(m.Append("x", &matched), "abc");     // now only "x" could start "xy"
  EXPECT_EQ(m.Append("y", &matched), "");
  EXPECT_EQ(matched, "xy");
}

TEST(StopMatcher, FlushReturnsHeldTail) {
  StopMatcher m({"STOP"});
  std::string matched;
  EXPECT_EQ(m.Append("the end ST", &matched), "the end ");
  EXPECT_EQ(m.Flush(), "ST");
  EXPECT_EQ(m.Flush(), "");  // flushed text is gone
  EXPECT_TRUE(matched.empty());
}

TEST(StopMatcher, EmptyStopListPassesEverythingThrough) {
  for (const std::vector<std::string>& stops :
       {std::vector<std::string>{}, std::vector<std::string>{""}}) {
    StopMatcher m(stops);
    EXPECT_FALSE(m.active());
    std::string matched;
    EXPECT_EQ(m.Append("a", &matched), "a");
    EXPECT_EQ(m.Append("", &matched), "");
    EXPECT_EQ(m.Append("STOP \xC3\xA9", &matched), "STOP \xC3\xA9");
    EXPECT_TRUE(matched.empty());
    EXPECT_EQ(m.Flush(), "");
  }
}

TEST(StopMatcher, EmptyStopStringsAreIgnored) {
  StopMatcher m({"", "zz"});
  EXPECT_TRUE(m.active());
  std::string matched;
  EXPECT_EQ(m.Append("abz", &matched), "ab");
  EXPECT_EQ(m.Append("z", &matched), "");
  EXPECT_EQ(matched, "zz");
}

const char kUtf8Text[] =
    "caf\xC3\xA9 \xE2\x80\x94 \xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E \xF0\x9F\x98\x80 na\xC3\xAF"
    "ve \xC3\xA9t\xC3\xA9! \xF0\x9F\x98\x80\xF0\x9F\x98\x81 end";

// Fed whole characters, every emitted piece is whole characters, including around held tails
// whose stop strings are themselves multi-byte.
TEST(StopMatcher, Utf8CodePointPiecesStayValid) {
  const std::vector<std::string> stops = {"\xC3\xA9t\xC3\xA9?", "\xF0\x9F\x98\x80\xF0\x9F\x98\x82",
                                          "zz"};
  StopMatcher m(stops);
  Fed f = Feed(m, CodePoints(kUtf8Text));
  EXPECT_TRUE(f.matched.empty());
  for (size_t i = 0; i < f.pieces.size(); ++i) EXPECT_TRUE(ValidUtf8(f.pieces[i])) << "piece " << i;
  EXPECT_EQ(f.text + m.Flush(), kUtf8Text);
}

TEST(StopMatcher, Utf8BytesWithMultiByteStopMatch) {
  // A stop made of multi-byte characters, completed byte by byte.
  StopMatcher m({"\xE6\x9C\xAC\xE8\xAA\x9E"});
  Fed f = Feed(m, Bytes(kUtf8Text));
  EXPECT_EQ(f.matched, "\xE6\x9C\xAC\xE8\xAA\x9E");
  EXPECT_EQ(f.text, "caf\xC3\xA9 \xE2\x80\x94 \xE6\x97\xA5");
  EXPECT_TRUE(ValidUtf8(f.text));
}

// A stop string that starts with a continuation byte (not valid UTF-8 on its own) can make the
// held tail start inside a character; the cut then moves back to the character's first byte.
TEST(StopMatcher, HeldTailStartingMidCharacterHoldsTheWholeCharacter) {
  StopMatcher m({"\xA9!"});
  std::string matched;
  EXPECT_EQ(m.Append("caf\xC3\xA9", &matched), "caf");
  EXPECT_EQ(m.Append("?", &matched), "\xC3\xA9?");
  EXPECT_TRUE(matched.empty());
}

// Fed byte by byte, no emitted piece splits a character: an incomplete character at the end of
// the held text is held back too. (Regression: "\xC3" used to be emitted alone, then "\xA9".)
TEST(StopMatcher, Utf8BytesNeverSplitAcrossPieces) {
  StopMatcher m({"zz"});
  Fed f = Feed(m, Bytes(kUtf8Text));
  EXPECT_TRUE(f.matched.empty());
  int invalid = 0;
  std::string first_bad;
  for (const std::string& p : f.pieces) {
    if (!ValidUtf8(p) && invalid++ == 0) first_bad = p;
  }
  EXPECT_EQ(invalid, 0) << "first invalid piece has " << first_bad.size() << " byte(s), 0x"
                        << std::hex << int(uint8_t(first_bad.empty() ? 0 : first_bad[0]));
  EXPECT_EQ(f.text + m.Flush(), kUtf8Text);  // nothing lost either way
}

}  // namespace
}  // namespace brisk
