// The prefill-class (wide) entry points of the matmul (matmul.h: numerics classes): token chunks
// of bf16 activations against groups dequantised to bf16 on AMX tiles, and the fused gate/up +
// SwiGLU variant for the feed-forward block.
#include <algorithm>

#include "kernels/cpu/matmul_internal.h"
#include "util/check.h"

namespace brisk {

using matmul_detail::GateUpSegments;
using matmul_detail::PlanGateClaims;
namespace {

// Token chunk of the wide path: the chunk's bf16 rows stay in L2 (~1.5 MiB of the 2 MiB per
// core measured here) while every group of the thread is dequantised and multiplied against them;
// longer rows mean smaller chunks and one more dequantisation of each group per chunk.
int WideChunkTokens(int64_t cols) {
  const int64_t t = (int64_t(3) << 19) / (cols * 2) / 32 * 32;
  return int(std::max<int64_t>(t, 32));
}

}  // namespace

namespace matmul_detail {

// Tokens [t0, t1) of the call (the wide ones) on the bf16 path, one parallel region per token
// chunk: the threads claim pairs of groups (the kernel's 2 x 2 tile blocking) from their
// byte-balanced ranges and steal from each other's (GroupClaims). Float and raw segments compute
// those tokens with their usual kernels.
void MatmulWide(ThreadPool& pool, const PackedWeights& w, const MatmulInput& in, int t0, int t1,
                float* y, int64_t ldy, MatmulWorkspace& ws, Isa isa) {
  BRISK_CHECK_MSG(in.xb && in.xb->max_cols() >= w.cols && in.xb->capacity() >= t1 - t0,
                  "bf16 activations missing");
  BRISK_CHECK_MSG(ws.max_cols() >= w.cols && ws.n_threads() >= pool.size(),
                  "matmul workspace planned too small");
  if (w.uses_f32()) BRISK_CHECK_MSG(in.x && in.ldx >= w.cols, "fp32 activations missing");
  if (t1 <= t0 || w.rows == 0) return;
  const kern::IsaKernels& k = kern::KernelsFor(isa);
  const int chunk = WideChunkTokens(w.cols);
  Job j{&w, &in, t1, y, ldy, &ws, &k};
  for (int c0 = t0; c0 < t1; c0 += chunk) {
    const int c1 = std::min(t1, c0 + chunk);
    PlanClaims(w, pool.size(), ws.claims());
    ws.claims().Reset(2);
    pool.Run([&](int t, int) {
      uint8_t* scratch = ws.thread_scratch(t);
      kern::WideArgs wa;
      wa.cols = w.cols;
      wa.ldy = ldy;
      wa.scratch = ws.thread_wide_scratch(t);
      wa.xb = in.xb->data() + int64_t(c0 - t0) / 16 * (w.cols / 32) * 512;
      wa.n_tokens = c1 - c0;
      ForClaimedGroups(w, ws.claims(), t, [&](const PackedSegment& s, int64_t g0, int64_t g1) {
        if (!UsesQ8Acts(s.kind)) {
          RunGroups(j, s, g0, g1, c0, c1, y, ldy, s.row0, scratch);
          return;
        }
        wa.group_bytes = s.group_bytes;
        for (int64_t g = g0; g < g1; g += 2) {  // pairs of groups (WideArgs)
          wa.group = s.data + size_t(g) * s.group_bytes;
          wa.n_groups = g + 1 < g1 ? 2 : 1;
          wa.y = y + c0 * ldy + (s.row0 + g * kGroupRows);
          wa.valid_rows = int(std::min<int64_t>(kGroupRows * wa.n_groups, s.rows - g * kGroupRows));
          k.wide[int(s.kind)](wa);
        }
      });
    });
  }
}

}  // namespace matmul_detail

bool WidePathAvailable(Isa isa) {
  return isa == Isa::kAvx512 && AmxBf16Enabled() && kern::KernelsFor(isa).wide[0] != nullptr;
}

bool GluWideSupported(const PackedWeights& w, Isa isa) {
  if (!WidePathAvailable(isa) || !GateUpSegments(w)) return false;
  const PackedSegment& g = w.segments[0];
  return g.rows % 32 == 0 && kern::KernelsFor(isa).wide_glu[int(g.kind)] != nullptr;
}

void MatmulGluWide(ThreadPool& pool, const PackedWeights& w, const Bf16Acts& xb, int n_wide,
                   Bf16Acts* out, MatmulWorkspace& ws, Isa isa) {
  BRISK_CHECK(GluWideSupported(w, isa));
  const PackedSegment &gate = w.segments[0], &up = w.segments[1];
  BRISK_CHECK_MSG(xb.max_cols() >= w.cols && xb.capacity() >= n_wide, "bf16 input too small");
  BRISK_CHECK_MSG(out && out->max_cols() >= gate.rows && out->capacity() >= n_wide,
                  "bf16 output too small");
  BRISK_CHECK_MSG(ws.max_cols() >= w.cols && ws.n_threads() >= pool.size(),
                  "matmul workspace planned too small");
  if (n_wide <= 0) return;
  const kern::IsaKernels& k = kern::KernelsFor(isa);
  const int chunk = WideChunkTokens(w.cols);
  const int64_t groups = gate.n_groups();
  for (int c0 = 0; c0 < n_wide; c0 += chunk) {
    const int c1 = std::min(n_wide, c0 + chunk);
    GroupClaims& claims = ws.claims();
    PlanGateClaims(claims, groups, pool.size());
    pool.Run([&](int t, int) {
      kern::WideGluArgs a;
      a.cols = w.cols;
      a.xb = xb.data() + int64_t(c0) / 16 * (w.cols / 32) * 512;
      a.n_tokens = c1 - c0;
      a.out = out->data() + int64_t(c0) / 16 * (gate.rows / 32) * 512;
      a.out_cols = gate.rows;
      a.scratch = ws.thread_wide_scratch(t);
      a.silu_mul = k.silu_mul;
      int64_t g0, g1;
      while (claims.Next(t, &g0, &g1))
        for (int64_t g = g0; g < g1; ++g) {
          a.gate = gate.data + size_t(g) * gate.group_bytes;
          a.up = up.data + size_t(g) * up.group_bytes;
          a.col0 = g * kGroupRows;
          a.valid_rows = int(std::min<int64_t>(kGroupRows, gate.rows - g * kGroupRows));
          k.wide_glu[int(gate.kind)](a);
        }
    });
  }
}

}  // namespace brisk
