// Measured machine limits that performance is reported against (DESIGN §7): the memory read
// bandwidth (roofline of decode) and the int8 dot-product peak (ceiling of prefill). Both run on
// every thread of the pool; `brisk bench raw` and the kernel benchmark print results as % of them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "runtime/thread_pool.h"

namespace brisk {

struct BandwidthResult {
  double gb_per_s = 0;  // best of the repetitions, 1e9 bytes/s
  size_t bytes = 0;     // buffer size streamed
  int threads = 0;
};

// Streaming read of a buffer far larger than the last-level cache (default 2 GiB), each thread
// reading a contiguous slice with wide loads; best of `reps` passes after one warm-up pass.
// cpu_time: time with the calling thread's CPU clock instead of the wall clock (only meaningful
// for a 1-thread pool: it excludes time the thread was descheduled on a busy machine).
BandwidthResult MeasureReadBandwidth(ThreadPool& pool, size_t bytes = size_t(2) << 30, int reps = 3,
                                     bool cpu_time = false);

// MeasureReadBandwidth with its buffer kept between measurements (allocated and first touched
// once), so the bandwidth can be measured again next to each benchmark of a run on a machine
// whose speed drifts (a shared VM's read bandwidth was seen to move by a third within minutes).
class ReadBandwidthProbe {
 public:
  ReadBandwidthProbe(ThreadPool& pool, size_t bytes = size_t(2) << 30);
  ~ReadBandwidthProbe();
  ReadBandwidthProbe(const ReadBandwidthProbe&) = delete;
  ReadBandwidthProbe& operator=(const ReadBandwidthProbe&) = delete;
  // gb_per_s 0 if the buffer could not be allocated.
  BandwidthResult Measure(int reps = 3, bool cpu_time = false);

 private:
  // Thread t's page-aligned share of the buffer (the last thread takes the remainder).
  void Slice(int t, size_t* begin, size_t* len) const;

  ThreadPool& pool_;
  size_t bytes_ = 0;
  uint8_t* buf_ = nullptr;
};

struct Int8PeakResult {
  double gops = 0;          // 1e9 int8 ops/s (one multiply-add = 2 ops), all threads
  std::string instruction;  // "vpdpbusd zmm", "vpdpbusd ymm (AVX-VNNI)", "vpmaddubsw ymm", "none"
  int threads = 0;
};

// Throughput of the best int8 dot instruction this CPU has, with enough independent accumulators
// to cover its latency, on every thread for about `seconds`.
Int8PeakResult MeasureInt8Peak(ThreadPool& pool, double seconds = 0.3, bool cpu_time = false);

// Seconds on the calling thread's CPU clock (CLOCK_THREAD_CPUTIME_ID).
double ThreadCpuSeconds();

}  // namespace brisk
