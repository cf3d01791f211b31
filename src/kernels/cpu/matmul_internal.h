// Internals shared by the matmul entry points (matmul.cc: the integer and float paths;
// matmul_wide.cc: the prefill-class bf16 path): the per-call job record, the planning of group
// claims and the per-thread walk over them, and the per-group kernel dispatch.
#pragma once

#include <algorithm>
#include <cstdint>

#include "kernels/cpu/group_claims.h"
#include "kernels/cpu/isa_kernels.h"
#include "kernels/cpu/matmul.h"

namespace brisk::matmul_detail {

struct Job {
  const PackedWeights* w;
  const MatmulInput* in;
  int n_tokens;
  float* y;
  int64_t ldy;
  MatmulWorkspace* ws;
  const kern::IsaKernels* k;
  bool amx = false;
  // argmax mode
  bool argmax = false;
  int32_t* best_row = nullptr;
  float* best_value = nullptr;
};

// Plans the claims of one parallel region: thread t starts on the groups (in segment order)
// whose first byte lies in [total * t / n, total * (t + 1) / n), and claims ~32 KiB (a multiple
// of min_chunk groups) at a time.
void PlanClaims(const PackedWeights& w, int n, GroupClaims& claims, int64_t min_chunk = 1);

// Runs fn(segment, g0, g1) for every group this thread claims (global indices cut at segments).
template <typename Fn>
void ForClaimedGroups(const PackedWeights& w, GroupClaims& claims, int t, Fn&& fn) {
  int64_t a, b;
  while (claims.Next(t, &a, &b)) {
    int64_t base = 0;
    for (const PackedSegment& s : w.segments) {
      const int64_t n = s.n_groups();
      const int64_t g0 = std::max<int64_t>(a - base, 0), g1 = std::min<int64_t>(b - base, n);
      if (g1 > g0) fn(s, g0, g1);
      base += n;
      if (base >= b) break;
    }
  }
}

// Whether segments of this kind take the GEMM path (unpack once into scratch) for j.n_tokens
// tokens rather than GEMV: SetGemmMinTokensForTesting's threshold if set, else the tier's own for
// the kind (IsaKernels::gemm_min_tokens_kind, not where AMX tiles run), else gemm_min_tokens.
bool UsesGemm(const Job& j, PackedKind kind);

// The two-group kernel for a segment of this kind with n_tokens tokens, or null (one group per
// call). ClaimUnit: 2 where any segment of j.w has one (claims of whole pairs), else 1.
kern::IntKernelFn PairKernel(const Job& j, PackedKind kind, int n_tokens);
int64_t ClaimUnit(const Job& j);

// Computes groups [g0, g1) of segment s for tokens [t0, t1) into y (row offset = s.row0 + 16 g).
void RunGroups(const Job& j, const PackedSegment& s, int64_t g0, int64_t g1, int t0, int t1,
               float* y, int64_t ldy, int64_t y_row_base, uint8_t* scratch);

// The fused gate/up entries (MatmulGlu, MatmulGluWide): whether w is [gate; up] as
// PackWeightsConcat builds it, two integer segments of one kind, rows and group size.
inline bool GateUpSegments(const PackedWeights& w) {
  if (w.segments.size() != 2) return false;
  const PackedSegment &g = w.segments[0], &u = w.segments[1];
  return UsesQ8Acts(g.kind) && g.kind == u.kind && g.rows == u.rows &&
         g.group_bytes == u.group_bytes;
}

// Their claims: threads start on equal contiguous ranges of the gate groups (each computed with
// its up group) and steal one group at a time.
inline void PlanGateClaims(GroupClaims& claims, int64_t gate_groups, int n_threads) {
  for (int t = 0; t <= claims.n_threads(); ++t)
    claims.starts()[t] = gate_groups * std::min(t, n_threads) / n_threads;
  claims.Reset(1);
}

// Tokens [t0, t1) of the call (the wide ones) on the bf16 path (matmul_wide.cc).
void MatmulWide(ThreadPool& pool, const PackedWeights& w, const MatmulInput& in, int t0, int t1,
                float* y, int64_t ldy, MatmulWorkspace& ws, Isa isa);

}  // namespace brisk::matmul_detail
