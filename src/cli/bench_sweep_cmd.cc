// `brisk bench` without a subcommand: the batching experiment (bench/bench_sweep.h) in-process
// (-m, default: the embedded synthetic Qwen2.5-0.5B) or against a server (--url), written as a
// terminal table plus JSON/CSV/Markdown/HTML reports in --out; the HTML report and its JSON are
// also copied to $BRISK_HOME/bench/latest/, which `brisk serve` shows at /bench.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <memory>
#include <sstream>
#include <string>

#include "bench/bench_sweep.h"
#include "bench/engine_target.h"
#include "bench/gpu_sampler.h"
#include "bench/http_client.h"
#include "bench/http_target.h"
#include "bench/server_gauges.h"
#include "cli/bench_common.h"
#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/engine_options.h"
#include "engine/engine_config.h"
#include "model/default_model.h"

namespace brisk::cli {
namespace {

struct SweepCliOptions {
  std::string model, url, api_key, served_model;
  int server_pid = 0;
  std::string concurrency, max_num_seqs, request_rate, batch_policy;
  std::string output_len, slo, out, prompt_len, temperature;
  EngineOptions engine;  // in-process: threads, context, KV cache (the sweep sets the rest)
  double timeout_s = 600;
  bool json = false, no_progress = false;
  BenchSweepOptions sweep;
};

int RunSweep(SweepCliOptions& o, const std::string& command) {
  BenchSweepOptions& s = o.sweep;
  s.command = command;
  s.progress = !o.no_progress;
  auto fail = [](const Status& st) { return ReportError(st); };
  if (!o.concurrency.empty()) {
    auto v = ParseTokenList(o.concurrency);
    if (!v.ok() || v->empty())
      return fail(Status::Error("--concurrency must be a list like 1,2,4"));
    s.concurrency.assign(v->begin(), v->end());
  }
  if (!o.max_num_seqs.empty()) {
    auto v = ParseTokenList(o.max_num_seqs);
    if (!v.ok() || v->empty())
      return fail(Status::Error("--max-num-seqs must be a list like 1,4,8"));
    s.max_num_seqs.assign(v->begin(), v->end());
  }
  if (!o.request_rate.empty()) {
    auto v = ParseRateList(o.request_rate);
    if (!v.ok()) return fail(v.status().WithContext("--request-rate"));
    s.request_rates = *v;
  }
  if (!o.batch_policy.empty()) s.batch_policies = SplitList(o.batch_policy);
  if (!o.prompt_len.empty()) {
    auto v = ParseTokenList(o.prompt_len);
    if (!v.ok() || v->empty())
      return fail(Status::Error("--prompt-len must be a list like 512,1024"));
    s.prompt_lens.assign(v->begin(), v->end());
  }
  if (!o.temperature.empty()) {
    for (const std::string& item : SplitList(o.temperature)) {
      char* end = nullptr;
      const float t = std::strtof(item.c_str(), &end);
      if (end != item.c_str() + item.size() || !(t >= 0))
        return fail(Status::Error("--temperature: '" + item + "' is not a number >= 0"));
      s.temperatures.push_back(t);
    }
    if (s.temperatures.empty()) return fail(Status::Error("--temperature: empty list"));
  }
  if (!o.output_len.empty()) {
    auto v = ParseOutputLen(o.output_len, &s.natural);
    if (!v.ok()) return fail(v.status());
    s.output_len = *v;
  }
  if (!o.slo.empty()) {
    auto v = ParseSlo(o.slo);
    if (!v.ok()) return fail(v.status().WithContext("--slo"));
    s.slo = *v;
  }

  std::unique_ptr<LoadTarget> target;
  if (!o.url.empty()) {
    if (!o.model.empty()) return fail(Status::Error("give -m (in-process) or --url, not both"));
    HttpTargetOptions h;
    h.url = o.url;
    h.api_key = o.api_key;
    h.model = o.served_model;
    h.server_pid = o.server_pid;
    h.request_timeout_s = o.timeout_s;
    auto t = CreateHttpTarget(h);
    if (!t.ok()) return fail(t.status());
    target = std::move(t).value();
  } else {
    auto engine = o.engine.Resolve();
    if (!engine.ok()) return fail(engine.status());
    auto path = ResolveModelPath(o.model);
    if (!path.ok()) return fail(path.status());
    EngineTargetOptions e;
    e.model = *path;
    e.engine = *engine;
    e.request_timeout_s = o.timeout_s;
    auto t = CreateEngineTarget(e);
    if (!t.ok()) return fail(t.status());
    target = std::move(t).value();
  }
  // Beside the load on a server (--url): its own gauges, and the GPUs where nvidia-smi is on the
  // PATH (a GPU server benchmarked from its machine). In-process the engine runs on this
  // machine's CPUs: a GPU here has nothing to do with the numbers.
  std::unique_ptr<ServerGaugeSampler> gauges;
  std::unique_ptr<GpuSampler> gpu;
  if (!o.url.empty()) {
    auto url = ParseHttpUrl(o.url);
    if (!url.ok()) return fail(url.status());
    gauges = std::make_unique<ServerGaugeSampler>(*url, o.api_key);
    s.samplers.push_back(gauges.get());
    gpu = GpuSampler::CreateIfAvailable();
    if (gpu) s.samplers.push_back(gpu.get());
  }
  auto rep = RunBenchSweep(*target, s);
  if (!rep.ok()) return fail(rep.status());
  target.reset();
  return FinishBenchReport(*rep, o.out, o.json);
}

}  // namespace

CommandFn AddBenchSweepOptions(CLI::App& bench) {
  auto o = std::make_shared<SweepCliOptions>();
  BenchSweepOptions& s = o->sweep;
  bench.add_option("-m,--model", o->model,
                   "in-process: GGUF file or HF directory (default: the embedded synthetic "
                   "Qwen2.5-0.5B)");
  bench.add_option("--url", o->url,
                   "benchmark an OpenAI-compatible server instead (brisk, llama-server, vLLM)");
  bench.add_option("--api-key", o->api_key, "--url: sent as Authorization: Bearer");
  bench.add_option("--served-model", o->served_model,
                   "--url: the model name to send (default: the first of GET /v1/models)");
  bench.add_option("--server-pid", o->server_pid, "--url: report this process's peak RSS")
      ->check(CLI::PositiveNumber);
  bench.add_option("--workload", s.workload, "qa, copywriting, code or mix")->capture_default_str();
  bench.add_option("--concurrency", o->concurrency,
                   "closed-loop clients, one point per value (default 1,2,4,8)");
  bench.add_option("--request-rate", o->request_rate,
                   "open loop instead: requests per second, one point per value (inf = all at "
                   "once)");
  bench
      .add_option("--burstiness", s.burstiness,
                  "open loop: gamma shape of the arrival gaps (1 = Poisson, < 1 = bursts)")
      ->capture_default_str();
  bench.add_option("--max-num-seqs", o->max_num_seqs,
                   "engine sequence caps to sweep (in-process default: the largest concurrency; "
                   "--url: PATCH /admin/config of brisk serve)");
  bench.add_option("--batch-policy", o->batch_policy, "policies to sweep: static,loadavg,slo");
  bench.add_option("--max-batched-tokens", s.max_num_batched_tokens, "engine: tokens per step")
      ->check(CLI::Range(1, EngineLimits::kMaxNumBatchedTokens));
  bench
      .add_option("--max-prefill-chunk", s.max_prefill_chunk,
                  "engine: prompt tokens of one request per step")
      ->check(CLI::Range(1, EngineLimits::kMaxNumBatchedTokens));
  bench.add_option("--tpot-target", s.tpot_target_ms, "engine: slo policy TPOT target (ms)")
      ->check(CLI::PositiveNumber);
  bench
      .add_option("--num-prompts", s.num_prompts,
                  "measured requests per point (default max(4 x concurrency, 8); 32 at a rate)")
      ->check(CLI::Range(1, 1000000));
  bench.add_option("--output-len", o->output_len,
                   "N fixed output tokens (ignore_eos) or 'natural' (default: the workload's: "
                   "qa 64, copywriting 256, code 192)");
  bench.add_option("--prompt-len", o->prompt_len,
                   "pad every prompt with about N tokens of filler; a list sweeps it "
                   "(context-length runs: 512,1024,2048,4096)");
  bench.add_option("--temperature", o->temperature,
                   "sampling temperature, 0 = greedy (default); a list sweeps it");
  bench.add_option("--top-p", s.top_p)->capture_default_str();
  bench.add_option("--slo", o->slo, "goodput objective, e.g. ttft:500,tpot:50 (ms)");
  bench.add_option("--warmup", s.warmup, "unmeasured requests first")
      ->capture_default_str()
      ->check(CLI::Range(0, 1000));
  bench.add_option("--seed", s.seed, "sampling seeds and arrival times")->capture_default_str();
  AddEngineOptions(&bench, &o->engine, kThreadOption | kMemoryOptions);
  bench.add_option("--timeout", o->timeout_s, "seconds before a request counts as failed")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  bench.add_option("--out", o->out, "report folder (default: $BRISK_HOME/bench/<time>)");
  bench.add_flag("--json", o->json, "print JSON instead of the table");
  bench.add_flag("--no-progress", o->no_progress, "no live progress line");
  return [o] { return RunSweep(*o, CommandLine()); };
}

}  // namespace brisk::cli
