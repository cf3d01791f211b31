// `brisk bench engine`: closed-loop load on the in-process serving engine (bench/engine_bench.h).
#include <cstdio>
#include <memory>
#include <string>

#include "bench/engine_bench.h"
#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/engine_options.h"
#include "engine/engine_config.h"
#include "model/default_model.h"

namespace brisk::cli {
namespace {

struct BenchEngineCliOptions {
  std::string model;
  std::string concurrency = "1,16";
  EngineOptions engine;  // threads, context, KV cache
  std::string batch_policy = "static";
  bool json = false;
  EngineBenchOptions bench;
};

int RunBenchEngine(BenchEngineCliOptions& o) {
  auto levels = ParseTokenList(o.concurrency);
  if (!levels.ok() || levels->empty())
    return ReportError(Status::Error("--concurrency must be a list like 1,4,16"));
  o.bench.concurrency.assign(levels->begin(), levels->end());
  for (int c : o.bench.concurrency)
    if (c < 1 || c > 1024) return ReportError(Status::Error("concurrency must be in 1..1024"));
  auto path = ResolveModelPath(o.model);
  if (!path.ok()) return ReportError(path.status());
  o.bench.model = *path;
  auto engine = o.engine.Resolve();
  if (!engine.ok()) return ReportError(engine.status());
  o.bench.engine = *engine;
  auto policy = ParseBatchPolicy(o.batch_policy);
  if (!policy.ok()) return ReportError(policy.status());
  o.bench.batch_policy = *policy;
  o.bench.progress = true;
  auto rep = RunEngineBench(o.bench);
  if (!rep.ok()) return ReportError(rep.status());
  std::printf("%s\n", o.json ? rep->ToJson().c_str() : rep->ToTable().c_str());
  return 0;
}

}  // namespace

CommandFn AddBenchEngineSubcommand(CLI::App& bench) {
  auto o = std::make_shared<BenchEngineCliOptions>();
  EngineBenchOptions& b = o->bench;
  CLI::App* cmd = bench.add_subcommand(
      "engine", "closed-loop load on the serving engine: TTFT / TPOT / ITL / E2E, throughput");
  cmd->add_option("-m,--model", o->model,
                  "GGUF file or HF directory (default: the embedded synthetic Qwen2.5-0.5B)");
  AddEngineOptions(cmd, &o->engine, kThreadOption | kMemoryOptions);
  cmd->add_option("--concurrency", o->concurrency,
                  "clients in flight, one run per value (comma-separated)")
      ->capture_default_str();
  cmd->add_option("--num-prompts", b.num_prompts,
                  "measured requests per concurrency (default: 4 x concurrency, at least 8)")
      ->check(CLI::Range(1, 1000000));
  cmd->add_option("--prompt-len", b.prompt_len, "prompt tokens (after any shared prefix)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--output-len", b.output_len, "generated tokens per request")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--shared-prefix", b.shared_prefix,
                  "every prompt starts with the same N tokens; also measures the TTFT of a "
                  "cached prefix")
      ->check(CLI::Range(0, 1 << 20));
  cmd->add_option("--long-prompt", b.long_prompt,
                  "also measure the streams' TPOT while an N-token prompt prefills among them")
      ->check(CLI::Range(0, 1 << 20));
  cmd->add_option("--max-num-seqs", b.max_num_seqs,
                  "engine: sequences per step (default: the largest concurrency)")
      ->check(CLI::Range(1, EngineLimits::kMaxNumSeqs));
  cmd->add_option("--max-batched-tokens", b.max_num_batched_tokens, "engine: tokens per step")
      ->capture_default_str()
      ->check(CLI::Range(1, EngineLimits::kMaxNumBatchedTokens));
  cmd->add_option("--max-prefill-chunk", b.max_prefill_chunk,
                  "engine: prompt tokens of one request per step (default: the whole budget)")
      ->check(CLI::Range(0, EngineLimits::kMaxNumBatchedTokens));
  cmd->add_option("--warmup", b.warmup, "unmeasured requests first")
      ->capture_default_str()
      ->check(CLI::Range(0, 1000));
  cmd->add_option("--timeout", b.request_timeout_s, "seconds before a request counts as failed")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--batch-policy", o->batch_policy, "engine: static, loadavg or slo")
      ->capture_default_str();
  cmd->add_option("--tpot-target", b.tpot_target_ms, "engine: slo policy TPOT target (ms)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--json", o->json, "print JSON instead of a table");
  return [o] { return RunBenchEngine(*o); };
}

}  // namespace brisk::cli
