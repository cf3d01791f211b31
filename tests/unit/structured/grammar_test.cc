// The grammar form and its builder: character-set normalisation, unique names, repetition (its
// language and its nested-tail shape), every check Build makes, ToGbnf's spelling, and the UTF-8
// helpers against a reference encoder over every code point.
#include "structured/grammar.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "structured/gbnf.h"
#include "structured_test_util.h"
#include "utf8_reference.h"

namespace brisk::structured {
namespace {

using test::ExpectLanguage;

Symbol Lit(char c) { return Symbol::Char(uint32_t(uint8_t(c))); }

std::string BuildError(GrammarBuilder&& b, int32_t root) {
  Result<Grammar> g = std::move(b).Build(root);
  EXPECT_FALSE(g.ok());
  if (g.ok()) return "";
  EXPECT_EQ(g.code(), StatusCode::kInvalidArgument);
  return g.message();
}

Grammar MustBuild(GrammarBuilder&& b, int32_t root) {
  Result<Grammar> g = std::move(b).Build(root);
  EXPECT_TRUE(g.ok()) << g.message();
  return g.ok() ? std::move(g).value() : Grammar{};
}

TEST(Symbol, SetSortsMergesAndDropsEmptyRanges) {
  EXPECT_EQ(Symbol::Set({{'m', 'p'}, {'a', 'c'}, {'d', 'f'}, {'b', 'e'}, {'z', 'x'}}).chars,
            (std::vector<CharRange>{{'a', 'f'}, {'m', 'p'}}));
  EXPECT_EQ(Symbol::Set({{5, 5}, {7, 7}, {6, 6}}).chars, (std::vector<CharRange>{{5, 7}}));
  EXPECT_EQ(Symbol::Set({{0x10FFF0, 0xFFFFFFFF}}).chars,
            (std::vector<CharRange>{{0x10FFF0, kMaxCodePoint}}));
  EXPECT_TRUE(Symbol::Set({{0x110000, 0x120000}}).chars.empty());
  EXPECT_FALSE(Symbol::Set({{'a', 'a'}}).is_rule());
}

TEST(Symbol, NotSetIsTheComplement) {
  EXPECT_EQ(Symbol::NotSet({{'"', '"'}, {'\\', '\\'}}).chars,
            (std::vector<CharRange>{{0, '"' - 1}, {'"' + 1, '\\' - 1}, {'\\' + 1, kMaxCodePoint}}));
  EXPECT_EQ(Symbol::NotSet({}).chars, (std::vector<CharRange>{{0, kMaxCodePoint}}));
  EXPECT_TRUE(Symbol::NotSet({{0, kMaxCodePoint}}).chars.empty());
  EXPECT_EQ(Symbol::NotSet({{0, 9}, {kMaxCodePoint, kMaxCodePoint}}).chars,
            (std::vector<CharRange>{{10, kMaxCodePoint - 1}}));
}

TEST(GrammarBuilder, NamesAreMadeUniqueAndFound) {
  GrammarBuilder b;
  const int32_t a = b.NewRule("a");
  const int32_t taken = b.NewRule("a-1");
  const int32_t a2 = b.NewRule("a");
  const int32_t a3 = b.NewRule("a");
  EXPECT_EQ(b.name(a), "a");
  EXPECT_EQ(b.name(taken), "a-1");
  EXPECT_EQ(b.name(a2), "a-2");
  EXPECT_EQ(b.name(a3), "a-3");
  EXPECT_EQ(b.Find("a-2"), a2);
  EXPECT_EQ(b.Find("nope"), -1);
  EXPECT_FALSE(b.defined(a));
  b.Define(a, {{Lit('x')}});
  EXPECT_TRUE(b.defined(a));
  EXPECT_EQ(b.rule_count(), 4);
}

TEST(GrammarBuilder, LiteralDecodesUtf8AndReplacesBadBytes) {
  EXPECT_EQ(GrammarBuilder::Literal("aé😀"),
            (Sequence{Symbol::Char('a'), Symbol::Char(0xE9), Symbol::Char(0x1F600)}));
  EXPECT_EQ(GrammarBuilder::Literal("\xff"
                                    "b\xC3"),
            (Sequence{Symbol::Char(0xFFFD), Symbol::Char('b'), Symbol::Char(0xFFFD)}));
}

// item{min,max} through the matcher.
void ExpectRepeat(Sequence item, int min, int max, std::vector<std::string> accept,
                  std::vector<std::string> reject) {
  GrammarBuilder b;
  Result<int32_t> r = b.Repeat("rep", std::move(item), min, max);
  ASSERT_TRUE(r.ok()) << r.message();
  const std::string what = "{" + std::to_string(min) + "," + std::to_string(max) + "}";
  ExpectLanguage(MustBuild(std::move(b), *r), accept, reject, what);
}

TEST(GrammarBuilder, RepeatMatchesItsBounds) {
  ExpectRepeat({Lit('x')}, 2, 4, {"xx", "xxx", "xxxx"}, {"", "x", "xxxxx"});
  ExpectRepeat({Lit('x')}, 0, -1, {"", "x", "xxxxxxxx"}, {"y", "xy"});
  ExpectRepeat({Lit('x')}, 3, -1, {"xxx", "xxxxxx"}, {"", "xx"});
  ExpectRepeat({Lit('x')}, 0, 0, {""}, {"x"});
  ExpectRepeat({Lit('x')}, 3, 3, {"xxx"}, {"xx", "xxxx"});
  ExpectRepeat({Lit('a'), Lit('b')}, 1, 3, {"ab", "abab", "ababab"}, {"", "a", "aba", "abababab"});
  ExpectRepeat({}, 2, 5, {""}, {"a"});
}

TEST(GrammarBuilder, BoundedRepeatNestsOptionalTails) {
  GrammarBuilder b;
  Result<int32_t> r = b.Repeat("rep", {Lit('x')}, 1, 4);  // x (x (x (x)?)?)?
  ASSERT_TRUE(r.ok());
  const Grammar g = MustBuild(std::move(b), *r);
  ASSERT_EQ(g.rules.size(), 4u);  // the head and three tails
  const Rule& head = g.rules[size_t(*r)];
  ASSERT_EQ(head.alternatives.size(), 1u);
  ASSERT_EQ(head.alternatives[0].size(), 2u);
  int32_t tail = head.alternatives[0][1].rule;
  for (int depth = 0; depth < 3; ++depth) {
    ASSERT_GE(tail, 0);
    const Rule& t = g.rules[size_t(tail)];
    ASSERT_EQ(t.alternatives.size(), 2u) << "one open choice per tail: more or stop";
    EXPECT_TRUE(t.alternatives[1].empty());
    EXPECT_EQ(t.alternatives[0][0], Lit('x'));
    tail = t.alternatives[0].size() == 2 ? t.alternatives[0][1].rule : -1;
  }
  EXPECT_EQ(tail, -1);
}

TEST(GrammarBuilder, RepeatRefusesBadBounds) {
  GrammarBuilder b;
  EXPECT_FALSE(b.Repeat("r", {Lit('x')}, 3, 2).ok());
  EXPECT_FALSE(b.Repeat("r", {Lit('x')}, -1, 2).ok());
  Result<int32_t> big = b.Repeat("r", {Lit('x')}, 0, GrammarLimits::kMaxRepeat + 1);
  ASSERT_FALSE(big.ok());
  EXPECT_NE(big.message().find("exceeds the limit"), std::string::npos) << big.message();
  EXPECT_FALSE(b.Repeat("r", {Lit('x')}, GrammarLimits::kMaxRepeat + 1, -1).ok());
  EXPECT_TRUE(b.Repeat("r", {Lit('x')}, 0, GrammarLimits::kMaxRepeat).ok());
  EXPECT_EQ(b.rule_count(), GrammarLimits::kMaxRepeat + 1) << "failed repeats add nothing";
}

TEST(GrammarBuilder, RepeatsPastTheRuleLimitFailBeforeAllocating) {
  GrammarBuilder b;
  const auto start = std::chrono::steady_clock::now();
  Status failed;
  for (int i = 0; i < 1000 && failed.ok(); ++i)
    failed = b.Repeat("r", {Lit('x')}, 0, GrammarLimits::kMaxRepeat).status();
  EXPECT_NE(failed.message().find("too large"), std::string::npos) << failed.message();
  EXPECT_LE(b.rule_count(), GrammarLimits::kMaxRules);
  EXPECT_LT(test::SecondsSince(start), test::kNoHangSeconds);
}

TEST(GrammarBuild, RefusesAnUndefinedRule) {
  GrammarBuilder b;
  const int32_t root = b.AddRule("root", {{Symbol::Ref(b.NewRule("value"))}});
  EXPECT_NE(BuildError(std::move(b), root).find("'value' is used but never defined"),
            std::string::npos);
}

TEST(GrammarBuild, RefusesARuleWithoutAlternatives) {
  GrammarBuilder b;
  const int32_t root = b.AddRule("root", {});
  EXPECT_NE(BuildError(std::move(b), root).find("'root' has no alternatives"), std::string::npos);
}

TEST(GrammarBuild, RefusesAnEmptyCharacterSet) {
  GrammarBuilder b;
  const int32_t root = b.AddRule("root", {{Lit('a'), Symbol::Set({})}});
  EXPECT_NE(BuildError(std::move(b), root).find("'root' has an empty character set"),
            std::string::npos);
  GrammarBuilder b2;  // a set only out-of-range code points: empty after normalising
  const int32_t root2 = b2.AddRule("root", {{Symbol{{{0x200000, 0x300000}}, -1}}});
  EXPECT_NE(BuildError(std::move(b2), root2).find("empty character set"), std::string::npos);
}

TEST(GrammarBuild, RefusesBadRootAndDanglingReferences) {
  GrammarBuilder b;
  b.AddRule("root", {{Symbol::Ref(7)}});
  EXPECT_NE(BuildError(std::move(b), 0).find("does not exist"), std::string::npos);
  GrammarBuilder b2;
  b2.AddRule("root", {{Lit('a')}});
  EXPECT_NE(BuildError(std::move(b2), 3).find("no root rule"), std::string::npos);
}

TEST(GrammarBuild, RefusesDirectLeftRecursion) {
  GrammarBuilder b;  // expr ::= expr "+" "x" | "x"
  const int32_t expr = b.NewRule("expr");
  b.Define(expr, {{Symbol::Ref(expr), Lit('+'), Lit('x')}, {Lit('x')}});
  EXPECT_NE(BuildError(std::move(b), expr).find("'expr' is left-recursive (expr -> expr"),
            std::string::npos);
}

TEST(GrammarBuild, RefusesLeftRecursionThroughOtherRules) {
  GrammarBuilder b;  // a ::= b "x" ; b ::= c | "y" ; c ::= a "z"
  const int32_t a = b.NewRule("a"), r_b = b.NewRule("b"), c = b.NewRule("c");
  b.Define(a, {{Symbol::Ref(r_b), Lit('x')}});
  b.Define(r_b, {{Symbol::Ref(c)}, {Lit('y')}});
  b.Define(c, {{Symbol::Ref(a), Lit('z')}});
  const std::string message = BuildError(std::move(b), a);
  EXPECT_NE(message.find("a -> b -> c -> a"), std::string::npos) << message;
}

TEST(GrammarBuild, RefusesLeftRecursionBehindNullablePrefixes) {
  GrammarBuilder b;  // root ::= opt ws root "x" | "y" ; opt ::= "" | "o" ; ws ::= " "*
  const int32_t root = b.NewRule("root"), opt = b.NewRule("opt");
  Result<int32_t> ws = b.Repeat("ws", {Lit(' ')}, 0, -1);
  ASSERT_TRUE(ws.ok());
  b.Define(root, {{Symbol::Ref(opt), Symbol::Ref(*ws), Symbol::Ref(root), Lit('x')}, {Lit('y')}});
  b.Define(opt, {{}, {Lit('o')}});
  EXPECT_NE(BuildError(std::move(b), root).find("'root' is left-recursive"), std::string::npos);
}

TEST(GrammarBuild, AcceptsRecursionAfterACharacter) {
  GrammarBuilder b;  // list ::= "[" (item ("," item)*)? "]" ; item ::= "x" | list
  const int32_t list = b.NewRule("list"), item = b.NewRule("item");
  Result<int32_t> more = b.Repeat("more", {Lit(','), Symbol::Ref(item)}, 0, -1);
  ASSERT_TRUE(more.ok());
  b.Define(list,
           {{Lit('['), Symbol::Ref(item), Symbol::Ref(*more), Lit(']')}, {Lit('['), Lit(']')}});
  b.Define(item, {{Lit('x')}, {Symbol::Ref(list)}});
  ExpectLanguage(MustBuild(std::move(b), list), {"[]", "[x]", "[x,[x,[]],x]"},
                 {"", "[", "[x,]", "x"}, "nested lists");
}

TEST(GrammarBuild, RefusesGrammarsPastTheLimits) {
  GrammarBuilder b;
  for (int i = 0; i <= GrammarLimits::kMaxRules; ++i) b.AddRule("r", {{Lit('a')}});
  EXPECT_NE(BuildError(std::move(b), 0).find("more than 100000 rules"), std::string::npos);
  GrammarBuilder b2;
  const int32_t root = b2.AddRule("root", {Sequence(GrammarLimits::kMaxSymbols + 1, Lit('a'))});
  EXPECT_NE(BuildError(std::move(b2), root).find("more than 1000000 symbols"), std::string::npos);
}

TEST(GrammarBuild, NormalisesCharacterSetsFilledInDirectly) {
  GrammarBuilder b;
  const int32_t root = b.AddRule("root", {{Symbol{{{'x', 'z'}, {'a', 'c'}, {'b', 'd'}}, -1}}});
  const Grammar g = MustBuild(std::move(b), root);
  EXPECT_EQ(g.rules[0].alternatives[0][0].chars, (std::vector<CharRange>{{'a', 'd'}, {'x', 'z'}}));
}

TEST(ToGbnf, WritesReadableGbnf) {
  GrammarBuilder b;
  const int32_t item = b.NewRule("item name");  // not a GBNF name: sanitised
  const int32_t root = b.AddRule(
      "start", {{Lit('"'), Lit('\\'), Lit('\n'), Symbol::Char(0xE9), Symbol::Ref(item)},
                {Symbol::NotSet({{'"', '"'}, {'\\', '\\'}})},
                {Symbol::Set({{'a', 'z'}, {'-', '-'}, {'^', '^'}, {']', ']'}, {0x01, 0x01}})},
                {Symbol::NotSet({})},
                {}});
  b.Define(item, {{Symbol::Ref(b.AddRule("root", {{Lit('r')}}))}});
  const Grammar g = MustBuild(std::move(b), root);
  EXPECT_EQ(ToGbnf(g),
            "root ::= \"\\\"\\\\\\né\" item-name | [^\"\\\\] | [\\x01\\x2D\\]\\x5Ea-z] | . | \"\"\n"
            "item-name ::= root-1\n"
            "root-1 ::= \"r\"\n");
}

TEST(ToGbnf, ParsesBackToTheSameLanguage) {
  GrammarBuilder b;
  const int32_t root = b.NewRule("root");
  Result<int32_t> digits = b.Repeat("digits", {Symbol::Set({{'0', '9'}})}, 1, 3);
  ASSERT_TRUE(digits.ok());
  b.Define(root, {{Symbol::Ref(*digits), Symbol::NotSet({{'0', '9'}, {'\n', '\n'}}),
                   Symbol::Set({{0x1F600, 0x1F64F}, {'-', '-'}, {'[', ']'}})},
                  {Lit('('), Symbol::Ref(root), Lit(')')}});
  const Grammar g = MustBuild(std::move(b), root);
  Result<Grammar> again = ParseGbnf(ToGbnf(g));
  ASSERT_TRUE(again.ok()) << again.message() << "\n" << ToGbnf(g);
  const std::vector<std::string> accept = {"1x😀", "123é-", "((9 [))", "42\\]"};
  const std::vector<std::string> reject = {"1", "1234x-", "1\n-", "1x😀)", "(1x-"};
  ExpectLanguage(g, accept, reject, "built");
  ExpectLanguage(*again, accept, reject, "written and read back");
}

using test::Utf8Reference;

TEST(Utf8, RoundTripsEveryScalarValue) {
  for (uint32_t c = 0; c <= kMaxCodePoint; ++c) {
    if (c >= 0xD800 && c <= 0xDFFF) continue;
    std::string s;
    AppendUtf8(c, &s);
    ASSERT_EQ(s, Utf8Reference(c)) << std::hex << c;
    size_t i = 0;
    ASSERT_EQ(DecodeUtf8(s, &i), c) << std::hex << c;
    ASSERT_EQ(i, s.size());
  }
}

TEST(Utf8, InvalidInputGivesReplacementAndAdvancesOneByte) {
  for (const char* bad : {"\x80", "\xC0\xAF", "\xE0\x80\xAF", "\xED\xA0\x80", "\xF4\x90\x80\x80",
                          "\xF8\x88\x80\x80\x80", "\xC3", "\xE6\x97", "\xFF"}) {
    size_t i = 0;
    EXPECT_EQ(DecodeUtf8(bad, &i), 0xFFFDu) << bad;
    EXPECT_EQ(i, 1u);
  }
  std::string s;
  AppendUtf8(0xD800, &s);
  AppendUtf8(0x110000, &s);
  EXPECT_EQ(s, "\xEF\xBF\xBD\xEF\xBF\xBD");
}

}  // namespace
}  // namespace brisk::structured
