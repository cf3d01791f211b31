// `brisk tune`: searches the engine limits for the highest throughput within a latency SLO
// (bench/tuner.h), writes the `brisk serve --config` file and the bench report of every
// candidate, and explains the choice.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "bench/engine_target.h"
#include "bench/tuner.h"
#include "cli/bench_common.h"
#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/engine_options.h"
#include "model/default_model.h"

namespace brisk::cli {
namespace {

struct TuneCliOptions {
  std::string model, slo, seqs, tokens, chunks, output_len, out, config_out;
  EngineOptions engine;  // threads, context, KV cache (the search sets the batch limits)
  TuneOptions tune;
};

Result<std::vector<int>> IntList(const std::string& text, const char* flag, int min) {
  auto v = ParseTokenList(text);
  if (!v.ok() || v->empty()) return Status::Error(std::string(flag) + " must be a list like 1,2,4");
  for (int x : *v)
    if (x < min)
      return Status::Error(std::string(flag) + " values must be >= " + std::to_string(min));
  return std::vector<int>(v->begin(), v->end());
}

int RunTuneCli(TuneCliOptions& o) {
  TuneOptions& t = o.tune;
  t.bench.command = CommandLine();
  auto slo = ParseSlo(o.slo);
  if (!slo.ok()) return ReportError(slo.status().WithContext("--slo"));
  t.bench.slo = *slo;
  if (!o.seqs.empty()) {
    auto v = IntList(o.seqs, "--seqs", 1);
    if (!v.ok()) return ReportError(v.status());
    t.seqs = *v;
  }
  if (!o.tokens.empty()) {
    auto v = IntList(o.tokens, "--batched-tokens", 1);
    if (!v.ok()) return ReportError(v.status());
    t.batched_tokens = *v;
  }
  if (!o.chunks.empty()) {
    auto v = IntList(o.chunks, "--prefill-chunks", 0);
    if (!v.ok()) return ReportError(v.status());
    t.prefill_chunks = *v;
  }
  if (!o.output_len.empty()) {
    auto v = ParseOutputLen(o.output_len, &t.bench.natural);
    if (!v.ok()) return ReportError(v.status());
    t.bench.output_len = *v;
  }
  auto engine = o.engine.Resolve();
  if (!engine.ok()) return ReportError(engine.status());
  auto path = ResolveModelPath(o.model);
  if (!path.ok()) return ReportError(path.status());
  EngineTargetOptions e;
  e.model = *path;
  e.engine = *engine;
  auto target = CreateEngineTarget(e);
  if (!target.ok()) return ReportError(target.status());
  auto r = RunTune(**target, t);
  if (!r.ok()) return ReportError(r.status());
  target->reset();

  const std::string dir = o.out.empty() ? DefaultReportDir() : o.out;
  if (Status s = WriteBenchReport(r->report, dir); !s.ok()) return ReportError(s);
  std::printf("%s\n%s", r->report.ToTable().c_str(), r->ToTable().c_str());
  std::printf("report: %s/report.html\n", std::filesystem::absolute(dir).c_str());
  auto config = r->ConfigJson();
  if (!config.ok()) return ReportError(config.status());
  const std::string file = o.config_out.empty() ? dir + "/tuned.json" : o.config_out;
  std::ofstream f(file, std::ios::binary | std::ios::trunc);
  f << *config;
  f.close();
  if (!f) return ReportError(Status::Error("cannot write " + file));
  std::printf("config: %s\n%s\nuse it: brisk serve --config %s\n", file.c_str(), config->c_str(),
              file.c_str());
  return 0;
}

}  // namespace

CommandFn AddTuneCommand(CLI::App& app) {
  auto o = std::make_shared<TuneCliOptions>();
  TuneOptions& t = o->tune;
  CLI::App* cmd = app.add_subcommand(
      "tune",
      "find the max-num-seqs / max-num-batched-tokens / prefill chunk with the most throughput "
      "within a latency SLO on this machine, and write a config file for brisk serve");
  cmd->add_option("-m,--model", o->model,
                  "GGUF file or HF directory (default: the embedded synthetic Qwen2.5-0.5B)");
  cmd->add_option("--slo", o->slo, "p99 limits, e.g. ttft_p99:500,tpot_p99:60 (ms)")->required();
  cmd->add_option("--workload", t.bench.workload, "qa, copywriting, code or mix")
      ->capture_default_str();
  cmd->add_option("--seqs", o->seqs, "max_num_seqs values to search (default 1,2,4,6,8,12,16)");
  cmd->add_option("--batched-tokens", o->tokens,
                  "max_num_batched_tokens values (default 128,256,512; the last is the "
                  "starting budget)");
  cmd->add_option("--prefill-chunks", o->chunks,
                  "max_prefill_chunk values, 0 = the whole budget (default 64,128,0)");
  cmd->add_flag("--exhaustive", t.exhaustive, "measure the whole grid instead of searching");
  cmd->add_option("--num-prompts", t.bench.num_prompts,
                  "requests per candidate (default max(4 x max_num_seqs, 8))")
      ->check(CLI::Range(1, 1000000));
  cmd->add_option("--output-len", o->output_len, "N fixed output tokens or 'natural'");
  cmd->add_option("--warmup", t.bench.warmup, "unmeasured requests first")
      ->capture_default_str()
      ->check(CLI::Range(0, 1000));
  AddEngineOptions(cmd, &o->engine, kThreadOption | kMemoryOptions);
  cmd->add_option("--out", o->out, "report folder (default: $BRISK_HOME/bench/<time>)");
  cmd->add_option("--config-out", o->config_out, "config file to write (default: OUT/tuned.json)");
  return [o] { return RunTuneCli(*o); };
}

}  // namespace brisk::cli
