// `brisk bench`: the sweep (cli/bench_sweep_cmd.cc) when no subcommand is given, `bench raw`
// (pp / tg / batched decode against the measured machine limits, here) and the registration of
// the other subcommands (engine, http, report, quality).
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
  CLI::App* bench = app.add_subcommand(
      "bench",
      "The batching experiment: sweeps concurrency / max-num-seqs / request rate over a "
      "workload and reports TTFT, TPOT, ITL, E2E, throughput and goodput (subcommands: "
      "kernel-level and single-purpose benchmarks)");
  bench->require_subcommand(0, 1);
  CommandFn sweep = AddBenchSweepOptions(*bench);
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
  CommandFn report = AddBenchReportSubcommand(*bench);
  CommandFn quality = AddBenchQualitySubcommand(*bench);
  return [o, raw, bench, engine, http, report, quality, sweep] {
    if (raw->parsed()) return RunBenchRaw(*o);
    if (bench->got_subcommand("http")) return http();
    if (bench->got_subcommand("engine")) return engine();
    if (bench->got_subcommand("report")) return report();
    if (bench->got_subcommand("quality")) return quality();
    return sweep();
  };
}

}  // namespace brisk::cli
