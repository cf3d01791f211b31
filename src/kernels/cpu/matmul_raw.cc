// The slow-but-correct path for formats without a packed kernel (Q2_K, Q3_K): each row is
// dequantised one 256-value super-block at a time into a stack buffer (no allocation) and dotted
// with fp32 activations. ISA-independent code, so every ISA gives the same bits. Per (row, token)
// the dot uses 8 fixed lanes (column i -> lane i % 8) and a fixed pairwise tree.
#include "kernels/cpu/matmul_raw.h"

#include "quant/dequantize.h"
#include "util/check.h"

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

namespace brisk::kern {

void RawRows(GgmlType type, const uint8_t* rows, size_t row_bytes, int64_t n_rows, int64_t cols,
             const float* x, int64_t ldx, int n_tokens, float* y, int64_t ldy) {
  constexpr int kChunk = 256, kTok = 8, kLanes = 8;
  const int bs = GetTypeTraits(type).block_size;
  BRISK_CHECK(kChunk % bs == 0 || cols % kChunk == 0);
  const size_t chunk_bytes = RowBytes(type, kChunk < cols ? kChunk : cols);
  for (int64_t r = 0; r < n_rows; ++r) {
    const uint8_t* row = rows + size_t(r) * row_bytes;
    for (int t0 = 0; t0 < n_tokens; t0 += kTok) {
      const int nt = n_tokens - t0 < kTok ? n_tokens - t0 : kTok;
      float acc[kTok][kLanes] = {};
      for (int64_t c0 = 0; c0 < cols; c0 += kChunk) {
        const int64_t n = cols - c0 < kChunk ? cols - c0 : kChunk;
        float w[kChunk];
        DequantizeRow(type, row + size_t(c0 / kChunk) * chunk_bytes, w, n);
        for (int t = 0; t < nt; ++t) {
          const float* xt = x + (t0 + t) * ldx + c0;
          for (int64_t i = 0; i < n; ++i) acc[t][i % kLanes] = acc[t][i % kLanes] + w[i] * xt[i];
        }
      }
      for (int t = 0; t < nt; ++t) {
        const float* a = acc[t];
        y[(t0 + t) * ldy + r] = ((a[0] + a[4]) + (a[2] + a[6])) + ((a[1] + a[5]) + (a[3] + a[7]));
      }
    }
  }
}

}  // namespace brisk::kern
