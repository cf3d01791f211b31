// `brisk bench quality`: file types against a reference of the same model (bench/quality_bench.h).
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "bench/quality_bench.h"
#include "cli/cli_util.h"
#include "cli/commands.h"

namespace brisk::cli {
namespace {

struct BenchQualityCliOptions {
  bool json = false;
  std::string kv_type = "f16";
  QualityBenchOptions bench;
};

int RunBenchQuality(BenchQualityCliOptions& o) {
  o.bench.progress = true;
  auto kv = ParseKvType(o.kv_type);
  if (!kv.ok()) return ReportError(kv.status().WithContext("--kv-type"));
  o.bench.kv_type = *kv;
  auto rep = RunQualityBench(o.bench);
  if (!rep.ok()) return ReportError(rep.status());
  std::printf("%s\n", o.json ? rep->ToJson().c_str() : rep->ToTable().c_str());
  return 0;
}

}  // namespace

CommandFn AddBenchQualitySubcommand(CLI::App& bench) {
  auto o = std::make_shared<BenchQualityCliOptions>();
  QualityBenchOptions& b = o->bench;
  CLI::App* cmd = bench.add_subcommand(
      "quality",
      "file types vs a reference: size, load time, decode speed, top-1 agreement and KL "
      "divergence of the next-token distributions (teacher forcing on the mix prompts)");
  cmd->add_option("--ref", b.ref, "reference model (GGUF file or HF directory), e.g. the F16 file")
      ->required();
  cmd->add_option("-m,--model", b.models, "a model to compare with the reference (repeatable)")
      ->required();
  cmd->add_option("--prompts", b.prompts, "the first N prompts of the mix workload")
      ->capture_default_str()
      ->check(CLI::Range(1, 48));
  cmd->add_option("-t,--threads", b.threads, "compute threads (default: all cores)")
      ->check(CLI::Range(0, 1024));
  cmd->add_option("--tg", b.tg, "decode speed: greedy tokens generated after a short prompt")
      ->capture_default_str()
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--reps", b.reps, "loads and decode runs per model (medians are reported)")
      ->capture_default_str()
      ->check(CLI::Range(1, 100));
  cmd->add_option("--kv-type", o->kv_type,
                  "the compared models' KV cache: f16, f32 or q8_0 (the reference keeps f16; "
                  "-m the reference's own file with q8_0 measures the 8-bit cache alone)")
      ->capture_default_str();
  cmd->add_flag("--json", o->json, "print JSON instead of a table");
  return [o] { return RunBenchQuality(*o); };
}

}  // namespace brisk::cli
