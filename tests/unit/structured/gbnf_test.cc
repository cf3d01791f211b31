// GBNF reading: the corpus (llama.cpp's own grammars plus ours, each with examples that must and
// must not match), the syntax corner by corner, every error with its line and column, and hostile
// inputs that must fail fast instead of crashing or hanging.
#include "structured/gbnf.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "structured_test_util.h"
#include "test_paths.h"

namespace brisk::structured {
namespace {

namespace fs = std::filesystem;
using test::ExpectLanguage;
using test::ReadExamples;
using test::ReadFile;

std::string CorpusDir() { return brisk::test::DataPath("structured/gbnf"); }

std::vector<std::string> CorpusNames() {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(CorpusDir()))
    if (e.path().extension() == ".gbnf") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

struct Example {
  std::vector<std::string> accept, reject;
};

Example ExamplesOf(const std::string& name) {
  const std::string base = CorpusDir() + "/" + name;
  return {ReadExamples(base + ".accept.txt"), ReadExamples(base + ".reject.txt")};
}

Grammar MustParse(const std::string& text) {
  Result<Grammar> g = ParseGbnf(text);
  EXPECT_TRUE(g.ok()) << g.message() << "\n" << text;
  return g.ok() ? std::move(g).value() : Grammar{};
}

// The error ParseGbnf gives for `text` (failing the test when it parses).
std::string ErrorOf(const std::string& text) {
  Result<Grammar> g = ParseGbnf(text);
  EXPECT_FALSE(g.ok()) << "should not parse:\n" << text;
  if (g.ok()) return "";
  EXPECT_EQ(g.code(), StatusCode::kInvalidArgument);
  return g.message();
}

TEST(GbnfCorpus, HoldsFiftyGrammarsEachWithThreeExamplesBothWays) {
  const std::vector<std::string> names = CorpusNames();
  EXPECT_GE(names.size(), 50u);
  for (const char* llama : {"json", "arithmetic", "list", "chess"})
    EXPECT_NE(std::find(names.begin(), names.end(), llama), names.end()) << llama;
  for (const std::string& name : names) {
    const Example ex = ExamplesOf(name);
    EXPECT_GE(ex.accept.size(), 3u) << name;
    EXPECT_GE(ex.reject.size(), 3u) << name;
  }
}

TEST(GbnfCorpus, EveryGrammarParsesAndItsExamplesHold) {
  for (const std::string& name : CorpusNames()) {
    Result<Grammar> g = ParseGbnf(ReadFile(CorpusDir() + "/" + name + ".gbnf"));
    ASSERT_TRUE(g.ok()) << name << ": " << g.message();
    const Example ex = ExamplesOf(name);
    ExpectLanguage(*g, ex.accept, ex.reject, name);
  }
}

// The shortest completion by breadth-first search over bytes (up to max_depth; -1 beyond, or
// when the search grows past its bound): an independent check of the matcher's BytesToEnd.
int ShortestCompletionBySearch(const Matcher& m, int max_depth) {
  std::vector<Matcher::Position> frontier = {m.position()};
  std::set<Matcher::Position> seen(frontier.begin(), frontier.end());
  for (int depth = 0; depth <= max_depth && !frontier.empty(); ++depth) {
    std::vector<Matcher::Position> next;
    for (Matcher::Position p : frontier) {
      if (m.PositionCanEnd(p)) return depth;
      for (int b = 0; b < 256; ++b) {
        const Matcher::Position q = m.Step(p, uint8_t(b));
        if (q != Matcher::kDead && seen.insert(q).second) next.push_back(q);
      }
    }
    if (seen.size() > 20000) return -1;
    frontier.swap(next);
  }
  return -1;
}

TEST(GbnfCorpus, BytesToEndIsTheShortestCompletion) {
  constexpr int kDepth = 24;
  int checked = 0;
  for (const std::string& name : CorpusNames()) {
    auto g = CompileGrammar(MustParse(ReadFile(CorpusDir() + "/" + name + ".gbnf")));
    ASSERT_TRUE(g.ok()) << name;
    for (const std::string& text : ExamplesOf(name).accept) {
      Matcher m(*g);
      for (size_t i = 0; i <= text.size(); i += 1 + text.size() / 16) {
        Matcher at = m;
        ASSERT_TRUE(at.Accept(text.substr(0, i))) << name;
        const int by_search = ShortestCompletionBySearch(at, kDepth);
        if (by_search < 0) continue;
        EXPECT_EQ(at.BytesToEnd(), by_search)
            << name << " after " << nlohmann::json(text.substr(0, i)).dump();
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 1000);
}

TEST(GbnfCorpus, ToGbnfThenParseKeepsTheLanguage) {
  for (const std::string& name : CorpusNames()) {
    Result<Grammar> g = ParseGbnf(ReadFile(CorpusDir() + "/" + name + ".gbnf"));
    ASSERT_TRUE(g.ok()) << name << ": " << g.message();
    const std::string text = ToGbnf(*g);
    Result<Grammar> again = ParseGbnf(text);
    ASSERT_TRUE(again.ok()) << name << ": " << again.message() << "\n" << text;
    const Example ex = ExamplesOf(name);
    ExpectLanguage(*again, ex.accept, ex.reject, name + " (written back)");
  }
}

TEST(Gbnf, ReadsLiteralsEscapesAndClasses) {
  const Grammar g = MustParse(R"(root ::= "\x41\u00e9\U0001F600" [\t\n\r] "\\\"\[\]" [^a-z] .)");
  ExpectLanguage(g, {"Aé😀\t\\\"[]A\n", "Aé😀\n\\\"[]😀x", "Aé😀\r\\\"[]\né"},
                 {"Aé😀 \\\"[]Ax", "Aé😀\t\\\"[]ax", "Aé😀\t\\\"[]A", "Aé😀\t\\\"[]Axy"}, "escapes");
}

TEST(Gbnf, DashAtAClassEdgeIsLiteral) {
  ExpectLanguage(MustParse("root ::= [a-] [-b] [+--]"), {"a-+", "--,", "-b-"},
                 {"b-+", "aa+", "a-."}, "dash");
}

TEST(Gbnf, AnyCharacterIncludesNewlinesAndMultiByte) {
  ExpectLanguage(MustParse("root ::= \"<\" . \">\""), {"<a>", "<\n>", "<日>", "<😀>"},
                 {"<>", "<ab>", "<\xE6>"}, "dot");
}

TEST(Gbnf, RepetitionForms) {
  const Grammar g = MustParse(
      "root ::= \"a\"{3} \"-\" \"b\"{2,} \"-\" \"c\"{1,3} \"-\" \"d\"{0,2} \"-\" \"ef\"{ 1 , 2 }");
  ExpectLanguage(g, {"aaa-bb-c--ef", "aaa-bbbbb-ccc-dd-efef"},
                 {"aa-bb-c--ef", "aaa-b-c--ef", "aaa-bb-cccc--ef", "aaa-bb-c-ddd-ef", "aaa-bb-c--e",
                  "aaa-bb-c--efefef"},
                 "counts");
  ExpectLanguage(MustParse("root ::= (\"x\" | \"yz\")* \"!\" [0-9]+ \"?\"?"),
                 {"!0", "xyzx!123?", "yz!9"}, {"!", "xy!1", "x!1??"}, "operators");
}

TEST(Gbnf, NewlinesFollowLlamaCppRules) {
  // Inside parentheses newlines are free; after '|' the rule continues; comments anywhere.
  const Grammar g = MustParse(
      "# leading comment\r\n"
      "root ::= (\r\n"
      "  \"a\" # first\n"
      "  | \"b\"\n"
      ") tail |\n"
      "  \"c\"\n"
      "\n"
      "tail ::= \"!\"  # trailing comment\n");
  ExpectLanguage(g, {"a!", "b!", "c"}, {"a", "c!", "ab!"}, "newlines");
}

TEST(Gbnf, RulesMayBeUsedBeforeDefinitionAndNamedWithDashesAndUnderscores) {
  const Grammar g = MustParse(
      "root ::= check-mate | rule_123\ncheck-mate ::= \"#\" UPPER-case\nrule_123 ::= \"x\"\n"
      "UPPER-case ::= \"!\"");
  ExpectLanguage(g, {"#!", "x"}, {"#", "!", "x!"}, "names");
}

TEST(Gbnf, EmptyAlternativesAndRecursion) {
  ExpectLanguage(MustParse("root ::= \"(\" root \")\" root | "), {"", "()", "(())()"},
                 {"(", ")(", "(()"}, "balanced");
}

// Each error names its line and column (1-based, in characters) and what was expected.
TEST(GbnfErrors, NameLineColumnAndWhat) {
  const std::pair<const char*, const char*> cases[] = {
      {"root ::= value", "grammar line 1, column 10: undefined rule 'value'"},
      {"root ::= \"é\" a\na ::= b\n", "grammar line 2, column 7: undefined rule 'b'"},
      {"root ::= \"é😀\" b", "grammar line 1, column 15: undefined rule 'b'"},
      {"a ::= \"x\"", "grammar has no 'root' rule"},
      {"root \"x\"", "grammar line 1, column 6: expected '::=' after rule name 'root'"},
      {"root ::= \"\\q\"", "grammar line 1, column 11: unknown escape"},
      {"root ::= \"abc", "grammar line 1, column 10: string literal is not closed"},
      {"root ::= [abc", "grammar line 1, column 10: character class is not closed"},
      {"root ::= [z-a]", "grammar line 1, column 11: character range is reversed"},
      {"root ::= []", "grammar line 1, column 10: empty character class"},
      {"root ::= <[1000]>", "grammar line 1, column 10: token references"},
      {"root ::= \"x\" <think>", "grammar line 1, column 14: token references"},
      {"root ::= !<think>*", "grammar line 1, column 10: token references"},
      {"root ::= (\"a\" <[5]>)", "grammar line 1, column 15: token references"},
      {"root ::= a\na ::= \"x\"\na ::= \"y\"",
       "grammar line 3, column 1: rule 'a' is defined twice (first at line 2, column 1)"},
      {"root ::= *\"a\"", "grammar line 1, column 10: expected a symbol before '*'"},
      {"root ::= \"a\"{10001}", "grammar line 1, column 14: repetition count exceeds the limit"},
      {"root ::= \"a\"{3,2}", "grammar line 1, column 17: repetition {3,2}"},
      {"root ::= \"a\"{,2}", "grammar line 1, column 14: expected a number"},
      {"root ::= \"a\"{2", "grammar line 1, column 15: expected '}'"},
      {"root ::= (\"a\"\n", "grammar line 2, column 1: expected ')' to close the '(' at line 1"},
      {"root ::= \"a\")", "grammar line 1, column 13: found ')' without a matching '('"},
      {"root ::= \"a\"\n  | \"b\"", "grammar line 2, column 3: expected a rule name, found '|'"},
      {"root ::= \"a\" b ::= \"c\"", "grammar line 1, column 16: found '::=' inside a rule"},
      {"root ::= \"\xff\"", "grammar line 1, column 11: invalid UTF-8"},
      {"root ::= \"\\x4\"", "grammar line 1, column 11: escape expects 2 hex digits"},
      {"root ::= \"\\U00110000\"", "grammar line 1, column 11: code point above U+10FFFF"},
      {"root ::= \"a\" @", "grammar line 1, column 14: expected a symbol, '|' or the end"},
      {"root ::= root \"a\" | \"b\"", "grammar rule 'root' is left-recursive"},
      {"root ::= x \"a\" | \"b\"\nx ::= \"y\"? root", "is left-recursive"},
  };
  for (const auto& [text, expected] : cases) {
    const std::string message = ErrorOf(text);
    EXPECT_NE(message.find(expected), std::string::npos)
        << "grammar:\n"
        << text << "\nmessage: " << message << "\nexpected: " << expected;
  }
}

TEST(GbnfHostile, DeepNestingIsRefusedQuickly) {
  const auto start = std::chrono::steady_clock::now();
  const std::string deep =
      "root ::= " + std::string(10000, '(') + "\"a\"" + std::string(10000, ')');
  EXPECT_NE(ErrorOf(deep).find("parentheses nest deeper than"), std::string::npos);
  const int ok_depth = kMaxGbnfNesting - 1;
  MustParse("root ::= " + std::string(size_t(ok_depth), '(') + "\"a\"" +
            std::string(size_t(ok_depth), ')'));
  EXPECT_LT(test::SecondsSince(start), test::kNoHangSeconds);
}

TEST(GbnfHostile, HugeRepetitionsAreRefusedQuickly) {
  const auto start = std::chrono::steady_clock::now();
  EXPECT_NE(ErrorOf("root ::= \"a\"{99999999999999999999999999}").find("exceeds the limit"),
            std::string::npos);
  // Each bound is legal; together they pass the rule limit: refused before allocating them.
  std::string many = "root ::=";
  for (int i = 0; i < 20; ++i) many += " \"a\"{0,10000}";
  EXPECT_NE(ErrorOf(many).find("too large"), std::string::npos);
  EXPECT_LT(test::SecondsSince(start), test::kNoHangSeconds);
}

TEST(GbnfHostile, RandomBytesAndMutationsNeverCrash) {
  std::mt19937 rng(29);
  const std::string json = ReadFile(CorpusDir() + "/json.gbnf");
  ASSERT_FALSE(json.empty());
  int parsed = 0;
  for (int round = 0; round < 2000; ++round) {
    std::string text;
    if (round % 2 == 0) {
      text.resize(rng() % 64);
      for (char& c : text) c = char(rng() % 256);
    } else {
      text = json;
      for (int k = 0; k < 3; ++k) text[rng() % text.size()] = char(rng() % 256);
    }
    Result<Grammar> g = ParseGbnf(text);
    if (g.ok()) {
      ++parsed;
      EXPECT_TRUE(CompileGrammar(*g).ok());
    } else {
      EXPECT_EQ(g.code(), StatusCode::kInvalidArgument);
      EXPECT_EQ(g.message().rfind("grammar", 0), 0u) << g.message();
    }
  }
  EXPECT_GT(parsed, 0);  // some mutations (inside comments, literals) still parse
}

TEST(GbnfHostile, LongGrammarParsesInLinearTime) {
  std::string text = "root ::= r0\n";
  for (int i = 0; i < 20000; ++i)
    text += "r" + std::to_string(i) + " ::= \"x\" ([a-z] | \"y\")+ r" + std::to_string(i + 1) +
            " | \"end\"\n";
  text += "r20000 ::= \"!\"\n";
  const auto start = std::chrono::steady_clock::now();
  const Grammar g = MustParse(text);
  EXPECT_LT(test::SecondsSince(start), test::kNoHangSeconds);
  EXPECT_GT(g.rules.size(), 20000u);
}

}  // namespace
}  // namespace brisk::structured
