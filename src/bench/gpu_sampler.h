// GPU utilisation, memory and power per bench point, read from nvidia-smi when it is on the PATH
// (a GPU server benchmarked with `brisk bench --url` on the same machine). Without nvidia-smi
// there is no sampler and reports show no GPU column.
//
//   nvidia-smi --query-gpu=utilization.gpu,memory.used,power.draw --format=csv,noheader,nounits
//   -> one line per GPU: "87, 40536, 312.45"; "[N/A]" / "[Not Supported]" where a value is not
//      available (power on some boards).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "bench/point_sampler.h"
#include "util/status.h"

namespace brisk {

// The arguments after the program's name, one definition for the sampler and its tests.
std::vector<std::string> NvidiaSmiQueryArgs();

// One GPU of one reading; NaN where nvidia-smi said the value is not available.
struct GpuReading {
  double util_pct = 0, mem_used_mib = 0, power_w = 0;
};

// Parses the query's output: one reading per non-blank line. Untrusted text: a line without
// exactly three fields, or a field that is neither a finite number >= 0 nor a bracketed "not
// available" marker, is an invalid_argument error naming the line; an empty output is an error
// too (a reading without GPUs says nothing).
Result<std::vector<GpuReading>> ParseNvidiaSmiCsv(std::string_view text);

// Folds readings into a point's GpuSide (pure: tests feed readings directly).
class GpuAccumulator {
 public:
  bool Add(const std::vector<GpuReading>& gpus);  // false for an empty reading (nothing counted)
  GpuSide Summary() const;
  void Reset() { *this = GpuAccumulator(); }

 private:
  int samples_ = 0, gpus_ = 0;
  int util_n_ = 0, power_n_ = 0, mem_n_ = 0;
  double util_sum_ = 0, util_max_ = 0, power_sum_ = 0, power_max_ = 0, mem_max_ = 0;
};

// Runs nvidia-smi every period (and at the start of each point) on its own thread; a failed or
// malformed reading is skipped. Each run is bounded (kNvidiaSmiTimeoutS, then killed): a hung
// driver costs readings, never the bench.
class GpuSampler : public PointSampler {
 public:
  // `program`: the nvidia-smi to run (FindExecutable's result).
  explicit GpuSampler(std::string program, double period_s = 1.0);

  // nullptr when nvidia-smi is not on the PATH.
  static std::unique_ptr<GpuSampler> CreateIfAvailable(double period_s = 1.0);

  void BeginPoint() override;
  void EndPoint(BenchPoint* p) override;  // reads once itself when the point saw no reading
  // One reading now, folded into the current point; false when it failed or the point changed
  // while it ran.
  bool Sample();

 private:
  const std::string program_;
  PointReadings<GpuAccumulator> readings_;
  PeriodicThread thread_;  // last: stops before the members it reads are destroyed
};

}  // namespace brisk
