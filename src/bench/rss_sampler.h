// Resident memory of a process, sampled in the background: benchmarks report the peak over each
// measured point (a spike between two reads of the final value would otherwise be missed).
#pragma once

#include <condition_variable>
#include <mutex>
#include <thread>

#include "util/status.h"

namespace brisk {

// VmRSS of /proc/PID/status in MiB (pid 0 = this process).
Result<double> ReadRssMib(int pid);

// Reads the RSS every `period_s` on its own thread; it sleeps in between and costs the measured
// machine nothing.
class RssSampler {
 public:
  explicit RssSampler(int pid, double period_s = 1.0);
  ~RssSampler();
  RssSampler(const RssSampler&) = delete;
  RssSampler& operator=(const RssSampler&) = delete;

  // Reads now (also folded into the max); 0 when the process is gone.
  double Sample();
  double max();
  // Starts a new peak from the current value (at the start of a measured point).
  void ResetMax();

 private:
  const int pid_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  double max_ = 0;
  std::thread thread_;
};

}  // namespace brisk
