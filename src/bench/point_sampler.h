// Something measured beside the load while each point of `brisk bench` runs (GPU state, the
// server's own gauges): the sweep starts it before a point and folds what it saw into the point
// afterwards. Samplers read on their own threads and never touch the driver's, whose polling sets
// the measured latencies.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include "bench/bench_report.h"

namespace brisk {

class PointSampler {
 public:
  virtual ~PointSampler() = default;
  // Forgets what it saw so far: the point starts now.
  virtual void BeginPoint() = 0;
  // Writes what it saw since BeginPoint into `p` (its own fields only).
  virtual void EndPoint(BenchPoint* p) = 0;
};

// Calls `tick` on a thread of its own every period_s, and at once after Wake(), until destroyed
// (the destructor waits for a tick in progress). Declare it as its owner's last member, so it
// stops before the members `tick` uses are destroyed.
class PeriodicThread {
 public:
  PeriodicThread(double period_s, std::function<void()> tick);
  ~PeriodicThread();
  PeriodicThread(const PeriodicThread&) = delete;
  PeriodicThread& operator=(const PeriodicThread&) = delete;

  void Wake();

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false, wake_ = false;
  std::thread thread_;
};

}  // namespace brisk
