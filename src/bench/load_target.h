// What `brisk bench` sends its load to: the serving engine in this process (engine_target.h) or
// any OpenAI-compatible server over HTTP (http_target.h). The load driver (load_driver.h) only
// sees this interface, so both modes measure the same requests with the same clock and the
// same statistics, and their difference is what HTTP, JSON and SSE cost.
//
// Threading: one driver thread calls everything; `done` callbacks run on it, inside Poll().
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "bench/bench_report.h"
#include "util/status.h"

namespace brisk {

// One request of a benchmark, as a chat turn.
struct BenchRequest {
  std::string system, user;  // chat messages ("" system = none)
  int max_tokens = 64;
  bool ignore_eos = true;  // fixed output length; false = natural (up to max_tokens)
  float temperature = 0;   // 0 = greedy
  float top_p = 1;
  uint64_t seed = 0;
  // In-process only: when not empty, the prompt is these token ids as they are (no chat
  // template, `system` and `user` unused), for exact prompt lengths and models without one.
  std::vector<int32_t> prompt_ids;
};

// What one request measured, on the steady clock (seconds, NowSeconds).
struct RequestRecord {
  bool ok = false;
  std::string error;              // why it failed
  std::string finish_reason;      // "stop", "length", "cancelled", ... ("" when unknown)
  double start_s = 0, end_s = 0;  // sent -> finished (the client knows it is over)
  std::vector<double> token_s;    // arrival of every output token (HTTP: of every content event)
  int prompt_tokens = -1, output_tokens = -1;  // -1: not reported
  int cached_tokens = -1;  // prompt tokens served from the prefix cache (-1: not reported)
  int index = -1;          // the request's start order within its point (the driver sets it)
};

// Engine limits for a point (0 / "" = leave as they are).
struct TargetLimits {
  int max_num_seqs = 0;
  int max_num_batched_tokens = 0;
  int max_prefill_chunk = 0;
  std::string batch_policy;
  double tpot_target_ms = 0;
};

// Cumulative server-side counters (differences around a point become BenchPoint::server).
struct TargetCounters {
  bool has = false;
  double steps = 0, step_seqs = 0, step_tokens = 0;
  bool has_steps = false, has_step_seqs = false;
  double preemptions = 0, prefix_queried = 0, prefix_hits = 0, generation_tokens = 0;
  double prompt_tokens = 0;  // computed (prefix-cache hits excluded); in-process only
};

// Facts for the report header (the driver fills the rest).
struct TargetInfo {
  std::string mode;  // "in-process" | "http"
  std::string url, server, model, file_type, isa;
  bool synthetic = false;
  int threads = 0;
  double model_load_ms = 0, tokenizer_load_ms = 0;
  std::string engine_settings;  // one line
  // In-process: the engine's resolved sizes and whether the model has a tokenizer.
  bool tokenizer = false;
  int max_model_len = 0, kv_blocks = 0, kv_block_size = 0;
  double kv_cache_mib = 0;
  // HTTP: GET /health answered 503 (model loading) at first, and the target waited.
  bool waited_for_ready = false;
};

class LoadTarget {
 public:
  virtual ~LoadTarget() = default;
  virtual TargetInfo Info() const = 0;
  // Applies limits before a point; an error when this target cannot (a server without
  // /admin/config) or the values are out of range.
  virtual Status Configure(const TargetLimits& limits) = 0;
  // Starts one request; `done` runs exactly once, later, inside Poll().
  virtual void Start(const BenchRequest& request, std::function<void(RequestRecord)> done) = 0;
  // Runs finished requests' callbacks for up to `seconds`; returns sooner when nothing is in
  // flight.
  virtual void Poll(double seconds) = 0;
  virtual int in_flight() const = 0;
  // The server's counters now (has = false when it exposes none).
  virtual TargetCounters Counters() = 0;
  // KV cache usage now, 0..1 (-1 when unknown; read between polls, must be cheap).
  virtual double KvUsage() = 0;
  // The process whose memory is reported (0 = this one, -1 = none).
  virtual int rss_pid() const = 0;
  // Tokens received so far by each request in flight, in the order they were started (for
  // scenarios that act on a running point; empty where the target cannot tell).
  virtual std::vector<size_t> TokensSoFar() { return {}; }
  // Ends every request in flight; their `done` callbacks still run, with what they measured
  // (finish_reason "cancelled"). Targets that cannot cancel let the requests run out.
  virtual void CancelAll() {}
};

}  // namespace brisk
