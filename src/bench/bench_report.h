// The results of one `brisk bench` run (DESIGN §2, §7): a header saying what ran where, and one
// point per swept setting (concurrency, max_num_seqs, request rate or batch policy). Every
// output format is written from this one structure, so the terminal table, JSON, CSV, Markdown
// and the HTML report always say the same thing:
//   ToTable      the terminal table (also the body of the Markdown report)
//   ToJson       everything, machine-readable (what `brisk tune` and the web UI read back)
//   ToCsv        one row per point, a flat header line, for spreadsheets
//   ToMarkdown   header + table, for docs/experiments.md
//   ToHtml       one self-contained page: inline CSS and SVG charts, no script, no external URL
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/stats.h"
#include "util/status.h"

namespace brisk {

// A latency objective: a request is "good" when its TTFT and TPOT are both within the limits
// (a limit of 0 is not checked). `brisk tune` reads the same limits as p99 targets.
struct Slo {
  double ttft_ms = 0;
  double tpot_ms = 0;
  bool empty() const { return ttft_ms <= 0 && tpot_ms <= 0; }
};
// "ttft:500,tpot:50" (also ttft_p99 / tpot_p99, any order, either may be missing).
Result<Slo> ParseSlo(const std::string& text);

// What the server said about itself over one point (engine stats in-process, /metrics over HTTP).
struct ServerSide {
  bool has = false;              // nothing below is meaningful without it
  int64_t steps = 0;             // engine steps
  double mean_batch_seqs = 0;    // sequences per step
  double mean_batch_tokens = 0;  // tokens per step (prefill + decode)
  int64_t preemptions = 0;
  int64_t prefix_queried_tokens = 0, prefix_hit_tokens = 0;
  int64_t generation_tokens = 0;  // the server's count (cross-checks the clients' count)
  double kv_usage_max = 0;        // 0..1, highest sampled
  // Prompt tokens computed, prefix-cache hits excluded (in-process; bench engine reads it, the
  // sweep's reports do not show it).
  int64_t prompt_tokens = 0;
};

// The GPUs over one point (where nvidia-smi is on the PATH: bench/gpu_sampler.h). Each sample
// reads every GPU: utilisation is their mean, memory and power their sum; NaN where nvidia-smi
// reported the value as not available.
struct GpuSide {
  bool has = false;  // nothing below is meaningful without it
  int gpus = 0;      // GPUs in the last sample
  int samples = 0;
  double util_mean_pct = 0, util_max_pct = 0;  // 0..100
  double mem_used_max_mib = 0;
  double power_mean_w = 0, power_max_w = 0;
};

// The target's own gauges sampled while one point ran (--url: GET /metrics, vLLM's names:
// vllm:kv_cache_usage_perc, vllm:num_requests_running, vllm:num_requests_waiting;
// bench/server_gauges.h). NaN for a gauge the server does not export.
struct ServerGauges {
  bool has = false;
  int samples = 0;
  double kv_usage_mean = 0, kv_usage_max = 0;  // 0..1
  double running_mean = 0, running_max = 0;
  double waiting_mean = 0, waiting_max = 0;
};

// One measured setting.
struct BenchPoint {
  // The sweep coordinates (0 = not set for this run).
  int concurrency = 0;      // closed loop: clients, each sends its next request when done
  double request_rate = 0;  // open loop: Poisson arrivals per second (inf = all at once)
  int max_num_seqs = 0;     // engine limits in force (0 = the server's, unknown)
  int max_num_batched_tokens = 0;
  int max_prefill_chunk = 0;
  std::string batch_policy;  // "" = the server's
  std::string label;         // e.g. "c=8", "rate=2.0", "seqs=4" (what the charts' x axis shows)

  int requests = 0, successes = 0, failures = 0;
  std::vector<std::string> failure_messages;     // distinct messages, the first few
  double wall_s = 0;                             // first send -> last end
  int64_t prompt_tokens = 0, output_tokens = 0;  // of the successful requests
  double output_tok_s = 0;                       // output tokens / wall
  double total_tok_s = 0;                        // (prompt + output) / wall
  double request_s = 0;                          // successful requests / wall
  double goodput_s = 0;       // requests meeting the SLO / wall (= request_s without an SLO)
  double slo_attainment = 0;  // requests meeting the SLO / requests (0..1)
  LatencySummary ttft_ms, tpot_ms, itl_ms, e2e_ms;
  double peak_rss_mib = 0;  // 0 = not measured (HTTP without --server-pid)
  ServerSide server;
  GpuSide gpu;          // has = false without nvidia-smi
  ServerGauges gauges;  // has = false in-process, or when the server exports none
};

// What the server's /bench page adds around a report (the file written to disk has none of it):
// every field is trusted markup or CSS made by the server, never text from the report.
struct ReportPageChrome {
  std::string css;              // appended to the page's <style>
  std::string body_class;       // the <body> class ("" = none)
  std::string header_html;      // first in <body>: the site's top bar
  std::string provenance_html;  // appended to the "Measured ... on ..." line
};

struct BenchReport {
  // Header: machine, model, settings.
  std::string brisk_version, started_at;  // started_at: ISO-8601 UTC
  std::string command;                    // the command line as run
  std::string cpu, isa;                   // isa: in-process only
  int cores = 0, threads = 0;
  std::string mode;    // "in-process" or "http"
  std::string url;     // http mode
  std::string server;  // http mode: the Server header ("" when none)
  std::string model, file_type;
  bool synthetic = false;  // random weights: speeds are real, texts are noise
  double model_load_ms = 0, tokenizer_load_ms = 0;  // in-process
  std::string workload;                             // qa | copywriting | code | mix
  std::string output_len;                           // "64" or "natural (<= N)"
  std::string sampling;  // e.g. "greedy" or "temperature 0.8, top-p 0.95"
  std::string
      sweep;  // the swept variable: concurrency | max_num_seqs | request_rate | batch_policy
  std::string settings;  // the rest, one line (engine limits, prompts per point, warmup)
  Slo slo;
  std::vector<BenchPoint> points;

  std::string ToTable() const;
  std::string ToJson() const;
  std::string ToCsv() const;
  std::string ToMarkdown() const;
  std::string ToHtml() const;
  std::string ToHtml(const ReportPageChrome& chrome) const;
};

// Reads back ToJson's output (for `brisk tune`, tests and the server's report page). Errors on
// anything that is not such a document.
Result<BenchReport> BenchReportFromJson(const std::string& text);

// One point as ToJson writes it (bench engine and bench http extend it with their own fields).
nlohmann::ordered_json BenchPointJson(const BenchPoint& p);

// Writes report.json, report.csv, report.md and report.html into `dir` (created when missing).
Status WriteBenchReport(const BenchReport& report, const std::string& dir);

}  // namespace brisk
