// `brisk run`: one-shot greedy generation. `-p TEXT` takes text (rendered with the model's chat
// template as one user message unless --raw) and streams text; `--tokens 1,2,3` takes ids and
// prints the generated ids.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/cli_util.h"
#include "cli/commands.h"
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
  int threads = 0;
  int context = 4096;
};

int RunTokens(const RunOptions& o, const std::string& path) {
  auto prompt = ParseTokenList(o.tokens);
  if (!prompt.ok()) return ReportError(prompt.status());
  auto model = Model::Load(path);
  if (!model.ok()) return ReportError(model.status());
  const ModelConfig& c = (*model)->config();
  if (IsSynthetic(**model)) std::fprintf(stderr, "%s\n", kSyntheticNotice);
  ThreadPool pool(o.threads);
  FastForward fwd(**model, pool, 256);
  const int capacity =
      int(std::min<int64_t>(c.context_length, int64_t(prompt->size()) + o.n_predict));
  SeqKvCache kv(c, capacity);
  const double t0 = NowSeconds();
  int32_t next = 0;
  const int32_t last = int32_t(prompt->size()) - 1;
  std::vector<float> logits(c.n_vocab);
  Status st = fwd.Run(*prompt, 0, kv.blocks(), std::span<const int32_t>(&last, 1), logits.data());
  if (!st.ok()) return ReportError(st);
  next = int32_t(std::max_element(logits.begin(), logits.end()) - logits.begin());
  const double t1 = NowSeconds();
  std::vector<int32_t> out;
  int pos = int(prompt->size());
  for (int i = 0; i < o.n_predict; ++i) {
    out.push_back(next);
    if (i + 1 == o.n_predict || pos >= capacity) break;
    const SeqRun run{kv.blocks(), pos++, 1};
    const int32_t row = 0, tok = next;
    st = fwd.RunBatchArgmax(std::span(&tok, 1), std::span(&run, 1), std::span(&row, 1), &next);
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

int RunText(const RunOptions& o, const std::string& path) {
  auto gen = Generator::Create(path, o.threads, o.context);
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
  auto st = g.Generate(ids, o.n_predict, [](const std::string& piece) {
    std::fwrite(piece.data(), 1, piece.size(), stdout);
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
  auto path = ResolveModelPath(o.model);
  if (!path.ok()) return ReportError(path.status());
  return o.tokens.empty() ? RunText(o, *path) : RunTokens(o, *path);
}

}  // namespace

CommandFn AddRunCommand(CLI::App& app) {
  auto o = std::make_shared<RunOptions>();
  CLI::App* sub = app.add_subcommand("run", "One-shot greedy generation");
  sub->add_option("-m,--model", o->model,
                  "GGUF file or HF directory (default: the embedded synthetic Qwen2.5-0.5B)");
  sub->add_option("-p,--prompt", o->prompt, "prompt text (a user message of the chat template)");
  sub->add_flag("--raw", o->raw, "feed the prompt text as is, without the chat template");
  sub->add_option("--tokens", o->tokens, "prompt token ids, comma-separated (prints ids)");
  sub->add_option("-n,--n-predict", o->n_predict, "tokens to generate")
      ->check(CLI::Range(1, 1 << 20));
  sub->add_option("-c,--context", o->context, "context size for -p (tokens)")
      ->check(CLI::Range(16, 1 << 20));
  sub->add_option("-t,--threads", o->threads, "compute threads (default: all cores)");
  return [o] { return RunRun(*o); };
}

}  // namespace brisk::cli
