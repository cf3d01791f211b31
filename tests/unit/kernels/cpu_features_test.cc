#include "runtime/cpu_features.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "runtime/machine_probe.h"

namespace brisk {
namespace {

TEST(CpuFeatures, NamesRoundTripAndBestIsSupported) {
  for (int i = 0; i < kNumIsas; ++i) {
    Isa back;
    ASSERT_TRUE(ParseIsa(IsaName(Isa(i)), &back));
    EXPECT_EQ(back, Isa(i));
  }
  Isa isa;
  EXPECT_TRUE(ParseIsa("AVX2", &isa));
  EXPECT_FALSE(ParseIsa("sse9", &isa));
  EXPECT_TRUE(IsaSupported(Isa::kScalar));
  EXPECT_TRUE(IsaSupported(BestIsa()));
  std::printf("[ cpu: %s; best ISA %s ]\n", DescribeCpu().c_str(),
              std::string(IsaName(BestIsa())).c_str());
}

// BRISK_ISA names the tier where the CPU has it (scripts/test-aarch64 runs this under qemu with
// BRISK_ISA=neon|dotprod on a CPU model that has more).
TEST(CpuFeatures, BriskIsaOverrideIsHonoured) {
  const char* env = std::getenv("BRISK_ISA");
  Isa want;
  if (!env || !ParseIsa(env, &want) || !IsaSupported(want)) GTEST_SKIP() << "BRISK_ISA not set";
  EXPECT_EQ(ActiveIsa(), want) << env;
  std::printf("[ BRISK_ISA=%s: active ISA %s ]\n", env, std::string(IsaName(ActiveIsa())).c_str());
}

TEST(CpuFeatures, SetIsaForTestingChangesActive) {
  const Isa saved = ActiveIsa();
  SetIsaForTesting(Isa::kScalar);
  EXPECT_EQ(ActiveIsa(), Isa::kScalar);
  SetIsaForTesting(BestIsa());
  EXPECT_EQ(ActiveIsa(), BestIsa());
  SetIsaForTesting(saved);
}

TEST(MachineProbe, SmallRunsGivePositiveNumbers) {
  ThreadPool pool(2);
  const BandwidthResult bw = MeasureReadBandwidth(pool, size_t(64) << 20, 1);
  EXPECT_GT(bw.gb_per_s, 0.1);
  const Int8PeakResult peak = MeasureInt8Peak(pool, 0.02);
  if (peak.instruction != "none") EXPECT_GT(peak.gops, 1.0);
}

}  // namespace
}  // namespace brisk
