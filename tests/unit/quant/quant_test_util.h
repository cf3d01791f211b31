// Helpers shared by the quant tests: reading tensors out of the golden GGUF models, error metrics.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "formats/gguf.h"
#include "quant/dequantize.h"
#include "quant/types.h"
#include "test_paths.h"

namespace brisk::test {

// The golden models directory, or the committed subset in tests/data/models; "" when neither.
inline std::string ModelPath(const std::string& model) {
  return FindGoldenOrData("models/" + model + ".gguf", "golden/" + model + ".gguf");
}

// Dequantizes the first n values (all when n < 0) of a tensor; empty when it is missing.
inline std::vector<float> ReadTensorF32(const gguf::File& f, const std::string& name,
                                        int64_t n = -1) {
  const gguf::TensorInfo* t = f.FindTensor(name);
  if (t == nullptr) return {};
  const int64_t bs = GetTypeTraits(t->type).block_size;
  if (n < 0 || n > t->n_elements) n = t->n_elements;
  n -= n % bs;
  std::vector<float> out(size_t(n), 0.0f);
  DequantizeRow(t->type, t->data, out.data(), n);
  return out;
}

inline double SumSq(const float* a, const float* b, size_t n) {
  double s = 0;
  for (size_t i = 0; i < n; ++i) {
    const double e = double(a[i]) - double(b ? b[i] : 0.0f);
    s += e * e;
  }
  return s;
}

// Quantize then dequantize with brisk's own routines.
inline std::vector<float> RoundTrip(GgmlType type, const std::vector<float>& x) {
  std::vector<uint8_t> buf(RowBytes(type, int64_t(x.size())));
  QuantizeRow(type, x.data(), buf.data(), int64_t(x.size()));
  std::vector<float> y(x.size());
  DequantizeRow(type, buf.data(), y.data(), int64_t(x.size()));
  return y;
}

inline bool SameBits(float a, float b) {
  uint32_t ua, ub;
  std::memcpy(&ua, &a, 4);
  std::memcpy(&ub, &b, 4);
  return ua == ub;
}

}  // namespace brisk::test
