// `brisk bench raw` (pp / tg / batched decode against the measured machine limits) and the
// registration of `brisk bench engine` (cli/bench_engine.cc).
#include <cstdio>
#include <memory>
#include <string>

#include "bench/raw_bench.h"
#include "cli/cli_util.h"
#include "cli/commands.h"
#include "model/default_model.h"

namespace brisk::cli {
namespace {

struct BenchCliOptions {
  std::string model;
  int threads = 0;
  bool json = false;
  RawBenchOptions raw;
  std::string batches = "1,2,4,8,16,32,64";
};

int RunBenchRaw(BenchCliOptions& o) {
  auto path = ResolveModelPath(o.model);
  if (!path.ok()) return ReportError(path.status());
  auto batches = ParseTokenList(o.batches);
  if (!batches.ok() || batches->empty())
    return ReportError(Status::Error("--batch must be a list like 1,2,4,8"));
  o.raw.model = *path;
  o.raw.threads = o.threads;
  o.raw.batches.assign(batches->begin(), batches->end());
  for (int b : o.raw.batches)
    if (b < 1 || b > 512) return ReportError(Status::Error("batch sizes must be in 1..512"));
  auto rep = RunRawBench(o.raw);
  if (!rep.ok()) return ReportError(rep.status());
  std::printf("%s\n", o.json ? rep->ToJson().c_str() : rep->ToTable().c_str());
  return 0;
}

}  // namespace

CommandFn AddBenchCommand(CLI::App& app) {
  auto o = std::make_shared<BenchCliOptions>();
  CLI::App* bench = app.add_subcommand("bench", "Benchmarks");
  bench->require_subcommand(1);
  CLI::App* raw = bench->add_subcommand("raw", "pp / tg / batched decode like llama-bench");
  raw->add_option("-m,--model", o->model,
                  "GGUF file or HF directory (default: the embedded synthetic Qwen2.5-0.5B)");
  raw->add_option("-t,--threads", o->threads, "compute threads (default: all cores)");
  raw->add_option("--pp", o->raw.pp, "prompt tokens for the pp test")->check(CLI::Range(1, 8192));
  raw->add_option("--tg", o->raw.tg, "generated tokens for the tg test")
      ->check(CLI::Range(1, 8192));
  raw->add_option("--batch", o->batches, "batched decode sizes (comma-separated)");
  raw->add_option("--batch-prompt", o->raw.batch_prompt, "prompt tokens per sequence")
      ->check(CLI::Range(1, 8192));
  raw->add_option("--batch-gen", o->raw.batch_gen, "decode steps per batch")
      ->check(CLI::Range(1, 8192));
  raw->add_option("--reps", o->raw.reps, "repetitions (medians)")->check(CLI::Range(1, 100));
  raw->add_flag("--json", o->json, "print JSON instead of a table");
  CommandFn engine = AddBenchEngineSubcommand(*bench);
  CommandFn http = AddBenchHttpSubcommand(*bench);
  return [o, raw, bench, engine, http] {
    if (raw->parsed()) return RunBenchRaw(*o);
    return bench->got_subcommand("http") ? http() : engine();
  };
}

}  // namespace brisk::cli
