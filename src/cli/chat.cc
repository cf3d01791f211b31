// `brisk chat`: interactive multi-turn chat in the terminal, streaming, with a TTFT / tokens/s
// line after each answer. The conversation's KV cache is kept between turns, so each turn only
// computes what the previous turns did not.
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/engine_options.h"
#include "cli/generate.h"
#include "model/default_model.h"
#include "model/synth.h"

namespace brisk::cli {
namespace {

struct ChatOptions {
  std::string model;
  std::string system;
  int n_predict = 512;
  EngineOptions engine;  // threads, context, KV cache
};

int RunChat(const ChatOptions& o) {
  auto engine = o.engine.Resolve();
  if (!engine.ok()) return ReportError(engine.status());
  auto path = ResolveModelPath(o.model);
  if (!path.ok()) return ReportError(path.status());
  auto gen = Generator::Create(*path, *engine);
  if (!gen.ok()) return ReportError(gen.status());
  Generator& g = **gen;
  if (IsSynthetic(g.model())) std::fprintf(stderr, "%s\n", kSyntheticNotice);
  std::fprintf(stderr, "brisk chat: %s. Type a message; /reset clears, /exit or Ctrl-D quits.\n",
               path->c_str());
  nlohmann::ordered_json messages = nlohmann::ordered_json::array();
  if (!o.system.empty()) messages.push_back({{"role", "system"}, {"content", o.system}});
  const size_t base = messages.size();
  std::string line;
  while (true) {
    std::fprintf(stderr, "> ");
    std::fflush(stderr);
    if (!std::getline(std::cin, line)) break;
    if (line == "/exit" || line == "/quit") break;
    if (line == "/reset") {
      messages.erase(messages.begin() + base, messages.end());
      continue;
    }
    if (line.empty()) continue;
    messages.push_back({{"role", "user"}, {"content", line}});
    auto text = g.RenderChat(messages);
    if (!text.ok()) return ReportError(text.status());
    std::string answer;
    SamplingParams greedy;
    greedy.temperature = 0;
    auto st =
        g.Generate(g.tokenizer().Encode(*text), o.n_predict, greedy, [&](const TokenEvent& e) {
          answer += e.text;
          std::fwrite(e.text.data(), 1, e.text.size(), stdout);
          std::fflush(stdout);
        });
    std::printf("\n");
    std::fflush(stdout);
    if (!st.ok()) {
      ReportError(st.status());
      messages.erase(messages.end() - 1);
      continue;
    }
    messages.push_back({{"role", "assistant"}, {"content", answer}});
    std::fprintf(stderr, "[prompt %d tokens (%d reused), TTFT %.0f ms, %d tokens, %.1f tok/s%s]\n",
                 st->prompt_tokens, st->cached_tokens, st->ttft_s * 1e3, st->generated,
                 st->generated > 1 ? (st->generated - 1) / st->decode_s : 0.0,
                 st->stopped ? "" : ", length limit");
  }
  return 0;
}

}  // namespace

CommandFn AddChatCommand(CLI::App& app) {
  auto o = std::make_shared<ChatOptions>();
  CLI::App* sub = app.add_subcommand("chat", "Interactive terminal chat (streaming)");
  sub->add_option("-m,--model", o->model,
                  "GGUF file or HF directory (default: the embedded synthetic Qwen2.5-0.5B)");
  sub->add_option("-s,--system", o->system, "system prompt");
  sub->add_option("-n,--n-predict", o->n_predict, "max tokens per answer")
      ->check(CLI::Range(1, 1 << 20));
  AddEngineOptions(sub, &o->engine, kThreadOption | kMemoryOptions);
  return [o] { return RunChat(*o); };
}

}  // namespace brisk::cli
