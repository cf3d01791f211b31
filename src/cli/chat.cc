// `brisk chat`: interactive multi-turn chat in the terminal, streaming, with a TTFT / tokens/s
// line after each answer. The conversation's KV cache is kept between turns, so each turn only
// computes what the previous turns did not. Ctrl-C stops an answer and keeps the conversation;
// at the prompt, two in a row (or Ctrl-D, or /exit) quit with exit code 0.
#include <pthread.h>
#include <signal.h>

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/engine_options.h"
#include "cli/generate.h"
#include "cli/interrupts.h"
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

// The prompt. Ctrl-C here prints a hint the first time and quits the second time in a row (as
// llama-cli does); Ctrl-D quits at once. False: quit.
bool ReadUserLine(std::string* line) {
  bool warned = false;
  while (true) {
    std::fprintf(stderr, "> ");
    std::fflush(stderr);
    switch (Interrupts::ReadLine(line)) {
      case Interrupts::Input::kLine:
        return true;
      case Interrupts::Input::kEof:
        std::fprintf(stderr, "\n");
        return false;
      case Interrupts::Input::kInterrupt:
        std::fprintf(stderr, "\n");
        if (warned) return false;
        std::fprintf(stderr, "(Ctrl-C again, Ctrl-D or /exit to quit)\n");
        warned = true;
    }
  }
}

// One answer, streamed. Ctrl-C stops it; what was shown stays in the conversation unmarked, as
// llama-cli keeps it, so the next turn sees (and the prefix cache reuses) exactly what was shown.
void Answer(Generator& g, nlohmann::ordered_json& messages, int n_predict) {
  auto text = g.RenderChat(messages);
  if (!text.ok()) {
    ReportError(text.status());
    messages.erase(messages.end() - 1);
    return;
  }
  std::string answer;
  SamplingParams greedy;
  greedy.temperature = 0;
  Interrupts::Take();  // a Ctrl-C typed before the answer began is not meant for it
  auto st = g.Generate(
      g.tokenizer().Encode(*text), n_predict, greedy,
      [&](const TokenEvent& e) {
        answer += e.text;
        std::fwrite(e.text.data(), 1, e.text.size(), stdout);
        std::fflush(stdout);
      },
      &Interrupts::Take);
  std::printf("\n");
  std::fflush(stdout);
  if (!st.ok()) {
    ReportError(st.status());
    messages.erase(messages.end() - 1);
    return;
  }
  messages.push_back({{"role", "assistant"}, {"content", answer}});
  std::fprintf(stderr, "[prompt %d tokens (%d reused), TTFT %.0f ms, %d tokens, %.1f tok/s%s]\n",
               st->prompt_tokens, st->cached_tokens, st->ttft_s * 1e3, st->generated,
               st->generated > 1 ? (st->generated - 1) / st->decode_s : 0.0,
               st->cancelled ? ", interrupted"
               : st->stopped ? ""
                             : ", length limit");
}

int RunChat(const ChatOptions& o) {
  auto engine = o.engine.Resolve();
  if (!engine.ok()) return ReportError(engine.status());
  auto path = ResolveModelPath(o.model);
  if (!path.ok()) return ReportError(path.status());
  // The engine's threads start with SIGINT blocked, so the handler runs on this thread only and
  // never interrupts a compute thread's system calls.
  sigset_t sigint;
  sigemptyset(&sigint);
  sigaddset(&sigint, SIGINT);
  pthread_sigmask(SIG_BLOCK, &sigint, nullptr);
  auto gen = Generator::Create(*path, *engine);
  // A Ctrl-C while the model loaded means what it did before there was a conversation: quit.
  sigset_t pending;
  if (sigpending(&pending) == 0 && sigismember(&pending, SIGINT)) return 130;
  Interrupts::Install();
  pthread_sigmask(SIG_UNBLOCK, &sigint, nullptr);
  if (!gen.ok()) return ReportError(gen.status());
  Generator& g = **gen;
  if (IsSynthetic(g.model())) std::fprintf(stderr, "%s\n", kSyntheticNotice);
  std::fprintf(stderr,
               "brisk chat: %s. Type a message; Ctrl-C stops an answer, /reset clears, /exit, "
               "Ctrl-D or Ctrl-C twice quits.\n",
               path->c_str());
  nlohmann::ordered_json messages = nlohmann::ordered_json::array();
  if (!o.system.empty()) messages.push_back({{"role", "system"}, {"content", o.system}});
  const size_t base = messages.size();
  std::string line;
  while (ReadUserLine(&line)) {
    if (line == "/exit" || line == "/quit") break;
    if (line == "/reset") {
      messages.erase(messages.begin() + base, messages.end());
      continue;
    }
    if (line.empty()) continue;
    messages.push_back({{"role", "user"}, {"content", line}});
    Answer(g, messages, o.n_predict);
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
