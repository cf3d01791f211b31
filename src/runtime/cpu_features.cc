#include "runtime/cpu_features.h"

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "util/ascii.h"
#include "util/check.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>
#define BRISK_X86 1
#endif
#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#define BRISK_ARM64 1
#endif

namespace brisk {
namespace {

#if BRISK_X86
// XGETBV via inline asm: the intrinsic needs -mxsave, and this file is built for any x86-64.
uint64_t ReadXcr0() {
  uint32_t lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (uint64_t(hi) << 32) | lo;
}
#endif

CpuFeatures Detect() {
  CpuFeatures f;
#if BRISK_X86
  unsigned a, b, c, d;
  if (!__get_cpuid(0, &a, &b, &c, &d)) return f;
  const unsigned max_leaf = a;
  __get_cpuid(1, &a, &b, &c, &d);
  const bool osxsave = (c >> 27) & 1;
  f.fma = (c >> 12) & 1;
  f.f16c = (c >> 29) & 1;
  const bool avx = (c >> 28) & 1;
  if (osxsave && avx) {
    const uint64_t xcr0 = ReadXcr0();
    f.os_avx = (xcr0 & 0x6) == 0x6;                   // xmm + ymm state
    f.os_avx512 = f.os_avx && (xcr0 & 0xe0) == 0xe0;  // opmask + zmm_hi256 + hi16_zmm
  }
  if (max_leaf >= 7) {
    __cpuid_count(7, 0, a, b, c, d);
    f.avx2 = (b >> 5) & 1;
    f.avx512f = (b >> 16) & 1;
    f.avx512dq = (b >> 17) & 1;
    f.avx512bw = (b >> 30) & 1;
    f.avx512vl = (b >> 31) & 1;
    f.avx512vnni = (c >> 11) & 1;
    f.avx512vbmi = (c >> 1) & 1;
    f.amx_tile = (d >> 24) & 1;
    f.amx_int8 = (d >> 25) & 1;
    f.amx_bf16 = (d >> 22) & 1;
    __cpuid_count(7, 1, a, b, c, d);
    f.avx_vnni = (a >> 4) & 1;
    f.avx512bf16 = (a >> 5) & 1;
  }
  if (!f.os_avx) f.avx2 = f.fma = f.f16c = f.avx_vnni = false;
  if (!f.os_avx) f.amx_tile = f.amx_int8 = f.amx_bf16 = false;
#if BRISK_X86
  if (f.os_avx && (ReadXcr0() & (3ull << 17)) != (3ull << 17))
    f.amx_tile = f.amx_int8 = f.amx_bf16 = false;
#endif
  if (!f.os_avx512)
    f.avx512f = f.avx512bw = f.avx512vl = f.avx512dq = f.avx512vnni = f.avx512bf16 = f.avx512vbmi =
        false;
  char brand[49] = {};
  if (__get_cpuid(0x80000000, &a, &b, &c, &d) && a >= 0x80000004) {
    for (unsigned i = 0; i < 3; ++i) {
      __get_cpuid(0x80000002 + i, &a, &b, &c, &d);
      std::memcpy(brand + 16 * i, &a, 4);
      std::memcpy(brand + 16 * i + 4, &b, 4);
      std::memcpy(brand + 16 * i + 8, &c, 4);
      std::memcpy(brand + 16 * i + 12, &d, 4);
    }
  }
  f.brand = brand;
  while (!f.brand.empty() && f.brand.front() == ' ') f.brand.erase(f.brand.begin());
#endif
#if BRISK_ARM64
  // Linux's HWCAP bits (uapi asm/hwcap.h; numbers spelled out so old headers still build).
  const unsigned long hw = getauxval(AT_HWCAP), hw2 = getauxval(AT_HWCAP2);
  f.neon = (hw >> 1) & 1;      // HWCAP_ASIMD
  f.fphp = (hw >> 9) & 1;      // HWCAP_FPHP
  f.dotprod = (hw >> 20) & 1;  // HWCAP_ASIMDDP
  f.i8mm = (hw2 >> 13) & 1;    // HWCAP2_I8MM
  f.brand = "aarch64";
  // MIDR of CPU 0 names the core where the kernel exposes it (implementer and part number).
  if (hw & (1ul << 11)) {  // HWCAP_CPUID: MRS of MIDR_EL1 is emulated for user space
    uint64_t midr;
    __asm__("mrs %0, MIDR_EL1" : "=r"(midr));
    char buf[48];
    std::snprintf(buf, sizeof buf, "aarch64 (MIDR implementer 0x%02x part 0x%03x)",
                  unsigned((midr >> 24) & 0xff), unsigned((midr >> 4) & 0xfff));
    f.brand = buf;
  }
#endif
  return f;
}

Isa InitialIsa() {
  const char* env = std::getenv("BRISK_ISA");
  if (env && *env) {
    Isa want;
    if (!ParseIsa(env, &want)) {
      std::fprintf(
          stderr,
          "brisk: BRISK_ISA=%s is not one of scalar|avx2|avx512|neon|dotprod|i8mm; using %s\n", env,
          std::string(IsaName(BestIsa())).c_str());
    } else if (!IsaSupported(want)) {
      std::fprintf(stderr, "brisk: BRISK_ISA=%s is not supported by this CPU; using %s\n", env,
                   std::string(IsaName(BestIsa())).c_str());
    } else {
      return want;
    }
  }
  return BestIsa();
}

// Linux keeps AMX tile data off until a process asks (arch_prctl ARCH_REQ_XCOMP_PERM for
// XFEATURE_XTILEDATA); the grant is process-wide.
bool AmxUsable() {
  static const bool usable = [] {
    const CpuFeatures& f = GetCpuFeatures();
    if (!f.amx_tile || !f.amx_int8 || !f.avx512f) return false;
#if BRISK_X86 && defined(__linux__)
    constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
    return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
#else
    return false;
#endif
  }();
  return usable;
}

std::atomic<int>& AmxSlot() {
  static std::atomic<int> slot{[] {
    const char* env = std::getenv("BRISK_AMX");
    if (env && *env == '0') return 0;
    return AmxUsable() ? 1 : 0;
  }()};
  return slot;
}

std::atomic<int>& AvxVnniSlot() {
  static std::atomic<int> slot{[] {
    const char* env = std::getenv("BRISK_AVX_VNNI");
    if (env && *env == '0') return 0;
    return GetCpuFeatures().avx_vnni ? 1 : 0;
  }()};
  return slot;
}

std::atomic<int>& ActiveSlot() {
  static std::atomic<int> slot{int(InitialIsa())};
  return slot;
}

}  // namespace

const CpuFeatures& GetCpuFeatures() {
  static const CpuFeatures features = Detect();
  return features;
}

bool IsaSupported(Isa isa) {
  const CpuFeatures& f = GetCpuFeatures();
  switch (isa) {
    case Isa::kScalar:
      return true;
    case Isa::kAvx2:
      return f.avx2 && f.fma && f.f16c;
    case Isa::kAvx512:
      return f.avx2 && f.fma && f.f16c && f.avx512f && f.avx512bw && f.avx512vl && f.avx512dq &&
             f.avx512vnni;
#if BRISK_ARM64  // aarch64 builds always carry the ARM tiers (src/CMakeLists.txt)
    case Isa::kNeon:
      return f.neon;
    case Isa::kDotprod:
      return f.neon && f.dotprod;
    case Isa::kI8mm:
      return f.neon && f.dotprod && f.i8mm;
#else
    case Isa::kNeon:
    case Isa::kDotprod:
    case Isa::kI8mm:
      return false;  // not an aarch64 build
#endif
  }
  return false;
}

Isa BestIsa() {
  for (int i = kNumIsas - 1; i > 0; --i)
    if (IsaSupported(Isa(i))) return Isa(i);
  return Isa::kScalar;
}

Isa ActiveIsa() { return Isa(ActiveSlot().load(std::memory_order_relaxed)); }

void SetIsaForTesting(Isa isa) {
  BRISK_CHECK_MSG(IsaSupported(isa), "ISA not supported by this CPU");
  ActiveSlot().store(int(isa), std::memory_order_relaxed);
}

bool AmxEnabled() { return AmxSlot().load(std::memory_order_relaxed) != 0; }
bool AmxBf16Enabled() {
  const CpuFeatures& f = GetCpuFeatures();
  return f.amx_bf16 && f.avx512bf16 && f.avx512vbmi && AmxEnabled();
}
void SetAmxForTesting(bool on) { AmxSlot().store(on && AmxUsable() ? 1 : 0); }

bool AvxVnniEnabled() { return AvxVnniSlot().load(std::memory_order_relaxed) != 0; }
void SetAvxVnniForTesting(bool on) { AvxVnniSlot().store(on && GetCpuFeatures().avx_vnni ? 1 : 0); }

std::string_view IsaName(Isa isa) {
  switch (isa) {
    case Isa::kScalar:
      return "scalar";
    case Isa::kAvx2:
      return "avx2";
    case Isa::kAvx512:
      return "avx512";
    case Isa::kNeon:
      return "neon";
    case Isa::kDotprod:
      return "dotprod";
    case Isa::kI8mm:
      return "i8mm";
  }
  return "?";
}

bool ParseIsa(std::string_view s, Isa* out) {
  const std::string lower = AsciiLower(s);
  for (int i = 0; i < kNumIsas; ++i) {
    if (lower == IsaName(Isa(i))) {
      *out = Isa(i);
      return true;
    }
  }
  return false;
}

std::string DescribeCpu() {
  const CpuFeatures& f = GetCpuFeatures();
  std::string s = f.brand.empty() ? "unknown CPU" : f.brand;
  s += " [";
  const std::pair<const char*, bool> flags[] = {{"avx2", f.avx2},
                                                {"fma", f.fma},
                                                {"f16c", f.f16c},
                                                {"avx512f", f.avx512f},
                                                {"avx512bw", f.avx512bw},
                                                {"avx512vl", f.avx512vl},
                                                {"avx512vnni", f.avx512vnni},
                                                {"avx512bf16", f.avx512bf16},
                                                {"avx_vnni", f.avx_vnni},
                                                {"amx_int8", f.amx_int8 && f.amx_tile},
                                                {"amx_bf16", f.amx_bf16 && f.amx_tile},
                                                {"neon", f.neon},
                                                {"fphp", f.fphp},
                                                {"dotprod", f.dotprod},
                                                {"i8mm", f.i8mm}};
  bool first = true;
  for (const auto& [name, on] : flags) {
    if (!on) continue;
    if (!first) s += ' ';
    s += name;
    first = false;
  }
  s += "]";
  return s;
}

}  // namespace brisk
