// SiluMul: every ISA tier gives the scalar tier's bits, and the value is silu(g) * u within a few
// ulp of a float64 reference, including the clamped tails of e^-x.
#include "kernels/cpu/elementwise.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

namespace brisk {
namespace {

TEST(SiluMul, EveryIsaBitwiseEqualAndCloseToFloat64) {
  std::mt19937 rng(3);
  std::normal_distribution<float> nd(0.0f, 4.0f);
  std::vector<float> g(4864 + 7), u(g.size());
  for (size_t i = 0; i < g.size(); ++i) g[i] = nd(rng), u[i] = nd(rng);
  // Tails and special points: exp clamps on both sides, zeros of both signs.
  const float specials[] = {0.0f,  -0.0f,  1e-30f, -1e-30f, 86.9f, -86.9f, 87.5f, -87.5f,
                            88.5f, -88.5f, 100.0f, -100.0f, 1e4f,  -1e4f,  0.5f,  -0.5f};
  for (size_t i = 0; i < std::size(specials); ++i) g[i] = specials[i], u[i] = 1.0f;
  std::vector<float> want(g.size());
  SiluMul(g.data(), u.data(), int64_t(g.size()), want.data(), Isa::kScalar);
  for (Isa isa : AllIsas(/*from=*/1)) {  // the SIMD tiers, x86 and ARM
    if (!IsaSupported(isa)) continue;
    std::vector<float> got(g.size(), -1.0f);
    SiluMul(g.data(), u.data(), int64_t(g.size()), got.data(), isa);
    EXPECT_EQ(0, std::memcmp(got.data(), want.data(), got.size() * sizeof(float))) << IsaName(isa);
  }
  for (size_t i = 0; i < g.size(); ++i) {
    const double x = g[i];
    const double ref = x / (1.0 + std::exp(-x)) * double(u[i]);
    // 4 ulp of the result; where e^-x is clamped (x < -87) the true value is below 1e-35 and
    // ours is x e^-88, both zero for any use.
    const double floor = x < -87.0 ? 1e-30 : 1e-37;
    const double tol = 4 * std::numeric_limits<float>::epsilon() * std::fabs(ref) + floor;
    EXPECT_NEAR(want[i], ref, tol) << "g " << g[i] << " u " << u[i];
  }
}

TEST(SiluMul, OutputMayAliasTheGate) {
  std::vector<float> g = {-3.0f, -1.0f, 0.0f, 2.0f, 5.0f}, u = {1.0f, 2.0f, 3.0f, 4.0f, 5.0f};
  std::vector<float> separate(g.size());
  SiluMul(g.data(), u.data(), int64_t(g.size()), separate.data());
  SiluMul(g.data(), u.data(), int64_t(g.size()), g.data());
  EXPECT_EQ(0, std::memcmp(g.data(), separate.data(), g.size() * sizeof(float)));
}

}  // namespace
}  // namespace brisk
