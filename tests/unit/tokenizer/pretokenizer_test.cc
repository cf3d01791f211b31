// The hand-written Qwen2 pre-tokenizer against splits computed by a regex engine
// (tests/data/tokenizer/pretokenizer-cases.jsonl, made by make_pretokenizer_cases.py).
#include "tokenizer/pretokenizer.h"

#include <gtest/gtest.h>

#include <random>

#include "tokenizer_test_util.h"

namespace brisk::tok {
namespace {

std::vector<std::string> Split(std::string_view t) {
  std::vector<std::string> pieces;
  for (size_t p = 0; p < t.size();) {
    const size_t e = NextQwen2Piece(t, p);
    EXPECT_GT(e, p);
    EXPECT_LE(e, t.size());
    if (e <= p || e > t.size()) break;
    pieces.emplace_back(t.substr(p, e - p));
    p = e;
  }
  return pieces;
}

TEST(PreTokenizer, Examples) {
  using V = std::vector<std::string>;
  EXPECT_EQ(Split("Hello world"), (V{"Hello", " world"}));
  EXPECT_EQ(Split("  Hello"), (V{" ", " Hello"}));
  EXPECT_EQ(Split("I'm WE'LL 'sometimes"), (V{"I", "'m", " WE", "'LL", " '", "sometimes"}));
  EXPECT_EQ(Split("x1234"), (V{"x", "1", "2", "3", "4"}));
  EXPECT_EQ(Split("a \n\n b"), (V{"a", " \n\n", " b"}));
  EXPECT_EQ(Split("end   "), (V{"end", "   "}));
  EXPECT_EQ(Split("a   b"), (V{"a", "  ", " b"}));
  EXPECT_EQ(Split(" ...\n\nx"), (V{" ...\n\n", "x"}));
  EXPECT_EQ(Split("(Hello)"), (V{"(Hello", ")"}));
  EXPECT_EQ(Split("中文 字"), (V{"中文", " 字"}));
  EXPECT_EQ(Split("'ſ"), (V{"'ſ"}));  // (?i) folds ſ to s
}

TEST(PreTokenizer, MatchesRegexEngineCases) {
  const std::string path = test::DataPath("tokenizer/pretokenizer-cases.jsonl");
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    const nlohmann::json j = nlohmann::json::parse(line);
    const std::string text = j["text"].get<std::string>();
    EXPECT_EQ(Split(text), j["pieces"].get<std::vector<std::string>>()) << j["text"].dump();
    ++n;
  }
  EXPECT_GT(n, 250);
}

TEST(PreTokenizer, PiecesTileArbitraryBytes) {
  std::mt19937 rng(3);
  for (int iter = 0; iter < 5000; ++iter) {
    std::string s(1 + rng() % 40, '\0');
    for (char& c : s) c = static_cast<char>(rng() % 256);
    size_t total = 0;
    for (const std::string& p : Split(s)) total += p.size();
    ASSERT_EQ(total, s.size());
  }
}

}  // namespace
}  // namespace brisk::tok
