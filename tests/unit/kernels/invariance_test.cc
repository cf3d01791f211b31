// Batch invariance (DESIGN §5): for each ISA, a (row, token) output is bitwise the same whatever
// the number of tokens in the call, the path (GEMV / GEMM), the token offset and the threads.
#include "kernel_test_util.h"

namespace brisk::test {
namespace {

struct PathGuard {
  int saved = GemmMinTokensOverride();
  bool amx = AmxEnabled();
  ~PathGuard() {
    SetGemmMinTokensForTesting(saved);
    SetAmxForTesting(amx);
  }
};

class Invariance : public ::testing::TestWithParam<GgmlType> {};

TEST_P(Invariance, BitwiseAcrossTokensPathsAndThreads) {
  const GgmlType type = GetParam();
  const int64_t rows = 80, cols = 512;       // 5 row groups: also exercises the token-split branch
  const int total = SmallTests() ? 32 : 64;  // small: sanitizer runs
  const auto w = RandomWeights(type, rows, cols, 77);
  const auto x = RandomActs(total, cols, 78);
  Q8ActsBuffer qb(total, cols);
  QuantizeActs(x.data(), cols, total, &qb.view());
  const PackedWeights pw = PackWeights(type, w.data(), rows, cols);
  PathGuard guard;
  for (Isa isa : TestIsas()) {
    std::vector<float> ref;
    for (int variant = 0; variant < 3; ++variant) {
      // AMX tiles (avx512 GEMM path) on and off must give the same bits.
      SetAmxForTesting(variant < 2 ? guard.amx : false);
      const int threads = variant == 1 ? 1 : 2;
      {
        ThreadPool pool(threads);
        MatmulWorkspace ws(cols, threads);
        for (int min_gemm : {1000, 1, 0}) {  // force GEMV, force GEMM, the tier's default
          SetGemmMinTokensForTesting(min_gemm);
          // 20: one full 16-token AMX tile plus a 4-token remainder tile (then 12: VNNI);
          // 13 and 17 (9 + 8): VNNI tiles of uneven token groups.
          for (int n : {64, 1, 2, 7, 32, 20, 13, 17}) {
            if (n > total || (SmallTests() && (n == 2 || n == 64))) continue;
            std::vector<float> y(size_t(total) * rows, -1.0f);
            for (int t0 = 0; t0 < total; t0 += n) {
              const int nt = std::min(n, total - t0);
              Q8Acts view = qb.view();
              view.qs += t0 * view.qs_stride;
              view.meta += t0 * view.meta_stride;
              view.n_tokens = nt;
              MatmulInput in;
              in.q = &view;
              in.x = x.data() + size_t(t0) * cols;
              in.ldx = cols;
              Matmul(pool, pw, in, nt, y.data() + size_t(t0) * rows, rows, ws, isa);
            }
            if (ref.empty()) {
              ref = y;
              continue;
            }
            std::string where;
            ASSERT_TRUE(BitEqual(y, ref, &where))
                << IsaName(isa) << " threads " << threads << " gemm_min " << min_gemm << " n " << n
                << " amx " << AmxEnabled() << ": " << where;
          }
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Types, Invariance,
                         ::testing::Values(GgmlType::kQ4_0, GgmlType::kQ4_1, GgmlType::kQ5_0,
                                           GgmlType::kQ5_1, GgmlType::kQ8_0, GgmlType::kQ4_K,
                                           GgmlType::kQ5_K, GgmlType::kQ6_K, GgmlType::kF32,
                                           GgmlType::kF16, GgmlType::kBF16, GgmlType::kQ2_K,
                                           GgmlType::kIQ4_NL, GgmlType::kIQ4_XS),
                         [](const auto& info) { return std::string(TypeName(info.param)); });

}  // namespace
}  // namespace brisk::test
