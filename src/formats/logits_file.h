// The logits file format shared with the golden data and `brisk logits` (DESIGN §2):
// int32 n_tokens, int32 n_vocab, then n_tokens rows of n_vocab float32, little-endian.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "util/status.h"

namespace brisk {

struct LogitsFile {
  int32_t n_tokens = 0;
  int32_t n_vocab = 0;
  std::vector<float> data;  // n_tokens * n_vocab
  const float* row(int t) const { return data.data() + size_t(t) * size_t(n_vocab); }
};

Result<LogitsFile> ReadLogitsFile(const std::string& path);
Status WriteLogitsFile(const std::string& path, const LogitsFile& logits);

}  // namespace brisk
