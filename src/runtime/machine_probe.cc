#include "runtime/machine_probe.h"

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <ctime>

#include "runtime/cpu_features.h"
#include "util/check.h"

#if defined(__x86_64__)
#include <immintrin.h>
#define BRISK_PROBE_X86 1
#endif

namespace brisk {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

double Now(bool cpu_time) {
  if (cpu_time) return ThreadCpuSeconds();
  return std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
}

#if BRISK_PROBE_X86
// Wide loads with several independent accumulators so the loop is load-bound, not add-bound.
__attribute__((target("avx2"))) uint64_t ReadAvx2(const uint8_t* p, size_t n) {
  __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
  for (size_t i = 0; i + 128 <= n; i += 128) {
    a0 = _mm256_xor_si256(a0, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i)));
    a1 = _mm256_xor_si256(a1, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 32)));
    a2 = _mm256_xor_si256(a2, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 64)));
    a3 = _mm256_xor_si256(a3, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 96)));
  }
  const __m256i a = _mm256_xor_si256(_mm256_xor_si256(a0, a1), _mm256_xor_si256(a2, a3));
  return uint64_t(_mm256_extract_epi64(a, 0) ^ _mm256_extract_epi64(a, 3));
}
#endif

uint64_t ReadPortable(const uint8_t* p, size_t n) {
  uint64_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
  for (size_t i = 0; i + 32 <= n; i += 32) {
    uint64_t v[4];
    std::memcpy(v, p + i, 32);
    a0 ^= v[0], a1 ^= v[1], a2 ^= v[2], a3 ^= v[3];
  }
  return a0 ^ a1 ^ a2 ^ a3;
}

uint64_t ReadSlice(const uint8_t* p, size_t n) {
#if BRISK_PROBE_X86
  if (GetCpuFeatures().avx2) return ReadAvx2(p, n);
#endif
  return ReadPortable(p, n);
}

#if BRISK_PROBE_X86
constexpr int kAcc = 16;  // independent chains: >= latency (5) x ports (2)

// The accumulators are 16 named variables kept in registers by one empty asm per iteration that
// lists them all. (An array with an asm per element made GCC keep the array on the stack, so
// every step was load + multiply-add + store: the probe measured the store-forwarding round
// trip and read ~4x below the real peak: 0.36 instead of 1.5 TOPS on the 2-core VM.)
#define BRISK_ACC16(X) \
  X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15)
