// Shared helpers of the structured/ tests: reading the corpora under tests/data/structured and
// checking a grammar's language on examples through the matcher.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "structured/grammar.h"
#include "structured/matcher.h"

namespace brisk::structured::test {

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// One JSON string per non-empty line (so examples can hold newlines); empty when the file is
// missing.
inline std::vector<std::string> ReadExamples(const std::string& path) {
  std::vector<std::string> out;
  std::ifstream in(path, std::ios::binary);
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    out.push_back(nlohmann::json::parse(line).get<std::string>());
  }
  return out;
}

inline std::shared_ptr<const CompiledGrammar> MustCompile(const Grammar& g) {
  auto c = CompileGrammar(g);
  EXPECT_TRUE(c.ok()) << c.message();
  return c.ok() ? *c : nullptr;
}

// Every accept example matches and no reject example does.
inline void ExpectLanguage(const Grammar& g, const std::vector<std::string>& accept,
                           const std::vector<std::string>& reject, const std::string& what) {
  const auto c = MustCompile(g);
  ASSERT_TRUE(c) << what;
  for (const std::string& s : accept)
    EXPECT_TRUE(Matches(c, s)) << what << " should accept " << nlohmann::json(s).dump();
  for (const std::string& s : reject)
    EXPECT_FALSE(Matches(c, s)) << what << " should reject " << nlohmann::json(s).dump();
}

}  // namespace brisk::structured::test
