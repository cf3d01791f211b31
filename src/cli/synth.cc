// `brisk synth`: writes a synthetic model (real architecture and vocabulary, random weights).
#include "model/synth.h"

#include <cstdio>
#include <memory>
#include <string>

#include "cli/cli_util.h"
#include "cli/commands.h"

namespace brisk::cli {
namespace {

struct SynthCliOptions {
  std::string shape = "qwen2.5-0.5b";
  std::string type = "q4_k_m";
  uint64_t seed = 1;
  std::string pooling;  // "" = the shape's
  std::string output;
  int threads = 0;
};

int RunSynth(const SynthCliOptions& c) {
  SynthOptions o;
  o.shape = c.shape;
  o.seed = c.seed;
  o.threads = c.threads;
  if (!c.pooling.empty()) {
    auto pooling = ParsePooling(c.pooling);
    if (!pooling.ok()) return ReportError(pooling.status());
    o.pooling = *pooling;
  }
  auto type = ParseWritableFileType(c.type);
  if (!type.ok()) return ReportError(type.status());
  o.type = *type;
  const double t0 = NowSeconds();
  o.progress = StderrProgress(t0, /*bar=*/true);
  Status st = WriteSynthModel(o, c.output);
  std::fprintf(stderr, "\n");
  if (!st.ok()) return ReportError(st);
  std::fprintf(stderr, "wrote %s (%s %s, seed %llu, random weights) in %.1f s\n", c.output.c_str(),
               c.shape.c_str(), FileTypeString(o.type).c_str(), (unsigned long long)c.seed,
               NowSeconds() - t0);
  return 0;
}

}  // namespace

CommandFn AddSynthCommand(CLI::App& app) {
  auto o = std::make_shared<SynthCliOptions>();
  CLI::App* sub = app.add_subcommand(
      "synth", "Write a synthetic model: real architecture and vocabulary, random weights");
  sub->add_option("--shape", o->shape,
                  "qwen2.5-0.5b | qwen2.5-1.5b | qwen3-0.6b | tiny | qwen3-embedding-tiny | "
                  "qwen3-reranker-tiny");
  sub->add_option("--type", o->type,
                  "f32 | f16 | bf16 | q8_0 | q4_0 | q4_1 | q5_0 | q5_1 | q4_k_m | q5_k_m | q6_k | "
                  "iq4_nl | iq4_xs");
  sub->add_option("--seed", o->seed, "random seed (same seed, same bytes)");
  sub->add_option("--pooling", o->pooling,
                  "none | last | rank: the file's pooling_type (default: the shape's; rank adds "
                  "the yes/no reranker head)");
  sub->add_option("-o,--output", o->output, "output GGUF file")->required();
  sub->add_option("-t,--threads", o->threads, "threads (default: all cores)");
  return [o] { return RunSynth(*o); };
}

}  // namespace brisk::cli
