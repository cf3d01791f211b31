// Prometheus metrics for `brisk serve` (DESIGN §6 "Metrics"): vLLM's names, label set and bucket
// boundaries, so dashboards, KEDA/HPA rules and the Gateway API inference extension built for vLLM
// read brisk unchanged, plus brisk's own extras under `brisk:`.
//
// Who records what:
//   - HTTP threads call OnRequestFinished() once per finished request (from the sink's FinishInfo),
//     OnTokens() for each token after a request's first, and OnRequestRejected() when the engine
//     refuses a request (overloaded).
//   - GET /metrics calls Render() with a fresh Engine::Stats(); gauges (running, waiting, KV usage,
//     last step) and the engine-side counters (preemptions, prefix cache) come from that snapshot,
//     and vllm:cache_config_info from the KV cache's shape (KvCacheInfo).
//
// The Gateway API Inference Extension's endpoint picker reads vllm:num_requests_waiting,
// vllm:num_requests_running, vllm:kv_cache_usage_perc and the block_size / num_gpu_blocks labels
// of vllm:cache_config_info by these exact names: keep them (docs/deploy.md).
//
// Token counters are counted per finished request, from FinishInfo::usage: after a load run
// vllm:generation_tokens_total equals the sum of the usage.completion_tokens the clients received
// (vLLM counts as tokens are produced; the totals agree once requests have finished). The live
// engine-side count is brisk:engine_generation_tokens_total, for throughput graphs that must not
// wait for long requests to end.
//
// Histogram counts: vllm:time_to_first_token_seconds counts the finished requests that produced a
// first token (vLLM observes it at the first token; a request that ended before one has no TTFT);
// the inter-token histograms count OnTokens() tokens; every other request histogram counts every
// finished request.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/engine.h"
#include "engine/request.h"
#include "server/connection_admission.h"
#include "server/request_log.h"

namespace brisk::server {

// vLLM's finished_reason label value for an engine FinishReason: "stop", "length", "abort"
// (cancelled, client gone, deadline) or "error".
std::string_view FinishedReasonLabel(FinishReason reason);

// A Prometheus classic histogram with fixed upper bounds (le, inclusive). Not thread-safe: the
// owner locks.
class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds);  // ascending, finite, no duplicates
  // Non-finite values are dropped (they would poison _sum); negative ones count as 0.
  void Observe(double v, uint64_t times = 1);
  const std::vector<double>& bounds() const { return bounds_; }
  // counts()[i]: observations in (bounds[i-1], bounds[i]]; the last entry is the +Inf overflow.
  const std::vector<uint64_t>& counts() const { return counts_; }
  double sum() const { return sum_; }
  uint64_t count() const { return count_; }

 private:
  std::vector<double> bounds_;
  std::vector<uint64_t> counts_;
  double sum_ = 0;
  uint64_t count_ = 0;
};

// vLLM's bucket boundaries (vllm/v1/metrics/loggers.py).
std::vector<double> TtftBuckets();            // vllm:time_to_first_token_seconds
std::vector<double> InterTokenBuckets();      // vllm:inter_token_latency_seconds (and TPOT)
std::vector<double> RequestLatencyBuckets();  // e2e, queue time
// 1, 2, 5, 10, 20, 50, ... up to max_value inclusive (token-count histograms).
std::vector<double> Buckets125(int64_t max_value);

// Exact percentile q (0..1) of ascending `sorted`, interpolating linearly between the two
// closest ranks (rank = q * (n-1), numpy's default); NaN when empty.
double PercentileOfSorted(const std::vector<double>& sorted, double q);

// Prometheus text format 0.0.4 helpers (exposed for tests).
std::string FormatPromValue(double v);             // "1.0", "0.25", "+Inf", "NaN"
std::string EscapeLabelValue(std::string_view s);  // \\ \" \n; invalid UTF-8 -> U+FFFD

struct MetricsOptions {
  int max_model_len = 8192;            // upper end of the token-count histogram buckets
  double window_s = 60;                // brisk:recent_* sliding window
  size_t max_window_samples = 100000;  // bound on memory; the oldest are dropped beyond it
  std::function<double()> clock;       // seconds, monotonic; empty = std::chrono::steady_clock
};

// The KV cache's shape for vllm:cache_config_info (vLLM renders its CacheConfig as labels of a
// gauge that is always 1). num_blocks is brisk's KV block count, in host memory: vLLM's label is
// num_gpu_blocks, and that is the name readers look for. block_size 0 = not loaded (no sample).
struct KvCacheInfo {
  int block_size = 0;  // tokens per block
  int num_blocks = 0;
  std::string cache_dtype;  // "f16" / "f32" (as GET /props says)
  bool prefix_caching = false;
};

// Counters kept outside ServerMetrics, read when /metrics is asked: the transport's connection
// admission and the request log. Absent ones export nothing.
struct SideCounters {
  std::optional<AdmissionCounters> connections;   // once the HTTP server runs
  std::optional<RequestLogCounters> request_log;  // --request-log given
};

class ServerMetrics {
 public:
  explicit ServerMetrics(MetricsOptions options = {});
  ServerMetrics(const ServerMetrics&) = delete;
  ServerMetrics& operator=(const ServerMetrics&) = delete;

  // Thread-safe. `finished_reason`: vLLM's label ("stop", "length", "abort", "error"; see
  // FinishedReasonLabel); anything else is counted as "error" so the label set stays bounded.
  void OnRequestFinished(const FinishInfo& f, std::string_view finished_reason);
  // Thread-safe. `n` tokens emitted after the request's first, each `itl_s` seconds after its
  // predecessor (a coalesced event of n tokens over t seconds: OnTokens(n, t / n)). n <= 0: no-op.
  void OnTokens(int n, double itl_s);
  void OnRequestRejected();  // thread-safe

  // The whole exposition. Every sample carries {model_name="..."}; `stats` supplies the gauges
  // and the engine-side counters, `cache` the labels of vllm:cache_config_info.
  std::string Render(const EngineStats& stats, std::string_view model_name,
                     const KvCacheInfo& cache = {}, const SideCounters& side = {}) const;

  // Totals, for tests and the dashboard.
  int64_t generation_tokens() const;
  int64_t finished_requests() const;

  // The request-side counters and histograms at one moment (Render's input; metrics.cc).
  struct Snapshot;

 private:
  Snapshot TakeSnapshot() const;
  struct WindowSample {
    double t;     // clock() at finish
    double ttft;  // NaN when the request produced no token
    double tpot;  // NaN below two tokens
  };
  void PruneLocked(double now) const;

  MetricsOptions options_;
  mutable std::mutex mu_;
  int64_t prompt_tokens_ = 0, generation_tokens_ = 0;
  int64_t finished_ = 0, rejected_ = 0;
  std::map<std::string, int64_t, std::less<>> success_;  // by finished_reason
  Histogram ttft_, itl_, e2e_, queue_, prompt_len_, gen_len_;
  mutable std::deque<WindowSample> window_;  // ordered by t; pruned on insert and render
};

}  // namespace brisk::server
