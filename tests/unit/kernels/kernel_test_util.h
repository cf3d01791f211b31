// Shared helpers of the kernel tests: random weights in every format, references, ISA loops.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/acts.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/packed.h"
#include "quant/dequantize.h"
#include "quant/types.h"
#include "runtime/cpu_features.h"
#include "util/fp16.h"

namespace brisk::test {

// ISAs this machine runs; prints the ones skipped once.
inline std::vector<Isa> TestIsas() {
  std::vector<Isa> out;
  for (int i = 0; i < kNumIsas; ++i) {
    if (IsaSupported(Isa(i))) {
      out.push_back(Isa(i));
    } else {
      static bool said[kNumIsas] = {};
      if (!said[i])
        std::printf("[ skipped ISA %s: not supported by this CPU ]\n",
                    std::string(IsaName(Isa(i))).c_str());
      said[i] = true;
    }
  }
  return out;
}

// Smaller shapes under sanitizers (BRISK_TEST_SMALL=1) keep the ASan run short.
inline bool SmallTests() {
  const char* e = std::getenv("BRISK_TEST_SMALL");
  return e && *e && *e != '0';
}

inline void PutHalf(uint8_t* p, float v) {
  const uint16_t h = Fp32ToFp16(v);
  std::memcpy(p, &h, 2);
}

// Random bytes for every block (covers all bit patterns of quants, scales and high bits) with
// the fp16 scale fields overwritten by moderate values (random bits would give inf/NaN).
inline std::vector<uint8_t> RandomWeights(GgmlType type, int64_t rows, int64_t cols,
                                          uint32_t seed) {
  std::mt19937 rng(seed);
  const size_t row_bytes = RowBytes(type, cols);
  std::vector<uint8_t> w(row_bytes * size_t(rows));
  std::uniform_real_distribution<float> scale(0.002f, 0.02f), val(-1.0f, 1.0f), sign(-1.0f, 1.0f);
  auto sgn = [&] { return sign(rng) < 0 ? -1.0f : 1.0f; };
  if (type == GgmlType::kF32) {
    for (size_t i = 0; i < w.size() / 4; ++i) {
      const float v = val(rng);
      std::memcpy(&w[4 * i], &v, 4);
    }
    return w;
  }
  if (type == GgmlType::kF16 || type == GgmlType::kBF16) {
    for (size_t i = 0; i < w.size() / 2; ++i) {
      const uint16_t h = type == GgmlType::kF16 ? Fp32ToFp16(val(rng)) : Fp32ToBf16(val(rng));
      std::memcpy(&w[2 * i], &h, 2);
    }
    return w;
  }
  for (auto& b : w) b = uint8_t(rng());
  const TypeTraits& tt = GetTypeTraits(type);
  const int64_t nb = cols / tt.block_size;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t b = 0; b < nb; ++b) {
      uint8_t* p = w.data() + size_t(r) * row_bytes + size_t(b) * tt.type_size;
      switch (type) {
        case GgmlType::kQ8_0:
        case GgmlType::kQ4_0:
        case GgmlType::kQ5_0:
          PutHalf(p, scale(rng) * sgn());
          break;
        case GgmlType::kQ4_1:
        case GgmlType::kQ5_1:
          PutHalf(p, scale(rng)), PutHalf(p + 2, 8 * scale(rng) * sgn());
          break;
        case GgmlType::kQ4_K:
        case GgmlType::kQ5_K:
          PutHalf(p, scale(rng) / 16), PutHalf(p + 2, scale(rng) / 16);
          break;
        case GgmlType::kQ6_K:
          PutHalf(p + 208, scale(rng) / 64);
          break;
        case GgmlType::kIQ4_NL:  // codebook values up to 127
          PutHalf(p, scale(rng) / 16 * sgn());
          break;
        case GgmlType::kIQ4_XS:  // and multipliers up to 32
          PutHalf(p, scale(rng) / 256 * sgn());
          break;
        case GgmlType::kQ2_K:
          PutHalf(p + 80, scale(rng)), PutHalf(p + 82, scale(rng));
          break;
        case GgmlType::kQ3_K:
          PutHalf(p + 108, scale(rng) / 8);
          break;
        default:
          ADD_FAILURE() << "no generator for " << TypeName(type);
      }
    }
  return w;
}

inline std::vector<float> RandomActs(int n_tokens, int64_t cols, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> n(0.0f, 1.0f);
  std::vector<float> x(size_t(n_tokens) * size_t(cols));
  for (auto& v : x) v = n(rng);
  // A few outliers per row, as real activations have (they set the block scales).
  for (int t = 0; t < n_tokens; ++t) x[size_t(t) * cols + size_t(rng() % cols)] = 20.0f;
  return x;
}

inline std::vector<float> DequantizeAll(GgmlType type, const std::vector<uint8_t>& w, int64_t rows,
                                        int64_t cols) {
  std::vector<float> out(size_t(rows) * size_t(cols));
  const size_t rb = RowBytes(type, cols);
  for (int64_t r = 0; r < rows; ++r)
    DequantizeRow(type, w.data() + size_t(r) * rb, &out[size_t(r) * cols], cols);
  return out;
}

// The int8 activations as floats (d * q), i.e. exactly what integer kernels multiply with.
inline std::vector<float> DequantizeActs(const Q8Acts& q, int n_tokens) {
  std::vector<float> out(size_t(n_tokens) * size_t(q.cols));
  for (int t = 0; t < n_tokens; ++t)
    for (int64_t i = 0; i < q.cols; ++i)
      out[size_t(t) * q.cols + i] =
          q.meta[t * q.meta_stride + i / 32].d * float(q.qs[t * q.qs_stride + i]);
  return out;
}

inline bool BitEqual(const std::vector<float>& a, const std::vector<float>& b, std::string* where) {
  if (a.size() != b.size()) return *where = "size", false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::memcmp(&a[i], &b[i], 4) != 0) {
      *where = "index " + std::to_string(i) + ": " + std::to_string(a[i]) + " vs " +
               std::to_string(b[i]);
      return false;
    }
  return true;
}

}  // namespace brisk::test
