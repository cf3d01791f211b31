// The byte-level matcher and the token trie against references written independently: UTF-8
// sequences against a plain encoder over every code point, grammars against hand-checked
// strings, the trie walk against asking the matcher token by token.
#include "structured/matcher.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "structured/compiled_grammar.h"
#include "structured/token_trie.h"
#include "utf8_reference.h"

namespace brisk::structured {
namespace {

std::string Utf8(uint32_t c) { return test::Utf8Reference(c); }

bool SequencesTake(const std::vector<std::vector<std::pair<uint8_t, uint8_t>>>& seqs,
                   const std::string& bytes) {
  int hits = 0;
  for (const auto& seq : seqs) {
    if (seq.size() != bytes.size()) continue;
    bool all = true;
    for (size_t i = 0; i < seq.size(); ++i)
      all = all && uint8_t(bytes[i]) >= seq[i].first && uint8_t(bytes[i]) <= seq[i].second;
    hits += all;
  }
  EXPECT_LE(hits, 1) << "sequences overlap";
  return hits == 1;
}

TEST(Utf8RangeSequences, CoverExactlyTheRangeOverEveryCodePoint) {
  const std::pair<uint32_t, uint32_t> ranges[] = {
      {0, 0x10FFFF},      {0x41, 0x5A},     {0x7F, 0x80},     {0x7FF, 0x800},
      {0x3B1, 0x3C9},     {0xFFF, 0x1001},  {0xD7FF, 0xE000}, {0xFFFF, 0x10000},
      {0x1F600, 0x1F64F}, {0x80, 0x10FFFF}, {0xA0, 0x2FFF}};
  for (auto [lo, hi] : ranges) {
    const auto seqs = Utf8RangeSequences(lo, hi);
    for (uint32_t c = 0; c <= kMaxCodePoint; ++c) {
      const bool surrogate = c >= 0xD800 && c <= 0xDFFF;
      const bool in = c >= lo && c <= hi && !surrogate;
      if (surrogate) continue;
      ASSERT_EQ(SequencesTake(seqs, Utf8(c)), in)
          << std::hex << "U+" << c << " in " << lo << "-" << hi;
    }
  }
}

Symbol Chars(std::vector<CharRange> r) { return Symbol{std::move(r), -1}; }
Symbol Lit(char c) { return Symbol::Char(uint32_t(uint8_t(c))); }

// root ::= "a" root "b" | ""  (balanced a^n b^n: needs the stack)
Grammar Balanced() {
  Grammar g;
  g.rules = {{"root", {{Lit('a'), Symbol::Ref(0), Lit('b')}, {}}}};
  return g;
}

// root ::= word ("," word)*   word ::= [α-ω]+ | "é"
Grammar GreekList() {
  Grammar g;
  const Symbol greek = Chars({{0x3B1, 0x3C9}});
  g.rules = {
      {"root", {{Symbol::Ref(1), Symbol::Ref(2)}}},
      {"word", {{greek, Symbol::Ref(3)}, {Symbol::Char(0xE9)}}},
      {"rest", {{Lit(','), Symbol::Ref(1), Symbol::Ref(2)}, {}}},
      {"more", {{greek, Symbol::Ref(3)}, {}}},
  };
  return g;
}

// root ::= "\"" [^"\\]* "\""  over every code point
Grammar AnyString() {
  Grammar g;
  const Symbol other = Chars({{0, '"' - 1}, {'"' + 1, '\\' - 1}, {'\\' + 1, kMaxCodePoint}});
  g.rules = {{"root", {{Lit('"'), Symbol::Ref(1), Lit('"')}}},
             {"chars", {{other, Symbol::Ref(1)}, {}}}};
  return g;
}

std::shared_ptr<const CompiledGrammar> Compile(const Grammar& g) {
  auto c = CompileGrammar(g);
  EXPECT_TRUE(c.ok()) << c.message();
  return *c;
}

TEST(Matcher, RecognisesNestingThatNeedsTheStack) {
  const auto g = Compile(Balanced());
  for (const char* s : {"", "ab", "aabb", "aaaabbbb"}) EXPECT_TRUE(Matches(g, s)) << s;
  for (const char* s : {"a", "b", "aab", "abb", "ba", "abab"}) EXPECT_FALSE(Matches(g, s)) << s;
}

TEST(Matcher, MultiByteSetsMatchWholeCharactersOnly) {
  const auto g = Compile(GreekList());
  for (const char* s : {"α", "αβγ", "é", "ω,é,αω"}) EXPECT_TRUE(Matches(g, s)) << s;
  for (const char* s : {"", "a", "α,", ",α", "αa", "\xCE", "\xCE\xB1\xCE"})
    EXPECT_FALSE(Matches(g, s)) << s;
}

TEST(Matcher, NegatedSetTakesValidUtf8AndNothingElse) {
  const auto g = Compile(AnyString());
  for (const char* s : {"\"\"", "\"abc\"", "\"日本\"", "\"\xF0\x9F\x98\x80\""})
    EXPECT_TRUE(Matches(g, s)) << s;
  // A quote or backslash inside, a lone continuation byte, an overlong encoding, a surrogate.
  for (const char* s :
       {"\"a\"b\"", "\"\\\"", "\"\x80\"", "\"\xC0\xAF\"", "\"\xED\xA0\x80\"", "\"ab"})
    EXPECT_FALSE(Matches(g, s)) << s;
}

TEST(Matcher, RefusedBytesLeaveThePositionAlone) {
  Matcher m(Compile(Balanced()));
  EXPECT_TRUE(m.CanEnd());
  ASSERT_TRUE(m.Accept("aa"));
  EXPECT_FALSE(m.CanEnd());
  EXPECT_TRUE(m.CanAccept("bb"));
  EXPECT_FALSE(m.Accept("bbb"));  // one too many: refused as a whole
  EXPECT_TRUE(m.Accept("b"));
  EXPECT_FALSE(m.CanEnd());
  Matcher copy = m;
  EXPECT_TRUE(copy.Accept("b"));
  EXPECT_TRUE(copy.CanEnd());
  EXPECT_FALSE(m.CanEnd()) << "a copy advances alone";
}

TEST(Matcher, FinishedWhenNothingCanFollow) {
  Grammar g;
  g.rules = {{"root", {{Lit('o'), Lit('k')}}}};
  Matcher m(Compile(g));
  EXPECT_FALSE(m.Finished());
  ASSERT_TRUE(m.Accept("ok"));
  EXPECT_TRUE(m.CanEnd());
  EXPECT_TRUE(m.Finished());
}

TEST(Matcher, LeftRecursionGivesUpInsteadOfHanging) {
  Grammar g;  // root ::= root "x" | "y"
  g.rules = {{"root", {{Symbol::Ref(0), Lit('x')}, {Lit('y')}}}};
  auto c = CompileGrammar(g);
  ASSERT_TRUE(c.ok());
  Matcher m(*c);
  EXPECT_TRUE(m.overflowed());
  EXPECT_FALSE(m.Accept("y"));
}

TEST(Matcher, BytesToEndFollowsTheStack) {
  Matcher m(Compile(Balanced()));  // a^n b^n
  EXPECT_EQ(m.BytesToEnd(), 0);
  ASSERT_TRUE(m.Accept("aaa"));
  EXPECT_EQ(m.BytesToEnd(), 3) << "bbb";
  ASSERT_TRUE(m.Accept("b"));
  EXPECT_EQ(m.BytesToEnd(), 2);
  Matcher greek(Compile(GreekList()));  // a two-byte character at least
  EXPECT_EQ(greek.BytesToEnd(), 2);
  ASSERT_TRUE(greek.Accept("\xCE"));
  EXPECT_EQ(greek.BytesToEnd(), 1);
  Grammar endless;  // root ::= "x" root: no sentence at all
  endless.rules = {{"root", {{Lit('x'), Symbol::Ref(0)}}}};
  Matcher never(Compile(endless));
  EXPECT_EQ(never.BytesToEnd(), Matcher::kNoBytesToEnd);
  EXPECT_TRUE(never.CanAccept("xxx"));
  EXPECT_EQ(never.PositionBytesToEnd(Matcher::kDead), Matcher::kNoBytesToEnd);
}

TEST(CompileGrammar, RefusesBrokenGrammars) {
  Grammar no_alts;
  no_alts.rules = {{"root", {}}};
  EXPECT_FALSE(CompileGrammar(no_alts).ok());
  Grammar bad_ref;
  bad_ref.rules = {{"root", {{Symbol::Ref(7)}}}};
  EXPECT_FALSE(CompileGrammar(bad_ref).ok());
  Grammar empty_set;
  empty_set.rules = {{"root", {{Chars({})}}}};
  EXPECT_FALSE(CompileGrammar(empty_set).ok());
  Grammar no_root;
  no_root.root = 3;
  EXPECT_FALSE(CompileGrammar(no_root).ok());
}

// A vocabulary with the shapes real ones have: single bytes, shared prefixes, duplicates,
// multi-byte characters, split UTF-8, empty (control) tokens.
std::vector<std::string> RandomVocab(std::mt19937& rng, int n) {
  const std::string alphabet = "ab\",\\\xCE\xB1\xC3\xA9\xE6\x97\xA5";
  std::vector<std::string> v;
  for (int c = 0; c < 256; ++c) v.push_back(std::string(1, char(c)));
  v.push_back("");
  v.push_back("ab");
  v.push_back("ab");
  while (int(v.size()) < n) {
    std::string s;
    const int len = 1 + int(rng() % 6);
    for (int i = 0; i < len; ++i) s += alphabet[rng() % alphabet.size()];
    v.push_back(s);
  }
  return v;
}

// Under a limit, exactly the accepted tokens that leave at most `limit` bytes to the end, and
// the most any of them leaves.
void ExpectBudgetMask(const TokenTrie& trie, const std::vector<std::string>& vocab,
                      const Matcher& m, int32_t limit) {
  std::vector<uint64_t> mask;
  const int32_t most = trie.Allowed(m, &mask, limit);
  int32_t expected_most = -1;
  for (int32_t t = 0; t < int32_t(vocab.size()); ++t) {
    const Matcher::Position p =
        vocab[size_t(t)].empty() ? Matcher::kDead : m.After(vocab[size_t(t)]);
    const bool expected = p != Matcher::kDead && m.PositionBytesToEnd(p) <= limit;
    if (expected) expected_most = std::max(expected_most, m.PositionBytesToEnd(p));
    ASSERT_EQ(bool((mask[size_t(t) >> 6] >> (t & 63)) & 1), expected)
        << "token " << t << " under limit " << limit;
  }
  EXPECT_EQ(most, expected_most);
}

TEST(TokenTrie, AllowsExactlyTheTokensTheMatcherAccepts) {
  std::mt19937 rng(7);
  const std::vector<std::string> vocab = RandomVocab(rng, 3000);
  const TokenTrie trie(vocab);
  ASSERT_EQ(trie.n_tokens(), int(vocab.size()));
  for (const Grammar& g : {Balanced(), GreekList(), AnyString()}) {
    Matcher m(Compile(g));
    for (int step = 0; step < 12; ++step) {
      std::vector<uint64_t> mask;
      trie.Allowed(m, &mask);
      std::vector<int32_t> allowed;
      for (int32_t t = 0; t < int32_t(vocab.size()); ++t) {
        const bool in_mask = (mask[size_t(t) >> 6] >> (t & 63)) & 1;
        const bool expected = !vocab[size_t(t)].empty() && m.CanAccept(vocab[size_t(t)]);
        ASSERT_EQ(in_mask, expected) << "token " << t << " at step " << step;
        if (expected) allowed.push_back(t);
      }
      if (allowed.empty()) break;
      ExpectBudgetMask(trie, vocab, m, int32_t(rng() % 6));
      ASSERT_TRUE(m.Accept(vocab[size_t(allowed[rng() % allowed.size()])]));
    }
  }
}

}  // namespace
}  // namespace brisk::structured
