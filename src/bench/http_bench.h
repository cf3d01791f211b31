// `brisk bench http`: a load generator for any OpenAI-compatible server (brisk serve,
// llama-server, vLLM), run as a separate process — the HTTP counterpart of `brisk bench engine`
// (bench/engine_bench.h), with the same closed loop and the same report tables, so the two can
// be compared side by side and the difference is what HTTP, JSON and SSE cost.
//
// C clients each POST a streaming request (/v1/chat/completions or /v1/completions; stream,
// stream_options.include_usage, max_tokens = output_len, ignore_eos, temperature 0), wait for its
// end and send the next. Per request (DESIGN §7 "Measuring"): TTFT = send -> first event with
// content, ITL = gaps between content events, TPOT = (last - first content event) /
// (completion_tokens - 1) with completion_tokens from the usage chunk, E2E = send -> end of the
// stream. A request succeeds only when the stream ended with data: [DONE] after a finish_reason.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "bench/bench_report.h"
#include "bench/stats.h"
#include "util/status.h"

namespace brisk {

struct HttpBenchOptions {
  std::string url;           // http://host:port (a trailing /v1 is accepted)
  bool completions = false;  // /v1/completions with a prompt instead of chat messages
  std::vector<int> concurrency = {1, 16};
  int num_prompts = 0;    // measured requests per concurrency; 0 = max(4 * C, 8)
  double duration_s = 0;  // > 0: instead of num_prompts, send for this long (see ClosedLoop)
  int output_len = 64;
  int prompt_len = 0;              // > 0: pad each user message to about this many words
  int warmup = 2;                  // unmeasured requests (one at a time) before anything else
  double request_timeout_s = 600;  // send -> end of the stream; a slower request fails
  double connect_timeout_s = 10;
  std::string model;         // "" = the first id of GET /v1/models (none if that fails)
  std::string api_key;       // sent as "Authorization: Bearer ..."
  int server_pid = 0;        // > 0: sample this process's RSS every second
  bool metrics = false;      // diff GET /metrics around every level
  uint64_t seed = 20240611;  // picks the filler words of --prompt-len
  bool progress = false;     // one stderr line per phase
};

// The server's own counters (Prometheus text, vLLM's names), every label set summed.
struct ServerCounters {
  double generation_tokens = 0;  // vllm:generation_tokens_total
  double request_success = 0;    // vllm:request_success_total
  double e2e_count = 0;          // vllm:e2e_request_latency_seconds_count
  double ttft_count = 0;         // vllm:time_to_first_token_seconds_count
  bool has_generation_tokens = false, has_request_success = false, has_e2e_count = false,
       has_ttft_count = false;
};
// Errors when the text holds none of the four (not a vLLM-compatible /metrics).
Result<ServerCounters> ParseServerCounters(std::string_view prometheus_text);

// --metrics: the counters' differences over one level, checked against what the clients saw.
struct MetricsCheck {
  bool ok = false;    // both scrapes worked
  std::string error;  // why not
  ServerCounters delta;
  int64_t client_tokens = 0;    // completion tokens the clients received (usage chunks)
  int64_t client_finished = 0;  // requests the clients saw finish ([DONE] + finish_reason)
  bool tokens_match = false;    // generation_tokens delta == client_tokens
  bool count_match = false;     // both histogram count deltas == client_finished
};

// One closed-loop run at a fixed concurrency: the driver's point (failures: see
// RequestOutcome::error; token counts are the usage of the successful requests) and the checks
// only HTTP needs.
struct HttpBenchRun : BenchPoint {
  int usage_missing = 0;  // successes without a usage chunk (their content events were counted)
  MetricsCheck metrics;   // with --metrics
};

struct HttpBenchReport {
  std::string brisk_version, cpu;
  std::string url, endpoint, model, server;  // server: the Server header, if it sent one
  HttpBenchOptions options;
  bool waited_for_ready = false;  // GET /health answered 503 (model loading) at first
  int warmup_failures = 0;
  std::vector<std::string> warmup_messages;
  bool has_rss = false;
  double rss_after_warmup_mib = 0, rss_end_mib = 0, rss_max_mib = 0;
  std::vector<HttpBenchRun> runs;

  std::string ToTable() const;
  std::string ToJson() const;
};

// Errors only for bad options, a bad URL or a --server-pid that is not running; an unreachable
// or failing server shows as failed requests.
Result<HttpBenchReport> RunHttpBench(const HttpBenchOptions& options);

// ---- the parts, for tests --------------------------------------------------------------------

struct HttpCallResult;

// What one streamed request measured.
struct RequestOutcome {
  bool ok = false;
  std::string error;  // why it failed
  double start_s = 0, end_s = 0;
  std::vector<double> content_s;                   // arrival of every event that carried content
  int prompt_tokens = -1, completion_tokens = -1;  // -1: no usage chunk
  std::string finish_reason;
};
RequestOutcome AnalyzeStream(const HttpCallResult& response);

// data[0].id of a GET /v1/models body; "" when it is not such a document or lists nothing.
std::string FirstModelId(std::string_view models_json);

// The measured user message number `index` (deterministic; different for every index).
std::string BenchPrompt(int index, int prompt_len_words, uint64_t seed);

}  // namespace brisk
