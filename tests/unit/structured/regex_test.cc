// Regular expressions as grammars: the regex.jsonl corpus (each expectation checked against
// JavaScript's RegExp when it was written), anchoring, JSON escaping, the rewriting of
// repetitions over patterns that match "", every refused construct with its offset, and hostile
// patterns that must fail fast.
#include "structured/regex.h"

#include <gtest/gtest.h>
#include <pthread.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "structured/regex_ast.h"
#include "structured_test_util.h"
#include "test_paths.h"

namespace brisk::structured {
namespace {

using test::ExpectLanguage;

Grammar MustCompileRegex(const std::string& pattern, RegexOptions options = {}) {
  GrammarBuilder b;
  Result<int32_t> root = AddRegex(b, pattern, "re", options);
  EXPECT_TRUE(root.ok()) << pattern << ": " << root.message();
  if (!root.ok()) return Grammar{};
  Result<Grammar> g = std::move(b).Build(*root);
  EXPECT_TRUE(g.ok()) << pattern << ": " << g.message();
  return g.ok() ? std::move(g).value() : Grammar{};
}

std::string RegexError(const std::string& pattern) {
  Result<Grammar> g = CompileRegex(pattern);
  EXPECT_FALSE(g.ok()) << "should be refused: " << pattern;
  if (g.ok()) return "";
  EXPECT_EQ(g.code(), StatusCode::kInvalidArgument);
  return g.message();
}

TEST(RegexCorpus, EveryPatternAcceptsAndRejectsItsExamples) {
  std::ifstream in(brisk::test::DataPath("structured/regex.jsonl"));
  int patterns = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    const nlohmann::json e = nlohmann::json::parse(line);
    const std::string pattern = e.at("pattern").get<std::string>();
    Result<Grammar> g = CompileRegex(pattern);
    ASSERT_TRUE(g.ok()) << pattern << ": " << g.message();
    ExpectLanguage(*g, e.at("accept").get<std::vector<std::string>>(),
                   e.at("reject").get<std::vector<std::string>>(), pattern);
    ++patterns;
  }
  EXPECT_GE(patterns, 50);
}

TEST(Regex, UnanchoredPatternsMatchAnywhereUnlessAnchored) {
  const RegexOptions loose{.anchored = false};
  ExpectLanguage(MustCompileRegex("ab+c", loose), {"abc", "xxabbcyy", "\nabc\n"},
                 {"", "ac", "xxabyy"}, "ab+c");
  ExpectLanguage(MustCompileRegex("^ab", loose), {"ab", "abzz"}, {"xab", " ab"}, "^ab");
  ExpectLanguage(MustCompileRegex("ab$", loose), {"ab", "zzab"}, {"abx", "ab\n"}, "ab$");
  ExpectLanguage(MustCompileRegex("^(?:ab)$", loose), {"ab"}, {"xab", "abx"}, "^(?:ab)$");
  ExpectLanguage(MustCompileRegex("^a|b$", loose), {"a", "ax", "b", "xb"}, {"xa", "bx", ""},
                 "^a|b$");
  ExpectLanguage(MustCompileRegex("(^a|^b)c", loose), {"ac", "bcx"}, {"xac", "cc"}, "(^a|^b)c");
  ExpectLanguage(MustCompileRegex("^$", loose), {""}, {"a"}, "^$");
  ExpectLanguage(MustCompileRegex("^\\d+$"), {"12"}, {"", "1a"}, "anchors are no-ops anchored");
}

TEST(Regex, JsonEscapeSpellsCharactersAsInsideAJsonString) {
  const RegexOptions json{.json_escape = true};
  ExpectLanguage(MustCompileRegex("[^\"]+", json),
                 {"abc", "a\\\\b", "\\n", "\\t\\b\\f\\r", "\\u0001\\u001f", "é😀", "/"},
                 {"\"", "\\\"", "a\nb", "\\u000a", "\\u0001\\u001F", "\\/", "\\", "\\x"}, "[^\"]+");
  ExpectLanguage(MustCompileRegex("a\"b\\\\c", json), {"a\\\"b\\\\c"}, {"a\"b\\c", "a\"b\\\\c"},
                 "quote and backslash");
  ExpectLanguage(MustCompileRegex("\\n\\x7f.", json),
                 {"\\n\x7f"
                  "a",
                  "\\n\x7f\\u0000"},
                 {"\n\x7f"
                  "a",
                  "\\n\\u007f"
                  "a",
                  "\\n\x7f\\n"},
                 "newline and DEL");
  const RegexOptions loose_json{.anchored = false, .json_escape = true};
  ExpectLanguage(MustCompileRegex("x", loose_json), {"x", "\\\"x\\n"}, {"\"x", "\nx"},
                 "unanchored");
}

TEST(Regex, RepetitionsOfPatternsMatchingEmptyStayWellFormed) {
  // Each would be left-recursive if the repetition were written over the empty-matching item.
  const std::pair<const char*, std::vector<std::vector<std::string>>> cases[] = {
      {"(a?)*", {{"", "a", "aaa"}, {"b", "ab"}}},
      {"(a|)+b", {{"b", "ab", "aab"}, {"", "a", "bb"}}},
      {"(a*)*", {{"", "aaaa"}, {"b"}}},
      {"(a*b*)*c", {{"c", "abc", "bac", "bbaac"}, {"", "ab", "cc"}}},
      {"(?:)*x", {{"x"}, {"", "xx"}}},
      {"(a?b?c?){2}", {{"", "abc", "abcabc", "ca", "acb"}, {"abcabca", "d"}}},
      {"(a?b?){0,2}", {{"", "ab", "abab", "ba"}, {"aaa", "ababa"}}},
      {"((a?){2}b?)+", {{"", "aab", "baab", "aaa", "bbb"}, {"c"}}},
  };
  for (const auto& [pattern, examples] : cases)
    ExpectLanguage(MustCompileRegex(pattern), examples[0], examples[1], pattern);
}

TEST(RegexErrors, RefusedConstructsNameTheirOffset) {
  const std::pair<const char*, const char*> cases[] = {
      {"(a)\\1", "regex offset 3: backreference \\1"},
      {"(?<n>a)\\k<n>", "regex offset 7: backreference \\k"},
      {"a(?=b)", "regex offset 1: lookahead"},
      {"a(?!b)", "regex offset 1: lookahead"},
      {"(?<=a)b", "regex offset 0: lookbehind"},
      {"(?<!a)b", "regex offset 0: lookbehind"},
      {"\\bword", "regex offset 0: word boundary \\b"},
      {"a\\B", "regex offset 1: non-word-boundary \\B"},
      {"(?i)abc", "regex offset 0: inline flags"},
      {"(?i:abc)", "regex offset 0: inline flags"},
      {"\\p{L}+", "regex offset 0: Unicode property escapes"},
      {"a\\08", "regex offset 1: octal escapes"},
      {"a**", "regex offset 2: nothing to repeat"},
      {"a{2}{3}", "regex offset 4: nothing to repeat"},
      {"*a", "regex offset 0: nothing to repeat"},
      {"a|?", "regex offset 2: nothing to repeat"},
      {"{2}", "regex offset 0: nothing to repeat"},
      {"^*", "regex offset 1: nothing to repeat"},
      {"a{3,2}", "regex offset 1: numbers out of order"},
      {"a{10001}", "regex offset 1: repetition bound exceeds the limit of 10000"},
      {"x{0,99999999999999999999}", "regex offset 1: repetition bound exceeds"},
      {"[z-a]", "regex offset 1: range out of order"},
      {"[\\d-z]", "regex offset 1: a class escape"},
      {"[]", "regex offset 0: character class matches nothing"},
      {"[abc", "regex offset 0: character class is not closed"},
      {"ab(c", "regex offset 2: group is not closed"},
      {"abc)", "regex offset 3: ')' without a matching '('"},
      {"a^b", "regex offset 1: anchor '^' is supported only"},
      {"a$b", "regex offset 1: anchor '$' is supported only"},
      {"(^a)*", "regex offset 1: anchor '^' is supported only"},
      {"(^a|b)c", "anchor '^' on only some alternatives"},
      {"\\q", "regex offset 0: unknown escape \\q"},
      {"ab\\", "regex offset 2: the pattern ends with a lone '\\'"},
      {"\\x4g", "regex offset 0: escape expects 2 hex digits"},
      {"\\u{110000}", "regex offset 0: \\u{...} above U+10FFFF"},
      {"\\cé", "regex offset 0: \\c expects a letter"},
      {"(?<>a)", "regex offset 0: group name"},
      {"ab\xff", "regex byte 2: invalid UTF-8"},
      {"é\xC3", "regex byte 2: invalid UTF-8"},
  };
  for (const auto& [pattern, expected] : cases) {
    const std::string message = RegexError(pattern);
    EXPECT_NE(message.find(expected), std::string::npos)
        << "pattern: " << pattern << "\nmessage: " << message << "\nexpected: " << expected;
  }
}

TEST(RegexHostile, DeepNestingIsRefusedQuickly) {
  const auto start = std::chrono::steady_clock::now();
  const std::string deep = std::string(10000, '(') + "a" + std::string(10000, ')');
  EXPECT_NE(RegexError(deep).find("groups nest deeper than"), std::string::npos);
  const std::string deep_class = std::string(10000, '[');  // no nesting: one unclosed class
  EXPECT_NE(RegexError(deep_class).find("not closed"), std::string::npos);
  const size_t ok = size_t(kMaxRegexNesting - 1);
  ExpectLanguage(MustCompileRegex(std::string(ok, '(') + "a" + std::string(ok, ')') + "*"),
                 {"", "aa"}, {"b"}, "nested groups");
  EXPECT_LT(test::SecondsSince(start), test::kNoHangSeconds);
}

TEST(RegexHostile, HugeRepetitionsFailFastOrStaySmall) {
  const auto start = std::chrono::steady_clock::now();
  std::string many;
  for (int i = 0; i < 20; ++i) many += "a{0,10000}";
  EXPECT_NE(RegexError(many).find("too large"), std::string::npos);
  // Nested bounds multiply the language, not the grammar: one symbol per copy.
  Result<Grammar> nested = CompileRegex("((a{0,3000}){0,3000}){0,3000}");
  ASSERT_TRUE(nested.ok()) << nested.message();
  EXPECT_LT(nested->rules.size(), 10000u);
  Result<Grammar> long_literal = CompileRegex(std::string(200000, 'x'));
  ASSERT_TRUE(long_literal.ok()) << long_literal.message();
  EXPECT_LT(test::SecondsSince(start), test::kNoHangSeconds);
}

// Runs `fn` on a thread with a 1 MiB stack (an overflow crashes the test).
void RunOnSmallStack(std::function<void()> fn) {
  pthread_attr_t attr;
  ASSERT_EQ(pthread_attr_init(&attr), 0);
  ASSERT_EQ(pthread_attr_setstacksize(&attr, size_t{1} << 20), 0);
  pthread_t thread;
  auto body = [](void* arg) -> void* {
    (*static_cast<std::function<void()>*>(arg))();
    return nullptr;
  };
  ASSERT_EQ(pthread_create(&thread, &attr, body, &fn), 0);
  pthread_join(thread, nullptr);
  pthread_attr_destroy(&attr);
}

TEST(RegexHostile, EmptyMatchingRepetitionsNestedOrWideStayLinear) {
  const auto start = std::chrono::steady_clock::now();
  // Each level shares the level below between two rewritten alternatives: without sharing,
  // the grammar would double per level. (The language is checked on a shallow copy: deep ones
  // are ambiguous past what the matcher tracks.)
  auto nest = [](int depth) {
    std::string p = "a?";
    for (int i = 0; i < depth; ++i) p = "(b?" + p + ")*";
    return p;
  };
  Result<Grammar> g = CompileRegex(nest(kMaxRegexNesting - 2));
  ASSERT_TRUE(g.ok()) << g.message();
  EXPECT_LT(g->rules.size(), 20u * size_t(kMaxRegexNesting));
  ExpectLanguage(MustCompileRegex(nest(4)), {"", "ab", "bbaab"}, {"c", "abc"}, "nested");
  // Many empty-matching items under one repetition: long chains of shared suffixes, compiled
  // on a 1 MiB stack (patterns arrive on server threads): recursing once per item would not fit.
  std::string wide = "(";
  for (int i = 0; i < 20000; ++i) wide += "a?";
  bool wide_ok = false;
  RunOnSmallStack([&] { wide_ok = CompileRegex(wide + ")*").ok(); });
  EXPECT_TRUE(wide_ok);
  std::string narrow = "(";
  for (int i = 0; i < 30; ++i) narrow += i % 2 ? "a?" : "b*";
  ExpectLanguage(MustCompileRegex(narrow + ")+"), {"", "ab", "bbbaab"}, {"c"}, "narrow");
  EXPECT_LT(test::SecondsSince(start), test::kNoHangSeconds);
}

// Repetitions are right-recursive rules; long outputs must not grow the matcher's stacks (an
// unanchored pattern is any-string on both sides, ambiguous at every occurrence).
TEST(RegexMatching, LongTextsMatchInLinearTime) {
  const auto start = std::chrono::steady_clock::now();
  const Grammar loose = MustCompileRegex("a", {.anchored = false});
  EXPECT_TRUE(Matches(*CompileGrammar(loose), std::string(20000, 'a')));
  const Grammar words = MustCompileRegex("(?:[a-z]+ ?)*");
  EXPECT_TRUE(Matches(*CompileGrammar(words), std::string(20000, 'x')));
  const Grammar quoted = MustCompileRegex("\"[^\"]*\"");
  EXPECT_TRUE(Matches(*CompileGrammar(quoted), "\"" + std::string(100000, 'q') + "\""));
  EXPECT_LT(test::SecondsSince(start), test::kNoHangSeconds);
}

}  // namespace
}  // namespace brisk::structured
