#include "kernels/cpu/reference.h"

#include <cmath>

#include "quant/dequantize.h"

namespace brisk::ref {

float Dot(const float* a, const float* b, int64_t n) {
  // 16 independent lanes let the compiler vectorise without reassociating (no -ffast-math);
  // the lane count and final pairwise sum are fixed, so the result is reproducible.
  constexpr int kLanes = 16;
  float acc[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int k = 0; k < kLanes; ++k) acc[k] += a[i + k] * b[i + k];
  for (int k = 0; i < n; ++i, ++k) acc[k] += a[i] * b[i];
  for (int w = kLanes / 2; w > 0; w /= 2)
    for (int k = 0; k < w; ++k) acc[k] += acc[k + w];
  return acc[0];
}

void Matmul(ThreadPool& pool, const Matrix& w, const float* x, int n_tokens, float* y,
            float* scratch) {
  const size_t row_bytes = RowBytes(w.type, w.cols);
  pool.ParallelFor(w.rows, 16, [&](int64_t r0, int64_t r1, int thread) {
    float* row = scratch + size_t(thread) * size_t(w.cols);
    for (int64_t r = r0; r < r1; ++r) {
      const float* wr;
      if (w.type == GgmlType::kF32) {
        wr = reinterpret_cast<const float*>(w.data + size_t(r) * row_bytes);
      } else {
        DequantizeRow(w.type, w.data + size_t(r) * row_bytes, row, w.cols);
        wr = row;
      }
      for (int t = 0; t < n_tokens; ++t)
        y[size_t(t) * size_t(w.rows) + size_t(r)] = Dot(wr, x + size_t(t) * size_t(w.cols), w.cols);
    }
  });
}

void RmsNorm(const float* v, const float* weight, int64_t n, double eps, float* out) {
  double ss = 0;
  for (int64_t i = 0; i < n; ++i) ss += double(v[i]) * double(v[i]);
  const float scale = float(1.0 / std::sqrt(ss / double(n) + eps));
  for (int64_t i = 0; i < n; ++i) out[i] = v[i] * scale * weight[i];
}

void RopeNeox(float* x, int head_dim, int pos, double theta) {
  const int half = head_dim / 2;
  for (int i = 0; i < half; ++i) {
    const double angle = double(pos) * std::pow(theta, -2.0 * i / head_dim);
    const double c = std::cos(angle), s = std::sin(angle);
    const double a = x[i], b = x[i + half];
    x[i] = float(a * c - b * s);
    x[i + half] = float(a * s + b * c);
  }
}

}  // namespace brisk::ref
