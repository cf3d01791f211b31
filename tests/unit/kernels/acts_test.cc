// Activation quantisation and fused RMSNorm+quantise: every ISA bit-equal to scalar, and the
// scalar result within the int8 rounding bound of the float values.
#include "kernel_test_util.h"
#include "kernels/cpu/reference.h"

namespace brisk::test {
namespace {

void ExpectSameActs(const Q8Acts& a, const Q8Acts& b, int n, const std::string& what) {
  for (int t = 0; t < n; ++t) {
    ASSERT_EQ(0, std::memcmp(a.qs + t * a.qs_stride, b.qs + t * b.qs_stride, size_t(a.cols)))
        << what;
    ASSERT_EQ(0, std::memcmp(a.meta + t * a.meta_stride, b.meta + t * b.meta_stride,
                             sizeof(ActMeta) * size_t(a.cols / 32)))
        << what;
  }
}

TEST(Acts, QuantizeWithinBoundAndSameOnEveryIsa) {
  for (int64_t cols : {32, 896, 4864}) {
    const int n = 5;
    auto x = RandomActs(n, cols, uint32_t(cols));
    for (int i = 0; i < 32; ++i) x[size_t(cols) + i] = 0.0f;  // an all-zero block
    Q8ActsBuffer ref(n, cols);
    QuantizeActs(x.data(), cols, n, &ref.view(), Isa::kScalar);
    const Q8Acts& q = ref.view();
    for (int t = 0; t < n; ++t)
      for (int64_t b = 0; b < cols / 32; ++b) {
        const ActMeta& m = q.meta[t * q.meta_stride + b];
        int sum = 0, h0 = 0;
        for (int i = 0; i < 32; ++i) {
          const int v = q.qs[t * q.qs_stride + b * 32 + i];
          sum += v;
          h0 += i < 16 ? v : 0;
          EXPECT_LE(std::fabs(x[size_t(t) * cols + b * 32 + i] - m.d * v), 0.5001f * m.d + 1e-30f);
        }
        EXPECT_EQ(m.sum, sum);
        EXPECT_EQ(m.neg8, -8 * sum);
        EXPECT_EQ(m.neg16, -16 * sum);
        EXPECT_EQ(m.neg128, -128 * sum);
        EXPECT_EQ(m.neg32h[0], -32 * h0);
        EXPECT_EQ(m.neg32h[1], -32 * (sum - h0));
        EXPECT_EQ(m.dsum, m.d * float(sum));
      }
    for (Isa isa : TestIsas()) {
      Q8ActsBuffer got(n, cols);
      QuantizeActs(x.data(), cols, n, &got.view(), isa);
      ExpectSameActs(got.view(), q, n, std::string(IsaName(isa)) + " cols " + std::to_string(cols));
    }
  }
}

TEST(Acts, RmsNormQuantizeMatchesReferenceAndIsSameOnEveryIsa) {
  for (int64_t cols : {896, 4864}) {
    const int n = 3;
    const auto x = RandomActs(n, cols, 5);
    const auto w = RandomActs(1, cols, 6);
    Q8ActsBuffer ref(n, cols);
    std::vector<float> xn_ref(size_t(n) * cols);
    RmsNormQuantize(x.data(), cols, n, w.data(), 1e-6f, &ref.view(), xn_ref.data(), cols,
                    Isa::kScalar);
    for (int t = 0; t < n; ++t) {
      std::vector<float> want(cols);
      ref::RmsNorm(&x[size_t(t) * cols], w.data(), cols, 1e-6, want.data());
      for (int64_t i = 0; i < cols; ++i)
        EXPECT_NEAR(xn_ref[size_t(t) * cols + i], want[i], 1e-5f * (1 + std::fabs(want[i])));
    }
    for (Isa isa : TestIsas()) {
      Q8ActsBuffer got(n, cols);
      std::vector<float> xn(size_t(n) * cols);
      RmsNormQuantize(x.data(), cols, n, w.data(), 1e-6f, &got.view(), xn.data(), cols, isa);
      ExpectSameActs(got.view(), ref.view(), n, std::string(IsaName(isa)));
      std::string where;
      EXPECT_TRUE(BitEqual(xn, xn_ref, &where)) << IsaName(isa) << " " << where;
    }
  }
}

}  // namespace
}  // namespace brisk::test
