// `brisk run`: one-shot generation through the engine (greedy unless --temp). `-p TEXT` takes
// text (rendered with the chat template as one user message unless --raw) and streams text;
// `--tokens 1,2,3` takes ids and prints the generated ids.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/engine_options.h"
#include "cli/generate.h"
#include "model/default_model.h"
#include "model/fast_forward.h"
#include "model/synth.h"

namespace brisk::cli {
namespace {

struct RunOptions {
  std::string model;
  std::string tokens;
  std::string prompt;
  bool raw = false;
  int n_predict = 16;
  EngineOptions engine;   // threads, context, KV cache
  float temperature = 0;  // greedy by default: reproducible output for scripts and tests
  int top_k = 0;
  float top_p = 1.0f;
  float min_p = 0.0f;
  int64_t seed = -1;
};

SamplingParams Sampling(const RunOptions& o) {
  SamplingParams p;
  p.temperature = o.temperature;
  p.top_k = o.top_k;
  p.top_p = o.top_p;
  p.min_p = o.min_p;
  if (o.seed >= 0) p.seed = uint64_t(o.seed);
  return p;
}

// --tokens: ids in, ids out (stdout), timings on stderr.
int RunTokens(const RunOptions& o, const std::string& path, const EngineConfig& engine) {
  auto prompt = ParseTokenList(o.tokens);
  if (!prompt.ok()) return ReportError(prompt.status());
  auto gen = Generator::Create(path, engine);
  if (!gen.ok()) return ReportError(gen.status());
  Generator& g = **gen;
  if (IsSynthetic(g.model())) std::fprintf(stderr, "%s\n", kSyntheticNotice);
  std::vector<int32_t> out;
  auto st = g.Generate(*prompt, o.n_predict, Sampling(o),
                       [&](const TokenEvent& e) { out.push_back(e.token); });
  if (!st.ok()) return ReportError(st.status());
  for (size_t i = 0; i < out.size(); ++i) std::printf("%s%d", i ? "," : "", out[i]);
  std::printf("\n");
  std::fflush(stdout);  // ids first, timing after, even when both go to one pipe
  std::fprintf(stderr,
               "prompt %d tokens, TTFT %.1f ms, generated %d tokens in %.1f ms (%.1f tok/s)\n",
               st->prompt_tokens, st->ttft_s * 1e3, st->generated, st->decode_s * 1e3,
               st->generated > 1 ? (st->generated - 1) / st->decode_s : 0.0);
  return 0;
}

int RunText(const RunOptions& o, const std::string& path, const EngineConfig& engine) {
  auto gen = Generator::Create(path, engine);
  if (!gen.ok()) return ReportError(gen.status());
  Generator& g = **gen;
  if (IsSynthetic(g.model())) std::fprintf(stderr, "%s\n", kSyntheticNotice);
  std::string text = o.prompt;
  if (!o.raw) {
    nlohmann::ordered_json messages = nlohmann::ordered_json::array();
    messages.push_back({{"role", "user"}, {"content", o.prompt}});
    auto rendered = g.RenderChat(messages);
    if (!rendered.ok()) return ReportError(rendered.status());
    text = *rendered;
  }
  const std::vector<int32_t> ids = g.tokenizer().Encode(text);
  auto st = g.Generate(ids, o.n_predict, Sampling(o), [](const TokenEvent& e) {
    std::fwrite(e.text.data(), 1, e.text.size(), stdout);
    std::fflush(stdout);
  });
  std::printf("\n");
  std::fflush(stdout);
  if (!st.ok()) return ReportError(st.status());
  std::fprintf(stderr, "prompt %d tokens, TTFT %.1f ms, %d tokens at %.1f tok/s\n",
               st->prompt_tokens, st->ttft_s * 1e3, st->generated,
               st->generated > 1 ? (st->generated - 1) / st->decode_s : 0.0);
  return 0;
}

int RunRun(const RunOptions& o) {
  if (o.tokens.empty() == o.prompt.empty())
    return ReportError(Status::Error("give exactly one of -p TEXT or --tokens IDS"));
  auto engine = o.engine.Resolve();
  if (!engine.ok()) return ReportError(engine.status());
  auto path = ResolveModelPath(o.model);
  if (!path.ok()) return ReportError(path.status());
  return o.tokens.empty() ? RunText(o, *path, *engine) : RunTokens(o, *path, *engine);
}

}  // namespace

CommandFn AddRunCommand(CLI::App& app) {
  auto o = std::make_shared<RunOptions>();
  CLI::App* sub = app.add_subcommand("run", "One-shot generation (greedy unless --temp)");
  sub->add_option("-m,--model", o->model,
                  "GGUF file or HF directory (default: the embedded synthetic Qwen2.5-0.5B)");
  sub->add_option("-p,--prompt", o->prompt, "prompt text (a user message of the chat template)");
  sub->add_flag("--raw", o->raw, "feed the prompt text as is, without the chat template");
  sub->add_option("--tokens", o->tokens, "prompt token ids, comma-separated (prints ids)");
  sub->add_option("-n,--n-predict", o->n_predict, "tokens to generate")
      ->check(CLI::Range(1, 1 << 20));
  AddEngineOptions(sub, &o->engine, kThreadOption | kMemoryOptions);
  sub->add_option("--temp", o->temperature, "sampling temperature (0 = greedy)");
  sub->add_option("--top-k", o->top_k, "top-k sampling (0 = off)");
  sub->add_option("--top-p", o->top_p, "nucleus sampling (1 = off)");
  sub->add_option("--min-p", o->min_p, "min-p sampling (0 = off)");
  sub->add_option("--seed", o->seed, "sampling seed (default: random)");
  return [o] { return RunRun(*o); };
}

}  // namespace brisk::cli
