// `brisk bench engine`: an in-process load generator for the serving engine (DESIGN §7
// "Measuring"). Closed loops of C clients each submit a request, wait for its finish and submit
// the next; latencies are taken from the request sinks with the steady clock, so they include
// everything the engine does between submission and a token reaching its submitter (queueing,
// scheduling, prefill chunks, detokenisation), and nothing of HTTP.
//
// Requests have fixed shapes (random prompt ids from a fixed seed, greedy, ignore_eos,
// max_tokens = output_len), so runs are comparable and every request produces output_len tokens.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench/bench_report.h"
#include "bench/stats.h"
#include "engine/batch_controller.h"
#include "engine/engine_config.h"
#include "model/model.h"
#include "tokenizer/tokenizer.h"
#include "util/status.h"

namespace brisk {

struct EngineBenchOptions {
  std::string model;  // resolved path (the path overload of RunEngineBench loads it)
  std::vector<int> concurrency = {1, 16};
  int num_prompts = 0;  // measured requests per concurrency; 0 = max(4 * C, 8)
  int prompt_len = 32;  // distinct tokens per prompt (after the shared prefix)
  int output_len = 64;
  int shared_prefix = 0;  // > 0: every prompt starts with the same this many tokens
  int long_prompt = 0;    // > 0: also measure streams' TPOT while a prompt this long prefills
  int warmup = 2;         // unmeasured requests before anything else
  uint64_t seed = 20240611;
  // Engine deadline of every request; a wait that outlasts it by a minute (a hung engine) is a
  // failure too, so a run always ends.
  double request_timeout_s = 600;
  // Engine settings. max_num_seqs 0 = the largest concurrency (+1 with long_prompt), so a
  // concurrency of C means C sequences in flight, not C clients queueing for fewer slots.
  int max_num_seqs = 0;
  int max_num_batched_tokens = 512;
  int max_prefill_chunk = 0;
  // Threads, context, KV type and budget, prefix caching (0 = the engine's default); the limits
  // above replace its batch fields, and max_model_len 0 grows to fit the longest request.
  EngineConfig engine;
  BatchPolicy batch_policy = BatchPolicy::kStatic;
  double tpot_target_ms = 50;  // slo policy target
  bool progress = false;       // one stderr line per phase
};

// The engine's counters over one run (differences of EngineStats before and after).
struct EngineCounters {
  int64_t steps = 0;
  int64_t prompt_tokens = 0;  // computed (prefix-cache hits excluded)
  int64_t generation_tokens = 0;
  int64_t prefix_queried_tokens = 0, prefix_hit_tokens = 0;
  int64_t preemptions = 0;
  double tokens_per_step = 0;  // (prompt_tokens + generation_tokens) / steps
};

// One closed-loop run at a fixed concurrency: the driver's point (failures are submit errors,
// finishes other than stop/length and waits that timed out; prompt_tokens include cached ones)
// and what only the engine can tell.
struct EngineBenchRun : BenchPoint {
  int64_t cached_tokens = 0;  // prompt tokens served from the prefix cache
  EngineCounters engine;
};

// --shared-prefix: two requests with the same prefix and different suffixes, each run alone.
struct SharedPrefixProbe {
  int prefix_tokens = 0;
  double first_ttft_ms = 0, second_ttft_ms = 0;
  int first_cached_tokens = 0, second_cached_tokens = 0;
  int failures = 0;
};

// --long-prompt at one concurrency: C decoding streams, then one long prompt arriving among them.
struct LongPromptRun {
  int concurrency = 0;
  int long_prompt_tokens = 0;
  // Per-token gaps of the streams. Unloaded: once every stream is decoding, nothing else running.
  // Loaded: the gaps that overlap the long request's submit -> first token interval.
  LatencySummary unloaded_tpot_ms, loaded_tpot_ms;
  double long_ttft_ms = 0;
  int failures = 0;
  std::vector<std::string> failure_messages;
};

struct EngineBenchReport {
  std::string cpu, isa, model, file_type, brisk_version;
  bool synthetic = false;  // random weights: speed is real, text would be noise
  bool tokenizer = false;  // loaded (token events then carry text, as in serving)
  int threads = 0;
  EngineBenchOptions options;  // as run: engine settings resolved
  int max_model_len = 0;
  int kv_blocks = 0, kv_block_size = 0;
  double kv_cache_mib = 0;
  int warmup_failures = 0;
  bool has_shared_prefix_probe = false;
  SharedPrefixProbe shared;
  std::vector<EngineBenchRun> runs;
  std::vector<LongPromptRun> long_runs;

  std::string ToTable() const;
  std::string ToJson() const;
};

// Loads the model (and its tokenizer when it has one) from options.model.
Result<EngineBenchReport> RunEngineBench(const EngineBenchOptions& options);
// With a loaded model; `tokenizer` may be null. Both must outlive the call.
Result<EngineBenchReport> RunEngineBench(const Model& model, const Tokenizer* tokenizer,
                                         const EngineBenchOptions& options);

}  // namespace brisk
