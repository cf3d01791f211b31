// `brisk run -m MODEL --tokens 1,2,3 -n 16`: one-shot greedy generation, printing token ids.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "model/default_model.h"
#include "model/forward.h"
#include "model/synth.h"

namespace brisk::cli {
namespace {

struct RunOptions {
  std::string model;
  std::string tokens;
  int n_predict = 16;
  int threads = 0;
};

int ArgMax(const float* v, int n) { return int(std::max_element(v, v + n) - v); }

int RunRun(const RunOptions& o) {
  auto prompt = ParseTokenList(o.tokens);
  if (!prompt.ok()) return ReportError(prompt.status());
  auto path = ResolveModelPath(o.model);
  if (!path.ok()) return ReportError(path.status());
  auto model = Model::Load(*path);
  if (!model.ok()) return ReportError(model.status());
  const ModelConfig& c = (*model)->config();
  if (IsSynthetic(**model)) std::fprintf(stderr, "%s\n", kSyntheticNotice);
  ThreadPool pool(o.threads);
  ReferenceForward fwd(**model, pool);
  const int capacity = std::min<int64_t>(c.context_length, int64_t(prompt->size()) + o.n_predict);
  KvCache kv(c, capacity);
  std::vector<float> logits(c.n_vocab);

  const double t0 = NowSeconds();
  const int32_t last = int32_t(prompt->size()) - 1;
  Status st = fwd.Run(*prompt, 0, kv, std::span<const int32_t>(&last, 1), logits.data());
  if (!st.ok()) return ReportError(st);
  const double t1 = NowSeconds();
  std::vector<int32_t> out;
  int pos = int(prompt->size());
  for (int i = 0; i < o.n_predict; ++i) {
    int32_t next = ArgMax(logits.data(), c.n_vocab);
    out.push_back(next);
    if (i + 1 == o.n_predict || pos >= capacity) break;
    const int32_t row = 0;
    st = fwd.Run(std::span<const int32_t>(&next, 1), pos++, kv, std::span<const int32_t>(&row, 1),
                 logits.data());
    if (!st.ok()) return ReportError(st);
  }
  const double t2 = NowSeconds();
  for (size_t i = 0; i < out.size(); ++i) std::printf("%s%d", i ? "," : "", out[i]);
  std::printf("\n");
  std::fflush(stdout);  // ids first, timing after, even when both go to one pipe
  std::fprintf(stderr,
               "prompt %zu tokens in %.1f ms, generated %zu tokens in %.1f ms (%.1f tok/s)\n",
               prompt->size(), (t1 - t0) * 1e3, out.size(), (t2 - t1) * 1e3,
               out.size() > 1 ? (out.size() - 1) / (t2 - t1) : 0.0);
  return 0;
}

}  // namespace

CommandFn AddRunCommand(CLI::App& app) {
  auto o = std::make_shared<RunOptions>();
  CLI::App* sub = app.add_subcommand("run", "One-shot greedy generation");
  sub->add_option("-m,--model", o->model,
                  "GGUF file or HF directory (default: the embedded synthetic Qwen2.5-0.5B)");
  sub->add_option("--tokens", o->tokens, "prompt token ids, comma-separated")->required();
  sub->add_option("-n,--n-predict", o->n_predict, "tokens to generate")
      ->check(CLI::Range(1, 1 << 20));
  sub->add_option("-t,--threads", o->threads, "compute threads (default: all cores)");
  return [o] { return RunRun(*o); };
}

}  // namespace brisk::cli
