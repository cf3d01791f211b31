// `brisk bench http`: closed-loop load on an OpenAI-compatible server over HTTP
// (bench/http_bench.h); the same tables as `brisk bench engine`.
#include <cstdio>
#include <memory>
#include <string>

#include "bench/http_bench.h"
#include "cli/cli_util.h"
#include "cli/commands.h"

namespace brisk::cli {
namespace {

struct BenchHttpCliOptions {
  std::string concurrency = "1,16";
  std::string endpoint = "chat";
  bool json = false;
  HttpBenchOptions bench;
};

int RunBenchHttp(BenchHttpCliOptions& o) {
  auto levels = ParseTokenList(o.concurrency);
  if (!levels.ok() || levels->empty())
    return ReportError(Status::Error("--concurrency must be a list like 1,4,16"));
  o.bench.concurrency.assign(levels->begin(), levels->end());
  if (o.endpoint != "chat" && o.endpoint != "completions")
    return ReportError(Status::Error("--endpoint must be chat or completions"));
  o.bench.completions = o.endpoint == "completions";
  o.bench.progress = true;
  auto rep = RunHttpBench(o.bench);
  if (!rep.ok()) return ReportError(rep.status());
  std::printf("%s\n", o.json ? rep->ToJson().c_str() : rep->ToTable().c_str());
  return 0;
}

}  // namespace

CommandFn AddBenchHttpSubcommand(CLI::App& bench) {
  auto o = std::make_shared<BenchHttpCliOptions>();
  HttpBenchOptions& b = o->bench;
  CLI::App* cmd = bench.add_subcommand(
      "http",
      "closed-loop load on an OpenAI-compatible server (brisk serve, llama-server, vLLM): "
      "TTFT / TPOT / ITL / E2E, throughput");
  cmd->add_option("--url", b.url, "server base URL, e.g. http://127.0.0.1:8080")->required();
  cmd->add_option("--endpoint", o->endpoint,
                  "chat (/v1/chat/completions) or completions (/v1/completions)")
      ->capture_default_str();
  cmd->add_option("--concurrency", o->concurrency,
                  "clients in flight, one run per value (comma-separated)")
      ->capture_default_str();
  auto* num = cmd->add_option("--num-prompts", b.num_prompts,
                              "measured requests per concurrency (default: 4 x concurrency, at "
                              "least 8)")
                  ->check(CLI::Range(1, 10000000));
  cmd->add_option("--duration", b.duration_s,
                  "instead of --num-prompts: keep the clients busy this many seconds per level")
      ->check(CLI::PositiveNumber)
      ->excludes(num);
  cmd->add_option("--output-len", b.output_len, "max_tokens of every request (ignore_eos)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--prompt-len", b.prompt_len,
                  "pad each user message to about this many words (default: short messages)")
      ->check(CLI::Range(0, 1 << 20));
  cmd->add_option("--warmup", b.warmup, "unmeasured requests first")
      ->capture_default_str()
      ->check(CLI::Range(0, 1000));
  cmd->add_option("--timeout", b.request_timeout_s,
                  "seconds from sending a request to the end of its stream before it fails")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--connect-timeout", b.connect_timeout_s, "seconds to open a connection")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--model", b.model, "model field of the requests (default: GET /v1/models)");
  cmd->add_option("--api-key", b.api_key, "sent as Authorization: Bearer KEY");
  cmd->add_option("--server-pid", b.server_pid,
                  "sample this process's RSS every second (after warm-up, at the end, max)")
      ->check(CLI::Range(1, 1 << 30));
  cmd->add_flag("--metrics", b.metrics,
                "diff the server's GET /metrics around every level and check it against what "
                "the clients received");
  cmd->add_flag("--json", o->json, "print JSON instead of a table");
  return [o] { return RunBenchHttp(*o); };
}

}  // namespace brisk::cli
