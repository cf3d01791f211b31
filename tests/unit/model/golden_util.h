// Shared by the golden-logits tests: the golden model list, the token sequences, and the
// comparison helpers.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace brisk::golden {

// Every model in ../shared/golden/models.
inline constexpr const char* kModels[] = {
    "tiny-f32",           "tiny-f16",           "tiny-bf16",          "tiny-q8_0",
    "tiny-q4_0",          "tiny-q4_1",          "tiny-q5_0",          "tiny-q5_1",
    "tiny-q4_k_m",        "tiny-q5_k_m",        "tiny-q6_k",          "tiny-q3_k_m",
    "tiny-q2_k",          "tiny-untied-f32",    "tiny-untied-f16",    "tiny-untied-bf16",
    "tiny-untied-q8_0",   "tiny-untied-q4_0",   "tiny-untied-q4_1",   "tiny-untied-q5_0",
    "tiny-untied-q5_1",   "tiny-untied-q4_k_m", "tiny-untied-q5_k_m", "tiny-untied-q6_k",
    "tiny-untied-q3_k_m", "tiny-untied-q2_k",   "tiny-qwen3-f32",     "tiny-qwen3-f16",
    "tiny-qwen3-q8_0",    "tiny-qwen3-q4_k_m",  "tiny-qwen3-q6_k",
};

// logits/sequences.txt: one sequence of space-separated token ids per line.
inline std::vector<std::vector<int32_t>> ReadSequences(const std::string& path) {
  std::vector<std::vector<int32_t>> seqs;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::vector<int32_t> s;
    int32_t t;
    while (ls >> t) s.push_back(t);
    if (!s.empty()) seqs.push_back(s);
  }
  return seqs;
}

// Relative L2 distance ||a - ref|| / ||ref||, in double.
inline double RelL2(const float* a, const float* ref, int n) {
  double num = 0, den = 0;
  for (int i = 0; i < n; ++i) {
    num += (double(a[i]) - ref[i]) * (double(a[i]) - ref[i]);
    den += double(ref[i]) * ref[i];
  }
  return std::sqrt(num / den);
}

inline int ArgMax(const float* v, int n) { return int(std::max_element(v, v + n) - v); }

// Test-name-safe form of a model name ("tiny-q4_k_m" -> "tiny_q4_k_m").
inline std::string ParamName(std::string s) {
  for (char& c : s)
    if (c == '-') c = '_';
  return s;
}

}  // namespace brisk::golden
