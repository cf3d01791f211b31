// Quantizer throughput: prints single-threaded M values/s per type, from CPU time (no assertion:
// timings on a shared machine are too noisy to gate on). Rows are 4864 wide (Qwen2.5-0.5B's FFN
// width, a multiple of every block size) and hold N(0, 0.02) draws like real weights.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <random>
#include <string>
#include <vector>

#include "quant/dequantize.h"
#include "quant/fit.h"
#include "quant/types.h"

namespace brisk {
namespace {

double CpuSeconds() { return double(std::clock()) / CLOCKS_PER_SEC; }

double ValuesPerSecond(GgmlType t, const std::vector<float>& x, int cols) {
  const int rows = int(x.size()) / cols;
  std::vector<uint8_t> buf(RowBytes(t, int64_t(x.size())));
  const size_t row_bytes = RowBytes(t, cols);
  double best = 0;
  // Best of three runs of at least 10 ms each: the least disturbed one on a busy machine.
  for (int trial = 0; trial < 3; ++trial) {
    const double t0 = CpuSeconds();
    double s = 0;
    size_t done = 0;
    while (s < 0.010) {
      for (int r = 0; r < rows; ++r) {
        QuantizeRow(t, x.data() + size_t(r) * size_t(cols), buf.data() + size_t(r) * row_bytes,
                    cols);
      }
      done += x.size();
      s = CpuSeconds() - t0;
    }
    best = std::max(best, double(done) / s);
  }
  return best;
}

TEST(QuantizeSpeed, PrintsValuesPerSecond) {
  constexpr int kCols = 4864, kRows = 8;
  std::mt19937 rng(5);
  std::normal_distribution<float> nd(0.0f, 0.02f);
  std::vector<float> x(size_t(kCols) * kRows);
  for (float& v : x) v = nd(rng);
  const GgmlType types[] = {GgmlType::kF16,  GgmlType::kQ8_0, GgmlType::kQ4_0,
                            GgmlType::kQ4_1, GgmlType::kQ5_0, GgmlType::kQ5_1,
                            GgmlType::kQ4_K, GgmlType::kQ5_K, GgmlType::kQ6_K};
  const bool wide = quant_internal::HaveWideKernels();
  std::printf("[quantize speed] single thread, M values/s%s\n",
              wide ? " (AVX2 path, then portable path)" : " (portable path)");
  for (GgmlType t : types) {
    quant_internal::ForcePortableKernels(false);
    const double v = ValuesPerSecond(t, x, kCols);
    double p = 0;
    if (wide) {
      quant_internal::ForcePortableKernels(true);
      p = ValuesPerSecond(t, x, kCols);
      quant_internal::ForcePortableKernels(false);
    }
    if (wide) {
      std::printf("[quantize speed] %-5s %8.1f %8.1f\n", std::string(TypeName(t)).c_str(), v / 1e6,
                  p / 1e6);
    } else {
      std::printf("[quantize speed] %-5s %8.1f\n", std::string(TypeName(t)).c_str(), v / 1e6);
    }
  }
}

}  // namespace
}  // namespace brisk
