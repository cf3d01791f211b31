// Something measured beside the load while each point of `brisk bench` runs (GPU state, the
// server's own gauges): the sweep starts it before a point and folds what it saw into the point
// afterwards. Samplers read on their own threads and never touch the driver's, whose polling sets
// the measured latencies.
#pragma once

#include <condition_variable>
#include <cstdint>
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

// The current point's accumulator (GpuAccumulator, GaugeAccumulator: Add(reading) -> bool,
// Summary(), Reset()) and the point's number, for readings that take time (a process to run, a
// scrape): a reading counts only if the point it started in is still the current one, so one
// that straddles a boundary counts in neither point. Thread-safe.
template <class Acc>
class PointReadings {
 public:
  // The point a reading starting now belongs to.
  uint64_t Current() {
    std::lock_guard<std::mutex> lock(mu_);
    return point_;
  }
  // Folds in a finished reading started in point `started`; false when that point is over or
  // the accumulator took nothing from it.
  template <class Reading>
  bool Add(uint64_t started, const Reading& reading) {
    std::lock_guard<std::mutex> lock(mu_);
    return started == point_ && acc_.Add(reading);
  }
  // A new point: what was seen so far is forgotten.
  void Begin() {
    std::lock_guard<std::mutex> lock(mu_);
    ++point_;
    acc_.Reset();
  }
  bool Empty() {
    std::lock_guard<std::mutex> lock(mu_);
    return acc_.Summary().samples == 0;
  }
  // The point's summary; readings still running then belong to no point.
  auto End() {
    std::lock_guard<std::mutex> lock(mu_);
    ++point_;
    return acc_.Summary();
  }

 private:
  std::mutex mu_;
  uint64_t point_ = 0;
  Acc acc_;
};

}  // namespace brisk