#define BRISK_KEEP16(a)                                                                          \
  __asm__ volatile(""                                                                            \
                   : "+v"(a##0), "+v"(a##1), "+v"(a##2), "+v"(a##3), "+v"(a##4), "+v"(a##5),     \
                     "+v"(a##6), "+v"(a##7));                                                    \
  __asm__ volatile(""                                                                            \
                   : "+v"(a##8), "+v"(a##9), "+v"(a##10), "+v"(a##11), "+v"(a##12), "+v"(a##13), \
                     "+v"(a##14), "+v"(a##15))

// The probes' shared body, with each probe's own BRISK_STEP and BRISK_SUM: `iters` rounds of one
// step on all 16 accumulators, then their sum (so no step is dead code).
#define BRISK_PROBE_LOOP(iters)              \
  for (int64_t it = 0; it < (iters); ++it) { \
    BRISK_ACC16(BRISK_STEP)                  \
    BRISK_KEEP16(acc);                       \
  }                                          \
  int64_t s = 0;                             \
  BRISK_ACC16(BRISK_SUM)                     \
  return s;

__attribute__((target("avx512f,avx512vnni"))) int64_t VnniZmm(int64_t iters) {
#define BRISK_DECL(i) __m512i acc##i = _mm512_set1_epi32(i);
#define BRISK_STEP(i) acc##i = _mm512_dpbusd_epi32(acc##i, a, b);
#define BRISK_SUM(i) s += _mm512_cvtsi512_si32(acc##i);
  BRISK_ACC16(BRISK_DECL)
  __m512i a = _mm512_set1_epi8(3), b = _mm512_set1_epi8(-5);
  __asm__ volatile("" : "+v"(a), "+v"(b));  // not constants: no folding
  BRISK_PROBE_LOOP(iters)
#undef BRISK_DECL
#undef BRISK_STEP
#undef BRISK_SUM
}

__attribute__((target("avx2,avxvnni"))) int64_t VnniYmm(int64_t iters) {
#define BRISK_DECL(i) __m256i acc##i = _mm256_set1_epi32(i);
#define BRISK_STEP(i) acc##i = _mm256_dpbusd_avx_epi32(acc##i, a, b);
#define BRISK_SUM(i) s += _mm256_extract_epi32(acc##i, 0);
  BRISK_ACC16(BRISK_DECL)
  __m256i a = _mm256_set1_epi8(3), b = _mm256_set1_epi8(-5);
  __asm__ volatile("" : "+v"(a), "+v"(b));
  BRISK_PROBE_LOOP(iters)
#undef BRISK_DECL
#undef BRISK_STEP
#undef BRISK_SUM
}

// Without VNNI an int8 multiply-add of 32 pairs costs maddubs + madd + add: count the ops done.
__attribute__((target("avx2"))) int64_t MaddubsYmm(int64_t iters) {
#define BRISK_DECL(i) __m256i acc##i = _mm256_set1_epi32(i);
#define BRISK_STEP(i) \
  acc##i = _mm256_add_epi32(acc##i, _mm256_madd_epi16(_mm256_maddubs_epi16(a, b), ones));
#define BRISK_SUM(i) s += _mm256_extract_epi32(acc##i, 0);
  BRISK_ACC16(BRISK_DECL)
  __m256i a = _mm256_set1_epi8(3), b = _mm256_set1_epi8(-5), ones = _mm256_set1_epi16(1);
  __asm__ volatile("" : "+v"(a), "+v"(b), "+v"(ones));
  BRISK_PROBE_LOOP(iters)
#undef BRISK_DECL
#undef BRISK_STEP
#undef BRISK_SUM
}
#undef BRISK_PROBE_LOOP
#undef BRISK_ACC16
#undef BRISK_KEEP16
#endif

}  // namespace

double ThreadCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

ReadBandwidthProbe::ReadBandwidthProbe(ThreadPool& pool, size_t bytes) : pool_(pool) {
  bytes = std::max<size_t>(bytes, size_t(1) << 20) & ~size_t(4095);
  void* mem = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) return;
#ifdef MADV_HUGEPAGE
  madvise(mem, bytes, MADV_HUGEPAGE);  // measure the stream, not TLB misses (weights use it too)
#endif
  buf_ = static_cast<uint8_t*>(mem);
  bytes_ = bytes;
  // First touch on the thread that reads the slice (NUMA locality); non-zero so no zero page.
  pool_.Run([&](int t, int) {
    size_t b, l;
    Slice(t, &b, &l);
    std::memset(buf_ + b, 1, l);
  });
}

void ReadBandwidthProbe::Slice(int t, size_t* begin, size_t* len) const {
  const int n = pool_.size();
  const size_t per = (bytes_ / size_t(n)) & ~size_t(4095);
  *begin = per * size_t(t);
  *len = t + 1 == n ? bytes_ - *begin : per;
}

ReadBandwidthProbe::~ReadBandwidthProbe() {
  if (buf_) munmap(buf_, bytes_);
}

BandwidthResult ReadBandwidthProbe::Measure(int reps, bool cpu_time) {
  BandwidthResult r;
  r.threads = pool_.size();
  if (!buf_) return r;
  std::atomic<uint64_t> sink{0};
  double best = 1e30;
  for (int rep = 0; rep <= reps; ++rep) {
    const double t0 = Now(cpu_time);
    pool_.Run([&](int t, int) {
      size_t b, l;
      Slice(t, &b, &l);
      sink.fetch_xor(ReadSlice(buf_ + b, l), std::memory_order_relaxed);
    });
    const double s = Now(cpu_time) - t0;
    if (rep > 0) best = std::min(best, s);  // rep 0 warms up
  }
  r.bytes = bytes_;
  r.gb_per_s = double(bytes_) / best / 1e9;
  return r;
}

BandwidthResult MeasureReadBandwidth(ThreadPool& pool, size_t bytes, int reps, bool cpu_time) {
  ReadBandwidthProbe probe(pool, bytes);
  return probe.Measure(reps, cpu_time);
}

Int8PeakResult MeasureInt8Peak(ThreadPool& pool, double seconds, bool cpu_time) {
  Int8PeakResult r;
  r.threads = pool.size();
#if BRISK_PROBE_X86
  const CpuFeatures& f = GetCpuFeatures();
  int64_t (*fn)(int64_t) = nullptr;
  double ops_per_iter = 0;  // int8 ops (2 per multiply-add) of one iteration on one thread
  if (f.avx512f && f.avx512vnni) {
    fn = VnniZmm, ops_per_iter = kAcc * 64 * 2, r.instruction = "vpdpbusd zmm";
  } else if (f.avx_vnni) {
    fn = VnniYmm, ops_per_iter = kAcc * 32 * 2, r.instruction = "vpdpbusd ymm (AVX-VNNI)";
  } else if (f.avx2) {
    fn = MaddubsYmm, ops_per_iter = kAcc * 32 * 2, r.instruction = "vpmaddubsw+vpmaddwd ymm";
  }
  if (!fn) {
    r.instruction = "none";
    return r;
  }
  // Calibrate on one thread, then run all threads for about `seconds`.
  int64_t iters = 1 << 16;
  for (;;) {
    const auto t0 = Clock::now();
    volatile int64_t s = fn(iters);
    (void)s;
    if (Seconds(t0, Clock::now()) > 0.02 || iters > (int64_t(1) << 40)) break;
    iters *= 4;
  }
  const auto c0 = Clock::now();
  volatile int64_t cs = fn(iters);
  (void)cs;
  const double per_iter = Seconds(c0, Clock::now()) / double(iters);
  iters = std::max<int64_t>(1, int64_t(seconds / per_iter));
  double best = 0;
  for (int rep = 0; rep < 3; ++rep) {
    const double t0 = Now(cpu_time);
    std::atomic<int64_t> sink{0};
    pool.Run([&](int, int) { sink.fetch_add(fn(iters), std::memory_order_relaxed); });
    const double s = Now(cpu_time) - t0;
    best = std::max(best, ops_per_iter * double(iters) * pool.size() / s / 1e9);
  }
  r.gops = best;
#else
  (void)seconds, (void)cpu_time;
  r.instruction = "none";
#endif
  return r;
}

}  // namespace brisk
