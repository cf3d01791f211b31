// Matmul dispatch: splits the row groups of a PackedWeights over the pool's threads (contiguous
// ranges balanced by bytes, so each thread streams one sequential range) and calls the ISA's
// kernel per group. The split never changes results: each output is computed by one kernel call
// with a fixed formula (matmul.h).
#include "kernels/cpu/matmul.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <limits>

#include "kernels/cpu/isa_kernels.h"
#include "kernels/cpu/matmul_internal.h"
#include "kernels/cpu/matmul_raw.h"
#include "util/check.h"

namespace brisk {

using matmul_detail::ForClaimedGroups;
using matmul_detail::GateUpSegments;
using matmul_detail::Job;
using matmul_detail::MatmulWide;
using matmul_detail::PlanClaims;
using matmul_detail::PlanGateClaims;
using matmul_detail::RunGroups;

namespace {

constexpr int kArgmaxMaxTokens = 64;
constexpr float kInf = std::numeric_limits<float>::infinity();
std::atomic<int> g_gemm_min_tokens_override{0};  // 0: the ISA tier's own threshold

// The GEMM path's unpacked blocks: room for two groups (IsaKernels::gemm_pair).
size_t UnpackBytes(int64_t cols) {
  return 2 * size_t(cols / kActBlock) * kern::kUnpackedBlockBytes;
}
// Argmax mode, after the unpack area: one RunGroups call's outputs, then this thread's best rows.
struct Best {
  int32_t row[kArgmaxMaxTokens];
  float value[kArgmaxMaxTokens];
};
// Argmax mode's outputs of one group pair (RunGroups takes up to 2 groups per kernel call).
constexpr int kArgmaxRows = 2 * kGroupRows;
size_t YBufBytes() { return size_t(kArgmaxMaxTokens) * kArgmaxRows * sizeof(float); }
size_t ArgmaxBufBytes() { return (YBufBytes() + sizeof(Best) + 63) / 64 * 64; }
// The largest of x[0, n) (NaNs skipped; -inf if none), in four independent chains.
float MaxOf(const float* x, int n) {
  float m0 = -kInf, m1 = -kInf, m2 = -kInf, m3 = -kInf;
  int i = 0;
  for (; i + 4 <= n; i += 4) {
    m0 = x[i] > m0 ? x[i] : m0;
    m1 = x[i + 1] > m1 ? x[i + 1] : m1;
    m2 = x[i + 2] > m2 ? x[i + 2] : m2;
    m3 = x[i + 3] > m3 ? x[i + 3] : m3;
  }
  for (; i < n; ++i) m0 = x[i] > m0 ? x[i] : m0;
  return std::max(std::max(m0, m1), std::max(m2, m3));
}
size_t WideBytes(int64_t cols) { return size_t(cols) * kern::kWideScratchBytesPerCol; }

// Bytes a group streams: kRaw segments count rows, not groups, so scale to 16 rows per "group".
size_t GroupUnit(const PackedSegment& s) {
  return s.kind == PackedKind::kRaw ? s.group_bytes * kGroupRows : s.group_bytes;
}
// w's bytes in GroupUnit terms: the total that PlanClaims and SegmentAddress offsets refer to.
size_t TotalUnits(const PackedWeights& w) {
  size_t total = 0;
  for (const PackedSegment& s : w.segments) total += GroupUnit(s) * size_t(s.n_groups());
  return total;
}

// The address of byte `offset` of w's packed bytes counted over its segments in order (kRaw
// segments as in GroupUnit), and how many bytes of that segment follow it.
const uint8_t* SegmentAddress(const PackedWeights& w, size_t offset, size_t* left) {
  for (const PackedSegment& s : w.segments) {
    const size_t bytes = GroupUnit(s) * size_t(s.n_groups());
    if (offset < bytes) {
      *left = bytes - offset;
      return s.data + offset;
    }
    offset -= bytes;
  }
  *left = 0;
  return nullptr;
}

// Worker t prefetches the start of thread 0's and its own byte-balanced range of `next`.
void PrefetchNextStarts(ThreadPool& pool, const PackedWeights& next, int t, int n) {
  constexpr size_t kBytes = 64 << 10;
  const size_t total = TotalUnits(next);
  for (int owner : {0, t}) {
    size_t left = 0;
    const uint8_t* p = SegmentAddress(next, total * size_t(owner) / size_t(n), &left);
    pool.PrefetchAfterJob(t, p, std::min(kBytes, left));
  }
}

// An integer kernel's arguments for tokens [t0, t0 + nt) of q over `cols` columns, writing rows
// ldy floats apart; the caller adds the groups.
kern::IntArgs TokenArgs(const Q8Acts& q, int64_t cols, int t0, int nt, int64_t ldy,
                        uint8_t* scratch) {
  kern::IntArgs a;
  a.cols = cols;
  a.aq = q.qs + t0 * q.qs_stride;
  a.aq_stride = q.qs_stride;
  a.am = q.meta + t0 * q.meta_stride;
  a.am_stride = q.meta_stride;
  a.n_tokens = nt;
  a.ldy = ldy;
  a.scratch = scratch;
  a.amx = false;
  return a;
}

void CheckInputs(const PackedWeights& w, const MatmulInput& in, int n_tokens,
                 const MatmulWorkspace& ws, const ThreadPool& pool) {
  BRISK_CHECK(n_tokens >= 0);
  if (w.uses_q8()) {
    BRISK_CHECK_MSG(in.q && in.q->cols == w.cols && in.q->n_tokens >= n_tokens,
                    "int8 activations missing or of the wrong shape");
  }
  if (w.uses_f32()) BRISK_CHECK_MSG(in.x && in.ldx >= w.cols, "fp32 activations missing");
  BRISK_CHECK_MSG(ws.max_cols() >= w.cols && ws.n_threads() >= pool.size(),
                  "matmul workspace planned too small");
}

}  // namespace

namespace matmul_detail {

bool UsesGemm(const Job& j, PackedKind kind) {
  const int forced = g_gemm_min_tokens_override.load(std::memory_order_relaxed);
  const int own = j.amx ? 0 : j.k->gemm_min_tokens_kind[int(kind)];
  return j.n_tokens >= (forced > 0 ? forced : own > 0 ? own : j.k->gemm_min_tokens);
}

kern::IntKernelFn PairKernel(const Job& j, PackedKind kind, int n_tokens) {
  if (!UsesQ8Acts(kind)) return nullptr;
  // AMX tiles (Gemm) beat the VNNI pair tiles where the CPU has them.
  if (UsesGemm(j, kind)) return j.amx ? nullptr : j.k->gemm_pair[int(kind)];
  return n_tokens >= j.k->gemv_pair_min_tokens[int(kind)] ? j.k->gemv_pair[int(kind)] : nullptr;
}

int64_t ClaimUnit(const Job& j) {
  for (const PackedSegment& s : j.w->segments)
    if (PairKernel(j, s.kind, j.n_tokens)) return 2;
  return 1;
}

void PlanClaims(const PackedWeights& w, int n, GroupClaims& claims, int64_t min_chunk) {
  const size_t total = TotalUnits(w);
  int64_t groups = 0;
  for (const PackedSegment& s : w.segments) groups += s.n_groups();
  BRISK_CHECK(n <= claims.n_threads());
  int64_t* starts = claims.starts();
  starts[0] = 0;
  for (int t = 1; t < n; ++t) {
    const long double x = (long double)total * t / n;
    size_t off = 0;
    int64_t base = 0;
    starts[t] = groups;
    for (const PackedSegment& s : w.segments) {
      const size_t u = GroupUnit(s);
      const size_t end = off + u * size_t(s.n_groups());
      if (x <= (long double)end) {
        // First group of s whose start byte off + g * u is >= x.
        int64_t g = x <= off ? 0 : int64_t(((x - off) + u - 1) / u);
        while (g > 0 && (long double)(off + (g - 1) * u) >= x) --g;
        while (g < s.n_groups() && (long double)(off + g * u) < x) ++g;
        starts[t] = base + g;
        break;
      }
      off = end;
      base += s.n_groups();
    }
    starts[t] = std::max(starts[t], starts[t - 1]);
  }
  for (int t = n; t <= claims.n_threads(); ++t) starts[t] = groups;  // threads beyond n: none
  const size_t per_group = groups > 0 ? total / size_t(groups) : 1;
  const int64_t chunk =
      std::clamp<int64_t>(int64_t((32 << 10) / std::max<size_t>(per_group, 1)), min_chunk, 64);
  claims.Reset(chunk / min_chunk * min_chunk);
}

void RunGroups(const Job& j, const PackedSegment& s, int64_t g0, int64_t g1, int t0, int t1,
               float* y, int64_t ldy, int64_t y_row_base, uint8_t* scratch) {
  const int nt = t1 - t0;
  const int64_t cols = j.w->cols;
  if (UsesQ8Acts(s.kind)) {
    kern::IntArgs a = TokenArgs(*j.in->q, cols, t0, nt, ldy, scratch);
    a.amx = j.amx;
    a.group_bytes = s.group_bytes;
    const kern::IntKernelFn fn = (UsesGemm(j, s.kind) ? j.k->gemm : j.k->gemv)[int(s.kind)];
    const kern::IntKernelFn pair = PairKernel(j, s.kind, nt);
    for (int64_t g = g0; g < g1; g += a.n_groups) {
      a.n_groups = pair && g + 1 < g1 ? 2 : 1;
      a.group = s.data + size_t(g) * s.group_bytes;
      a.next_group = g + a.n_groups < s.n_groups() ? a.group + a.n_groups * s.group_bytes : nullptr;
      a.y = y + t0 * ldy + (y_row_base + g * kGroupRows);
      a.valid_rows = int(std::min<int64_t>(a.n_groups * kGroupRows, s.rows - g * kGroupRows));
      (a.n_groups == 2 ? pair : fn)(a);
    }
  } else if (s.kind == PackedKind::kRaw) {
    const int64_t r0 = g0 * kGroupRows, r1 = std::min(s.rows, g1 * kGroupRows);
    kern::RawRows(s.type, s.data + size_t(r0) * s.group_bytes, s.group_bytes, r1 - r0, cols,
                  j.in->x + t0 * j.in->ldx, j.in->ldx, nt, y + t0 * ldy + y_row_base + r0, ldy);
  } else {
    kern::FloatArgs a;
    a.groups = s.data + size_t(g0) * s.group_bytes;
    a.group_bytes = s.group_bytes;
    a.n_groups = int(g1 - g0);
    a.cols = cols;
    a.x = j.in->x + t0 * j.in->ldx;
    a.ldx = j.in->ldx;
    a.n_tokens = nt;
    a.y = y + t0 * ldy + y_row_base + g0 * kGroupRows;
    a.ldy = ldy;
    a.valid_rows = s.rows - g0 * kGroupRows;
    j.k->fmat[int(s.kind) - int(PackedKind::kF32)](a);
  }
}

}  // namespace matmul_detail

void MatmulWorkspace::Free::operator()(void* p) const { std::free(p); }

MatmulWorkspace::MatmulWorkspace(int64_t max_cols, int n_threads)
    : max_cols_(max_cols), n_threads_(std::max(1, n_threads)), claims_(n_threads_) {
  per_thread_ =
      (UnpackBytes(max_cols) + ArgmaxBufBytes() + WideBytes(max_cols) + 4095) / 4096 * 4096;
  mem_.reset(std::aligned_alloc(4096, per_thread_ * size_t(n_threads_)));
  BRISK_CHECK(mem_ != nullptr);
}

uint8_t* MatmulWorkspace::thread_scratch(int thread) const {
  BRISK_CHECK(thread >= 0 && thread < n_threads_);
  return static_cast<uint8_t*>(mem_.get()) + per_thread_ * size_t(thread);
}

uint16_t* MatmulWorkspace::thread_wide_scratch(int thread) const {
  // After the unpack and argmax areas (64-byte aligned: both sizes are multiples of 64).
  return reinterpret_cast<uint16_t*>(thread_scratch(thread) + UnpackBytes(max_cols_) +
                                     ArgmaxBufBytes());
}

int GemmMinTokens(Isa isa) {
  const int forced = g_gemm_min_tokens_override.load(std::memory_order_relaxed);
  return forced > 0 ? forced : kern::KernelsFor(isa).gemm_min_tokens;
}
int GemmMinTokensOverride() { return g_gemm_min_tokens_override.load(); }
void SetGemmMinTokensForTesting(int n) { g_gemm_min_tokens_override.store(std::max(0, n)); }

void Matmul(ThreadPool& pool, const PackedWeights& w, const MatmulInput& in, int n_tokens, float* y,
            int64_t ldy, MatmulWorkspace& ws, Isa isa, const PackedWeights* next) {
  BRISK_CHECK(in.n_wide >= 0 && in.n_wide <= n_tokens);
  if (in.n_wide > 0 && w.uses_q8() && WidePathAvailable(isa)) {
    const int narrow = n_tokens - in.n_wide;
    MatmulInput nin = in;
    nin.n_wide = 0;
    if (narrow > 0) Matmul(pool, w, nin, narrow, y, ldy, ws, isa, nullptr);
    MatmulWide(pool, w, in, narrow, n_tokens, y, ldy, ws, isa);
    return;
  }
  CheckInputs(w, in, n_tokens, ws, pool);
  if (n_tokens == 0 || w.rows == 0) return;
  Job j{&w, &in, n_tokens, y, ldy, &ws, &kern::KernelsFor(isa)};
  j.amx = isa == Isa::kAvx512 && AmxEnabled();
  int64_t total_groups = 0;
  for (const PackedSegment& s : w.segments) total_groups += s.n_groups();
  // Few row groups but many tokens (e.g. a 128-row K/V projection in prefill): split tokens.
  const int nthreads = pool.size();
  const bool split_tokens = total_groups < 4 * int64_t(nthreads) && n_tokens >= 16 * nthreads;
  // Claims of whole pairs where a two-group kernel runs, so that it sees pairs.
  if (!split_tokens) PlanClaims(w, nthreads, ws.claims(), ClaimUnit(j));
  // Memory-bound calls only: with many tokens the next matmul's start is not what waits.
  const PackedWeights* prefetch = n_tokens <= 8 ? next : nullptr;
  auto body = [&j, &pool, prefetch, split_tokens](int t, int n) {
    if (prefetch && t > 0) PrefetchNextStarts(pool, *prefetch, t, n);
    uint8_t* scratch = j.ws->thread_scratch(t);
    if (split_tokens) {
      // Token ranges in multiples of 8 (the GEMM tile) keep tiles full.
      const int tiles = (j.n_tokens + 7) / 8;
      const int t0 = std::min(j.n_tokens, tiles * t / n * 8);
      const int t1 = std::min(j.n_tokens, tiles * (t + 1) / n * 8);
      if (t0 >= t1) return;
      for (const PackedSegment& s : j.w->segments)
        RunGroups(j, s, 0, s.n_groups(), t0, t1, j.y, j.ldy, s.row0, scratch);
      return;
    }
    ForClaimedGroups(*j.w, j.ws->claims(), t, [&](const PackedSegment& s, int64_t g0, int64_t g1) {
      RunGroups(j, s, g0, g1, 0, j.n_tokens, j.y, j.ldy, s.row0, scratch);
    });
  };
  pool.Run(body);
}

namespace {

// The two-group kernel MatmulGlu runs for n_tokens of [gate; up] (nullptr: no fused path): the
// GEMM one where Matmul would take the GEMM path or from the tier's glu_min_tokens, else the GEMV
// one from glu_gemv_min_tokens (B = 8..24 decode steps: the SiLU pass over B x 9728 gate/up
// floats and their round trip through memory go away).
kern::IntKernelFn GluKernel(const PackedWeights& w, int n_tokens, Isa isa) {
  if (n_tokens <= 0 || !GateUpSegments(w)) return nullptr;
  const PackedSegment &g = w.segments[0], &u = w.segments[1];
  if (g.rows % kGroupRows != 0 || u.data <= g.data) return nullptr;
  Job j{&w, nullptr, n_tokens, nullptr, 0, nullptr, &kern::KernelsFor(isa)};
  j.amx = isa == Isa::kAvx512 && AmxEnabled();
  if (j.amx) return nullptr;
  const int kind = int(g.kind);
  const int glu_min = GemmMinTokensOverride() > 0 ? 0 : j.k->glu_min_tokens;
  if (UsesGemm(j, g.kind) || (glu_min > 0 && n_tokens >= glu_min)) return j.k->gemm_pair[kind];
  const int gemv_min =
      j.k->glu_gemv_min_tokens > 0 ? j.k->glu_gemv_min_tokens : j.k->gemv_pair_min_tokens[kind];
  return n_tokens >= gemv_min ? j.k->gemv_pair[kind] : nullptr;
}

}  // namespace

bool IntGluSupported(const PackedWeights& w, int n_tokens, Isa isa) {
  return GluKernel(w, n_tokens, isa) != nullptr;
}

void MatmulGlu(ThreadPool& pool, const PackedWeights& w, const MatmulInput& in, int n_tokens,
               float* out, int64_t ldo, MatmulWorkspace& ws, Isa isa) {
  const kern::IntKernelFn pair = GluKernel(w, n_tokens, isa);
  BRISK_CHECK(pair != nullptr && in.n_wide == 0);
  CheckInputs(w, in, n_tokens, ws, pool);
  const kern::IsaKernels& k = kern::KernelsFor(isa);
  const PackedSegment &gate = w.segments[0], &up = w.segments[1];
  const int64_t groups = gate.n_groups();
  GroupClaims& claims = ws.claims();
  PlanGateClaims(claims, groups, pool.size());
  const Q8Acts& q = *in.q;
  pool.Run([&](int t, int) {
    kern::IntArgs a = TokenArgs(q, w.cols, 0, n_tokens, ldo, ws.thread_scratch(t));
    a.n_groups = 2;
    a.valid_rows = 2 * kGroupRows;
    a.group_bytes = size_t(up.data - gate.data);  // group 1: the same rows of up
    a.glu = k.silu_mul;
    int64_t g0, g1;
    while (claims.Next(t, &g0, &g1))
      for (int64_t g = g0; g < g1; ++g) {
        a.group = gate.data + size_t(g) * gate.group_bytes;
        a.next_group = g + 1 < groups ? a.group + gate.group_bytes : nullptr;
        a.y = out + g * kGroupRows;
        pair(a);
      }
  });
}

void MatmulArgmax(ThreadPool& pool, const PackedWeights& w, const MatmulInput& in, int n_tokens,
                  int32_t* best_row, float* best_value, MatmulWorkspace& ws, Isa isa,
                  std::span<const std::span<const int32_t>> excluded) {
  CheckInputs(w, in, n_tokens, ws, pool);
  BRISK_CHECK(n_tokens >= 0 && n_tokens <= kArgmaxMaxTokens);
  BRISK_CHECK(excluded.empty() || excluded.size() == size_t(n_tokens));
  auto allowed = [&excluded](int tok, int32_t row) {
    if (excluded.empty()) return true;
    const std::span<const int32_t> ex = excluded[size_t(tok)];
    return std::find(ex.begin(), ex.end(), row) == ex.end();
  };
  if (n_tokens == 0) return;
  Job j{&w, &in, n_tokens, nullptr, 0, &ws, &kern::KernelsFor(isa)};
  j.amx = isa == Isa::kAvx512 && AmxEnabled();
  auto slot = [&ws](int t) {
    return reinterpret_cast<Best*>(ws.thread_scratch(t) + UnpackBytes(ws.max_cols()) + YBufBytes());
  };
  PlanClaims(w, pool.size(), ws.claims(), ClaimUnit(j));
  // Better: larger value, or the same value at a lower row (threads visit rows in no fixed order).
  auto better = [](float v, int32_t row, float best_v, int32_t best_row) {
    return best_row < 0 || v > best_v || (v == best_v && row < best_row);
  };
  auto body = [&j, &slot, &better, &allowed](int t, int n) {
    uint8_t* scratch = j.ws->thread_scratch(t);
    float* ybuf = reinterpret_cast<float*>(scratch + UnpackBytes(j.ws->max_cols()));
    Best local;
    for (int i = 0; i < j.n_tokens; ++i) local.row[i] = -1, local.value[i] = 0.0f;
    ForClaimedGroups(*j.w, j.ws->claims(), t, [&](const PackedSegment& s, int64_t g0, int64_t g1) {
      for (int64_t g = g0; g < g1; g += 2) {
        const int64_t ge = std::min(g + 2, g1);
        // y_row_base chosen so the groups' rows land at ybuf[t * 32 + row - 16 g].
        RunGroups(j, s, g, ge, 0, j.n_tokens, ybuf, kArgmaxRows, -g * kGroupRows, scratch);
        const int valid = int(std::min<int64_t>((ge - g) * kGroupRows, s.rows - g * kGroupRows));
        // Most rows lose to the best so far: rule them out with each token's maximum (NaN never
        // taken) and look for the winning row only when one can win.
        float maxes[kArgmaxMaxTokens];
        if (j.k->row_max) {
          j.k->row_max(ybuf, kArgmaxRows, j.n_tokens, valid, maxes);
        } else {
          for (int tok = 0; tok < j.n_tokens; ++tok)
            maxes[tok] = MaxOf(ybuf + tok * kArgmaxRows, valid);
        }
        for (int tok = 0; tok < j.n_tokens; ++tok) {
          const float* yt = ybuf + tok * kArgmaxRows;
          if (local.row[tok] >= 0 && maxes[tok] < local.value[tok]) continue;
          for (int r = 0; r < valid; ++r) {
            const float v = yt[r];
            if (v != v) continue;  // NaN never wins
            const int32_t row = int32_t(s.row0 + g * kGroupRows + r);
            // Excluded rows are checked only where they would win (a few per token).
            if (better(v, row, local.value[tok], local.row[tok]) && allowed(tok, row)) {
              local.row[tok] = row;
              local.value[tok] = v;
            }
          }
        }
      }
    });
    *slot(t) = local;
  };
  pool.Run(body);
  for (int tok = 0; tok < n_tokens; ++tok) {
    int32_t r = -1;
    float v = 0.0f;
    for (int t = 0; t < pool.size(); ++t) {
      const Best& b = *slot(t);
      if (b.row[tok] >= 0 && better(b.value[tok], b.row[tok], v, r))
        r = b.row[tok], v = b.value[tok];
    }
    const bool found = r >= 0;
    if (!found) {  // every row NaN or excluded: the lowest allowed row (as a sampler falls back)
      r = 0;
      while (r < int32_t(w.rows) && !allowed(tok, r)) ++r;
      if (r == int32_t(w.rows)) r = 0;
    }
    best_row[tok] = r;
    best_value[tok] = found ? v : std::numeric_limits<float>::quiet_NaN();
  }
}

}  // namespace brisk
