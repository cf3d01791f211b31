// Every matmul kernel against (1) a float64 dot of the dequantised weights with the SAME int8
// activations (isolates kernel error: only float rounding of scales and the block accumulation
// remains) and (2) the float reference on the unquantised activations with a bound derived from
// the int8 rounding; and every SIMD ISA bit-for-bit against the scalar kernels.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <span>

#include "kernel_test_util.h"
#include "kernels/cpu/elementwise.h"

namespace brisk::test {
namespace {

const GgmlType kTypes[] = {GgmlType::kQ4_0, GgmlType::kQ4_1,   GgmlType::kQ5_0,  GgmlType::kQ5_1,
                           GgmlType::kQ8_0, GgmlType::kQ4_K,   GgmlType::kQ5_K,  GgmlType::kQ6_K,
                           GgmlType::kF32,  GgmlType::kF16,    GgmlType::kBF16,  GgmlType::kQ2_K,
                           GgmlType::kQ3_K, GgmlType::kIQ4_NL, GgmlType::kIQ4_XS};

struct Shape {
  int64_t rows, cols;
  int n_tokens;
};

std::vector<float> RunMatmul(ThreadPool& pool, const PackedWeights& pw, const float* x,
                             const Q8Acts* q, int n_tokens, Isa isa) {
  std::vector<float> y(size_t(n_tokens) * size_t(pw.rows), -12345.0f);
  MatmulWorkspace ws(pw.cols, pool.size());
  MatmulInput in;
  in.q = q;
  in.x = x;
  in.ldx = pw.cols;
  Matmul(pool, pw, in, n_tokens, y.data(), pw.rows, ws, isa);
  return y;
}

void CheckType(ThreadPool& pool, GgmlType type, const Shape& s, uint32_t seed) {
  SCOPED_TRACE(std::string(TypeName(type)) + " rows " + std::to_string(s.rows) + " cols " +
               std::to_string(s.cols) + " tokens " + std::to_string(s.n_tokens));
  const std::vector<uint8_t> w = RandomWeights(type, s.rows, s.cols, seed);
  const std::vector<float> x = RandomActs(s.n_tokens, s.cols, seed + 1);
  const PackedWeights pw = PackWeights(type, w.data(), s.rows, s.cols, &pool);
  Q8ActsBuffer qb(s.n_tokens, s.cols);
  QuantizeActs(x.data(), s.cols, s.n_tokens, &qb.view(), Isa::kScalar);
  const bool int8 = pw.uses_q8();
  const std::vector<float> xq = int8 ? DequantizeActs(qb.view(), s.n_tokens) : x;
  const std::vector<float> wf = DequantizeAll(type, w, s.rows, s.cols);

  const std::vector<float> y = RunMatmul(pool, pw, x.data(), &qb.view(), s.n_tokens, Isa::kScalar);
  int bad = 0;
  for (int t = 0; t < s.n_tokens && bad < 5; ++t)
    for (int64_t r = 0; r < s.rows && bad < 5; ++r) {
      const float* wr = &wf[size_t(r) * s.cols];
      double exact = 0, mag = 0, full = 0, qerr = 0;
      for (int64_t i = 0; i < s.cols; ++i) {
        const double a = xq[size_t(t) * s.cols + i], xf = x[size_t(t) * s.cols + i];
        exact += double(wr[i]) * a;
        mag += std::fabs(double(wr[i]) * a) + std::fabs(double(wr[i]) * xf);
        full += double(wr[i]) * xf;
      }
      if (int8)  // |x - d q| <= d / 2 per value (plus rounding of x * id)
        for (int64_t b = 0; b < s.cols / 32; ++b) {
          double sw = 0;
          for (int i = 0; i < 32; ++i) sw += std::fabs(double(wr[b * 32 + i]));
          qerr += 0.51 * qb.view().meta[t * qb.view().meta_stride + b].d * sw;
        }
      const double got = y[size_t(t) * s.rows + r];
      const double tol = 2e-5 * mag + 1e-5;
      if (!(std::fabs(got - exact) <= tol) || !(std::fabs(got - full) <= qerr + tol)) {
        ADD_FAILURE() << "row " << r << " token " << t << ": got " << got << " exact " << exact
                      << " (tol " << tol << ") float ref " << full << " (bound " << qerr + tol
                      << ")";
        ++bad;
      }
    }
  for (Isa isa : TestIsas()) {
    if (isa == Isa::kScalar) continue;
    const std::vector<float> yi = RunMatmul(pool, pw, x.data(), &qb.view(), s.n_tokens, isa);
    std::string where;
    EXPECT_TRUE(BitEqual(yi, y, &where)) << IsaName(isa) << " differs from scalar at " << where;
  }
  // Where the CPU has AVX-VNNI the avx2 tier runs on it (above); its vpmaddubsw kernels too.
  if (AvxVnniEnabled() && IsaSupported(Isa::kAvx2)) {
    SetAvxVnniForTesting(false);
    const std::vector<float> yi = RunMatmul(pool, pw, x.data(), &qb.view(), s.n_tokens, Isa::kAvx2);
    SetAvxVnniForTesting(true);
    std::string where;
    EXPECT_TRUE(BitEqual(yi, y, &where)) << "avx2 without VNNI differs from scalar at " << where;
  }
}

std::vector<Shape> ShapesFor(GgmlType type) {
  const int bs = GetTypeTraits(type).block_size;
  // 9..32 tokens take the two-group GEMV kernel where the tier has one (Q8_0 from 16): 50 rows
  // end in a pair whose second group has 2 rows, 130 rows in a group left alone.
  std::vector<Shape> all = {{896, 896, 1},  {128, 896, 3}, {37, 896, 70},  {896, 4864, 5},
                            {4864, 896, 2}, {37, 512, 9},  {130, 256, 17}, {16, 4864, 1},
                            {50, 512, 10},  {50, 256, 17}};
  if (SmallTests()) all = {{37, 512, 9}, {130, 256, 3}, {21, 896, 2}, {50, 256, 17}};
  std::vector<Shape> out;
  for (const Shape& s : all)
    if (s.cols % bs == 0) out.push_back(s);
  return out;
}

class MatmulTypes : public ::testing::TestWithParam<GgmlType> {};

TEST_P(MatmulTypes, MatchesReferencesOnEveryIsa) {
  ThreadPool pool(2);
  uint32_t seed = 100;
  for (const Shape& s : ShapesFor(GetParam())) CheckType(pool, GetParam(), s, seed += 7);
}

INSTANTIATE_TEST_SUITE_P(AllTypes, MatmulTypes, ::testing::ValuesIn(kTypes),
                         [](const auto& info) { return std::string(TypeName(info.param)); });

// The lm_head shape (151936 x 896) for the types it ships in, with few tokens.
TEST(Matmul, LmHeadShape) {
  if (SmallTests()) GTEST_SKIP() << "large shape skipped in small mode";
  ThreadPool pool(2);
  CheckType(pool, GgmlType::kQ8_0, {151936, 896, 2}, 7);
  CheckType(pool, GgmlType::kQ5_0, {151936, 896, 1}, 8);
}

TEST(Matmul, ConcatenatedSegmentsEqualSeparateMatmuls) {
  ThreadPool pool(2);
  const int64_t cols = 512;
  const int n = 5;
  const auto wa = RandomWeights(GgmlType::kQ5_0, 40, cols, 1);
  const auto wb = RandomWeights(GgmlType::kQ8_0, 24, cols, 2);
  const auto wc = RandomWeights(GgmlType::kQ4_K, 19, cols, 3);
  const auto x = RandomActs(n, cols, 4);
  Q8ActsBuffer qb(n, cols);
  QuantizeActs(x.data(), cols, n, &qb.view());
  const PackedWeights cat = PackWeightsConcat({{GgmlType::kQ5_0, wa.data(), 40},
                                               {GgmlType::kQ8_0, wb.data(), 24},
                                               {GgmlType::kQ4_K, wc.data(), 19}},
                                              cols, &pool);
  ASSERT_EQ(cat.rows, 83);
  for (Isa isa : TestIsas()) {
    const auto y = RunMatmul(pool, cat, x.data(), &qb.view(), n, isa);
    const PackedWeights parts[] = {PackWeights(GgmlType::kQ5_0, wa.data(), 40, cols),
                                   PackWeights(GgmlType::kQ8_0, wb.data(), 24, cols),
                                   PackWeights(GgmlType::kQ4_K, wc.data(), 19, cols)};
    int64_t row0 = 0;
    for (const PackedWeights& p : parts) {
      const auto yp = RunMatmul(pool, p, x.data(), &qb.view(), n, isa);
      for (int t = 0; t < n; ++t)
        for (int64_t r = 0; r < p.rows; ++r)
          ASSERT_EQ(BitsFromFp32(yp[t * p.rows + r]), BitsFromFp32(y[t * cat.rows + row0 + r]))
              << IsaName(isa) << " row " << row0 + r << " token " << t;
      row0 += p.rows;
    }
  }
}

// The integer path's fused gate/up + SwiGLU (MatmulGlu) gives the bits of Matmul into
// [gate; up] followed by SiluMul, for every integer kind, at token counts that take the GEMM path
// on their own (40, 77: ragged tiles), one forced there (12) and two on the two-group GEMV path
// (8: below the plain matmul's threshold, 16); gate values reach both tails of the SiLU.
TEST(Matmul, IntGluEqualsMatmulThenSilu) {
  ThreadPool pool(2);
  const int saved = GemmMinTokensOverride();
  const int64_t rows = 96;
  int forced_checked = 0;  // avx512 runs at 12 tokens with the GEMM path forced
  int gemv_checked = 0;    // avx512 runs at 8 and 16 tokens (GemvPair)
  for (GgmlType type :
       {GgmlType::kQ4_0, GgmlType::kQ4_1, GgmlType::kQ5_0, GgmlType::kQ5_1, GgmlType::kQ8_0,
        GgmlType::kQ4_K, GgmlType::kQ5_K, GgmlType::kQ6_K, GgmlType::kIQ4_NL, GgmlType::kIQ4_XS}) {
    const int64_t cols = GetTypeTraits(type).block_size == 256 ? 512 : 896;
    // 28: the fused kernel's own threshold (IsaKernels::glu_min_tokens) while the plain matmul
    // still takes the gemv path, so the two paths' bits meet here.
    for (int n : {8, 12, 16, 28, 40, 77}) {
      SCOPED_TRACE(std::string(TypeName(type)) + ", tokens " + std::to_string(n));
      SetGemmMinTokensForTesting(n == 12 ? 12 : saved);
      const auto wg = RandomWeights(type, rows, cols, 31 + n),
                 wu = RandomWeights(type, rows, cols, 57);
      const PackedWeights pw =
          PackWeightsConcat({{type, wg.data(), rows}, {type, wu.data(), rows}}, cols, &pool);
      std::vector<float> x = RandomActs(n, cols, 5 + n);
      for (float& v : x) v *= 4.0f;
      Q8ActsBuffer qb(n, cols);
      QuantizeActs(x.data(), cols, n, &qb.view());
      for (Isa isa : TestIsas()) {
        if (!IntGluSupported(pw, n, isa)) continue;  // no two-group GEMM kernel on this tier
        const auto y = RunMatmul(pool, pw, x.data(), &qb.view(), n, isa);
        std::vector<float> want(size_t(n) * rows), got(size_t(n) * rows, -12345.0f);
        for (int t = 0; t < n; ++t)
          SiluMul(&y[size_t(t) * 2 * rows], &y[size_t(t) * 2 * rows + rows], rows,
                  &want[size_t(t) * rows], isa);
        MatmulWorkspace ws(cols, pool.size());
        MatmulInput in;
        in.q = &qb.view();
        in.x = x.data();
        in.ldx = cols;
        MatmulGlu(pool, pw, in, n, got.data(), rows, ws, isa);
        for (size_t i = 0; i < got.size(); ++i)
          ASSERT_EQ(BitsFromFp32(got[i]), BitsFromFp32(want[i])) << IsaName(isa) << " value " << i;
        forced_checked += n == 12 && isa == Isa::kAvx512;
        gemv_checked += (n == 8 || n == 16) && isa == Isa::kAvx512 && type != GgmlType::kQ6_K;
      }
    }
  }
  SetGemmMinTokensForTesting(saved);
  // The avx512 tier has the two-group GEMM kernel for every integer kind: with the GEMM path
  // forced, the fused path must have run for all eight; the two-group GEMV kernel at 8 and 16
  // tokens for all but Q6_K (which has none; its fused path at 16 tokens is the GEMM one).
  if (IsaSupported(Isa::kAvx512) && !AmxEnabled()) {
    EXPECT_EQ(forced_checked, 8);
    EXPECT_EQ(gemv_checked, 14);
  }
}

// 3 tokens take the GEMV path, 20 the two-group GEMV kernel and 30 the GEMM path, forced (Q8_0
// would stay on GEMV; two-group kernels where the tier has them); 1000 rows end in a partial
// group.
TEST(Matmul, ArgmaxMatchesFullOutput) {
  const int saved = GemmMinTokensOverride();
  ThreadPool pool(2);
  const int64_t rows = SmallTests() ? 1000 : 20011, cols = 896;
  constexpr int kMaxN = 30;
  const auto w = RandomWeights(GgmlType::kQ8_0, rows, cols, 9);
  const PackedWeights pw = PackWeights(GgmlType::kQ8_0, w.data(), rows, cols, &pool);
  MatmulWorkspace ws(cols, pool.size());
  for (int n : {3, 20, kMaxN}) {
    SetGemmMinTokensForTesting(n == kMaxN ? kMaxN : saved);
    const auto x = RandomActs(n, cols, 10);
    Q8ActsBuffer qb(n, cols);
    QuantizeActs(x.data(), cols, n, &qb.view());
    for (Isa isa : TestIsas()) {
      const auto y = RunMatmul(pool, pw, x.data(), &qb.view(), n, isa);
      int32_t best[kMaxN];
      float val[kMaxN];
      MatmulInput in;
      in.q = &qb.view();
      MatmulArgmax(pool, pw, in, n, best, val, ws, isa);
      for (int t = 0; t < n; ++t) {
        const float* yt = &y[size_t(t) * rows];
        const int64_t want = std::max_element(yt, yt + rows) - yt;
        EXPECT_EQ(best[t], want) << IsaName(isa) << " tokens " << n;
        EXPECT_EQ(val[t], yt[want]);
      }
    }
  }
  SetGemmMinTokensForTesting(saved);
}

// Excluded rows never win: each even token excludes its three best rows (the winner is then its
// fourth best), odd tokens exclude nothing, and a token with every row excluded falls back to
// row 0 with a NaN value. 20 tokens: the two-group GEMV kernel where the tier has one.
TEST(Matmul, ArgmaxSkipsExcludedRows) {
  ThreadPool pool(2);
  const int64_t rows = 1000, cols = 896;
  const int n = 20;
  const auto w = RandomWeights(GgmlType::kQ8_0, rows, cols, 31);
  const PackedWeights pw = PackWeights(GgmlType::kQ8_0, w.data(), rows, cols, &pool);
  MatmulWorkspace ws(cols, pool.size());
  const auto x = RandomActs(n, cols, 32);
  Q8ActsBuffer qb(n, cols);
  QuantizeActs(x.data(), cols, n, &qb.view());
  std::vector<int32_t> all(rows);
  for (int64_t r = 0; r < rows; ++r) all[size_t(r)] = int32_t(r);
  for (Isa isa : TestIsas()) {
    const auto y = RunMatmul(pool, pw, x.data(), &qb.view(), n, isa);
    std::vector<std::vector<int32_t>> ranked(n), excluded(n);
    std::vector<std::span<const int32_t>> spans;
    for (int t = 0; t < n; ++t) {
      const float* yt = &y[size_t(t) * rows];
      ranked[size_t(t)] = all;
      std::stable_sort(ranked[size_t(t)].begin(), ranked[size_t(t)].end(),
                       [yt](int32_t a, int32_t b) { return yt[a] > yt[b]; });
      if (t % 2 == 0)
        excluded[size_t(t)].assign(ranked[size_t(t)].begin(), ranked[size_t(t)].begin() + 3);
      if (t == n - 1) excluded[size_t(t)] = all;
      spans.emplace_back(excluded[size_t(t)]);
    }
    int32_t best[n];
    float val[n];
    MatmulInput in;
    in.q = &qb.view();
    MatmulArgmax(pool, pw, in, n, best, val, ws, isa, spans);
    for (int t = 0; t + 1 < n; ++t) {
      const int32_t want = ranked[size_t(t)][t % 2 == 0 ? 3 : 0];
      EXPECT_EQ(best[t], want) << IsaName(isa) << " token " << t;
      EXPECT_EQ(val[t], y[size_t(t) * rows + size_t(want)]);
    }
    EXPECT_EQ(best[n - 1], 0) << IsaName(isa);
    EXPECT_TRUE(std::isnan(val[n - 1])) << IsaName(isa);
  }
}

// Rows with equal outputs: the lowest row wins whichever threads claimed which groups.
TEST(Matmul, ArgmaxTiesGoToTheLowestRow) {
  ThreadPool pool(4);
  const int64_t rows = 4000, cols = 64;
  const int n = 2;
  auto w = RandomWeights(GgmlType::kQ8_0, rows, cols, 21);
  const size_t row_bytes = w.size() / size_t(rows);
  // Rows 0..1999 a copy of row 2000, the upper half all equal too: every output ties.
  for (int64_t r = 0; r < rows; ++r)
    std::copy(w.begin() + 2000 * row_bytes, w.begin() + 2001 * row_bytes,
              w.begin() + r * row_bytes);
  const auto x = RandomActs(n, cols, 22);
  Q8ActsBuffer qb(n, cols);
  QuantizeActs(x.data(), cols, n, &qb.view());
  const PackedWeights pw = PackWeights(GgmlType::kQ8_0, w.data(), rows, cols, &pool);
  MatmulWorkspace ws(cols, pool.size());
  for (Isa isa : TestIsas())
    for (int rep = 0; rep < 20; ++rep) {
      int32_t best[n];
      float val[n];
      MatmulInput in;
      in.q = &qb.view();
      MatmulArgmax(pool, pw, in, n, best, val, ws, isa);
      for (int t = 0; t < n; ++t) EXPECT_EQ(best[t], 0) << IsaName(isa) << " rep " << rep;
      // With row 0 excluded for token 1, the next lowest tie wins there.
      const int32_t zero = 0;
      const std::span<const int32_t> ex[n] = {{}, std::span(&zero, 1)};
      MatmulArgmax(pool, pw, in, n, best, val, ws, isa, ex);
      EXPECT_EQ(best[0], 0) << IsaName(isa) << " rep " << rep;
      EXPECT_EQ(best[1], 1) << IsaName(isa) << " rep " << rep;
    }
}

}  // namespace
}  // namespace brisk::test
