// The target server's own gauges while a `brisk bench --url` point runs: its /metrics read on a
// thread of its own (never the driver's, whose polling sets the measured latencies), vLLM's
// names, so brisk, vLLM and any server that copies them are read alike:
//   vllm:kv_cache_usage_perc (0..1), vllm:num_requests_running, vllm:num_requests_waiting.
// A server without them (llama-server) gives no column rather than zeros.
#pragma once

#include <map>
#include <string>

#include "bench/http_client.h"
#include "bench/point_sampler.h"

namespace brisk {

// Folds scrapes into a point's ServerGauges (pure: tests feed samples directly).
class GaugeAccumulator {
 public:
  // One scrape's samples, summed per name (SumPrometheusSamples). False when it holds none of
  // the three gauges (nothing is counted).
  bool Add(const std::map<std::string, double, std::less<>>& sums);
  ServerGauges Summary() const;
  void Reset() { *this = GaugeAccumulator(); }

 private:
  struct Series {
    int n = 0;
    double sum = 0, max = 0;
    void Add(double v);
    double Mean() const;
    double Max() const;
  };
  int samples_ = 0;
  Series kv_, running_, waiting_;
};

// Scrapes GET {url}/metrics every period (and at the start of each point) on its own thread,
// each scrape bounded by its own timeouts; a failed scrape is skipped.
class ServerGaugeSampler : public PointSampler {
 public:
  ServerGaugeSampler(HttpUrl url, std::string api_key, double period_s = 0.5);

  void BeginPoint() override;
  void EndPoint(BenchPoint* p) override;  // scrapes once itself when the point saw none
  // Scrapes now and folds it into the current point; false when the scrape failed, held none of
  // the gauges or the point changed while it ran.
  bool Sample();

 private:
  const HttpUrl url_;
  const std::string api_key_;
  PointReadings<GaugeAccumulator> readings_;
  PeriodicThread thread_;  // last: stops before the members it reads are destroyed
};

}  // namespace brisk
