// Shared helpers for the tokenizer tests: golden case files and cached tokenizers.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "test_paths.h"
#include "tokenizer/tokenizer.h"

namespace brisk::test {

struct TokCase {
  std::string text;
  std::vector<int32_t> ids;
};

inline std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// {"text": ..., "ids": [...]} per line.
inline std::vector<TokCase> LoadJsonlCases(const std::string& path) {
  std::vector<TokCase> cases;
  std::ifstream in(path, std::ios::binary);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const nlohmann::json j = nlohmann::json::parse(line);
    TokCase c;
    c.text = j["text"].get<std::string>();
    c.ids = j["ids"].get<std::vector<int32_t>>();
    cases.push_back(std::move(c));
  }
  return cases;
}

// llama.cpp's test-tokenizer-0 format: inputs separated by "\n__ggml_vocab_test__\n" (the file
// ends with one), expected ids one line per case.
inline std::vector<TokCase> LoadGgmlCases(const std::string& inp_path,
                                          const std::string& out_path) {
  const std::string inp = ReadAll(inp_path);
  const std::string sep = "\n__ggml_vocab_test__\n";
  std::vector<TokCase> cases;
  size_t pos = 0;
  while (true) {
    const size_t next = inp.find(sep, pos);
    if (next == std::string::npos) break;
    cases.push_back(TokCase{inp.substr(pos, next - pos), {}});
    pos = next + sep.size();
  }
  std::ifstream out(out_path);
  std::string line;
  size_t i = 0;
  while (std::getline(out, line) && i < cases.size()) {
    std::istringstream ls(line);
    int32_t id;
    while (ls >> id) cases[i].ids.push_back(id);
    ++i;
  }
  if (i != cases.size()) cases.clear();  // malformed pair of files: let the test fail loudly
  return cases;
}

inline std::string GoldenTok(const std::string& name) {
  const std::string p = GoldenPath("tokenizer/" + name);
  return !p.empty() && std::filesystem::exists(p) ? p : std::string();
}

// Cached tokenizers (nullptr when the file is absent). Built once per test binary.
inline const Tokenizer* CachedTokenizer(const std::string& path, bool gguf) {
  static std::vector<std::pair<std::string, std::unique_ptr<Tokenizer>>> cache;
  for (auto& [p, t] : cache) {
    if (p == path) return t.get();
  }
  if (path.empty() || !std::filesystem::exists(path)) return nullptr;
  Result<Tokenizer> r = gguf ? Tokenizer::FromGgufPath(path) : Tokenizer::FromHfJson(path);
  if (!r.ok()) {
    ADD_FAILURE() << "cannot load " << path << ": " << r.message();
    return nullptr;
  }
  cache.emplace_back(path, std::make_unique<Tokenizer>(std::move(r).value()));
  return cache.back().second.get();
}

inline const Tokenizer* Qwen25Gguf() {
  return CachedTokenizer(GoldenTok("qwen2.5-vocab.gguf"), true);
}
inline const Tokenizer* Qwen25Hf() {
  return CachedTokenizer(GoldenTok("qwen2.5-tokenizer.json"), false);
}
inline const Tokenizer* GgmlQwen2() {
  return CachedTokenizer(GoldenTok("ggml-vocab-qwen2.gguf"), true);
}
// The committed subset: a trimmed tokenizer.json that encodes the subset cases exactly.
inline const Tokenizer* SubsetHf() {
  return CachedTokenizer(DataPath("tokenizer/qwen2.5-subset-tokenizer.json"), false);
}
inline std::vector<TokCase> SubsetCases() {
  return LoadJsonlCases(DataPath("tokenizer/qwen2.5-subset-cases.jsonl"));
}

// Every tokenizer available with the cases it must reproduce, for parameterised checks.
struct TokenizerUnderTest {
  std::string name;
  const Tokenizer* tok;
};
inline std::vector<TokenizerUnderTest> AvailableQwen25Tokenizers() {
  std::vector<TokenizerUnderTest> v;
  if (const Tokenizer* t = Qwen25Gguf()) v.push_back({"qwen2.5-vocab.gguf", t});
  if (const Tokenizer* t = Qwen25Hf()) v.push_back({"qwen2.5-tokenizer.json", t});
  return v;
}

inline std::string IdsToString(const std::vector<int32_t>& ids) {
  std::string s;
  for (int32_t id : ids) s += " " + std::to_string(id);
  return s;
}

}  // namespace brisk::test
