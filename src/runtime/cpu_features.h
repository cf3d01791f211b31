// CPU feature detection (CPUID + XGETBV on x86, getauxval HWCAP / HWCAP2 on aarch64) and the
// choice of the kernel instruction set. The ISA is chosen once at start (best the CPU and OS
// support), can be overridden with BRISK_ISA=scalar|avx2|avx512 (x86) or scalar|neon|dotprod|i8mm
// (aarch64), and tests force each ISA in turn with SetIsaForTesting.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace brisk {

// Kernel tiers, ordered: a higher tier needs everything a lower one needs.
enum class Isa : int {
  kScalar = 0,  // portable C++ (any x86-64 or other target)
  kAvx2 = 1,    // AVX2 + FMA + F16C (Haswell, Zen 1+)
  kAvx512 = 2,  // AVX-512 F/BW/VL/DQ + VNNI (Ice Lake, Sapphire Rapids, Zen 4+)
  // aarch64 tiers (never supported on x86, nor the x86 ones on ARM), ordered among themselves:
  kNeon = 3,     // ARMv8.0 Advanced SIMD (every aarch64 CPU: Cortex-A53/A72, Pi 3/4)
  kDotprod = 4,  // + sdot/udot (ARMv8.2 DotProd: Cortex-A76 / Pi 5, Neoverse N1 / Graviton 2)
  kI8mm = 5,     // + smmla (ARMv8.6 I8MM: Neoverse V1 / Graviton 3, Apple M2+, Ampere One)
};
inline constexpr int kNumIsas = 6;

struct CpuFeatures {
  bool avx2 = false, fma = false, f16c = false;
  bool avx512f = false, avx512bw = false, avx512vl = false, avx512dq = false;
  bool avx512vnni = false, avx512bf16 = false, avx_vnni = false;
  bool amx_tile = false, amx_int8 = false;  // CPU has AMX and XCR0 enables the tile state
  bool amx_bf16 = false, avx512vbmi = false;
  bool os_avx = false, os_avx512 = false;  // XCR0 says the OS saves the ymm / zmm state
  bool neon = false, dotprod = false, i8mm = false, fphp = false;  // aarch64 HWCAP / HWCAP2
  std::string brand;                                               // "Intel(R) Xeon(R) ..."
};

// Detected once (thread-safe static).
const CpuFeatures& GetCpuFeatures();

bool IsaSupported(Isa isa);  // the CPU and OS can run kernels of this tier
// Isa(from) .. Isa(kNumIsas - 1), supported here or not (tests loop over every tier and skip the
// ones IsaSupported denies).
inline std::vector<Isa> AllIsas(int from = 0) {
  std::vector<Isa> out;
  for (int i = from; i < kNumIsas; ++i) out.push_back(Isa(i));
  return out;
}
Isa BestIsa();  // highest supported tier

// The ISA kernels use: BRISK_ISA if set and supported (an unsupported request falls back to the
// best supported tier with a warning on stderr), else BestIsa().
Isa ActiveIsa();
// Forces the active ISA (tests, benchmarks); BRISK_CHECKs that it is supported.
void SetIsaForTesting(Isa isa);

// AMX int8 tiles as an accelerator of the avx512 tier's GEMM path (prefill, large batches). The
// integer block sums are exact either way, so results are bitwise the same with or without it.
// True when the CPU has AMX-INT8, the OS enables it and Linux granted this process the tile data
// permission (requested on first call), unless BRISK_AMX=0 or SetAmxForTesting(false).
bool AmxEnabled();
void SetAmxForTesting(bool on);  // on only takes effect where AMX is usable
// AMX-BF16 (with AVX512-BF16 and -VBMI for the conversions) as well: the avx512 tier's prefill
// matmul path (matmul.h, numerics classes). Follows AmxEnabled() (BRISK_AMX=0 turns both off).
bool AmxBf16Enabled();
// AVX-VNNI (vpdpbusd on ymm, without AVX-512) for the avx2 tier's integer matmuls: bitwise the
// same as its vpmaddubsw kernels. True where the CPU has it, unless BRISK_AVX_VNNI=0 or
// SetAvxVnniForTesting(false).
bool AvxVnniEnabled();
void SetAvxVnniForTesting(bool on);  // on only takes effect where the CPU has AVX-VNNI

std::string_view IsaName(Isa isa);  // "scalar", "avx2", "avx512", "neon", "dotprod", "i8mm"
bool ParseIsa(std::string_view s, Isa* out);  // inverse of IsaName (case-insensitive)
std::string DescribeCpu();                    // one line: brand + feature flags, for reports

}  // namespace brisk
