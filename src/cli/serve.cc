// `brisk serve`: the OpenAI-compatible HTTP server (DESIGN §6). Starts listening at once (GET
// /health answers 503 "loading" meanwhile), loads the model, then serves until SIGTERM/SIGINT,
// which drain: new generation requests get 503, running ones finish, then the process exits 0
// (a second signal exits at once). SIGHUP / SIGUSR1 reload the batch settings from --config.
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "engine/engine.h"
#include "model/default_model.h"
#include "model/model_tokenizer.h"
#include "model/synth.h"
#include "server/api_error.h"
#include "server/api_server.h"
#include "server/batch_config.h"
#include "server/http_server.h"

namespace brisk::cli {
namespace {

struct ServeOptions {
  std::string model;
  std::string host = "127.0.0.1";
  int port = 8080;
  int threads = 0;
  int http_threads = 2;
  std::string served_model_name;
  std::string api_key, api_key_file;
  std::string config;
  std::string request_log;
  std::string bench_dir;  // "" = BriskHome()/bench, where `brisk bench` writes by default
  int max_num_seqs = 16;
  int max_num_batched_tokens = 512;
  int max_prefill_chunk = 0;
  int max_model_len = 0;
  int kv_cache_mib = 0;
  std::string kv_type = "f16";
  std::string batch_policy = "static";
  double tpot_target_ms = 50;
  int max_waiting = 256;
  int default_max_tokens = 256;
  int stream_interval = 1;
  bool no_prefix_caching = false;
  double max_body_mib = 8;
  double header_timeout_s = 10, body_timeout_s = 30, write_timeout_s = 30;
  std::string log_level = "info";
  CLI::App* cmd = nullptr;
};

Result<std::string> ReadApiKey(const ServeOptions& o) {
  if (o.api_key_file.empty()) return o.api_key;
  std::ifstream f(o.api_key_file);
  if (!f) return Status::Error(o.api_key_file + ": cannot open the API key file");
  std::string key;
  std::getline(f, key);
  while (!key.empty() && (key.back() == '\r' || key.back() == ' ')) key.pop_back();
  if (key.empty()) return Status::Error(o.api_key_file + ": the first line (the key) is empty");
  return key;
}

// --config values for the options not given explicitly on the command line.
Status ApplyConfigDefaults(ServeOptions& o) {
  if (o.config.empty()) return Status::Ok();
  BRISK_ASSIGN_OR_RETURN(server::BatchSettings s, server::LoadBatchSettings(o.config));
  auto unset = [&](const char* flag) { return o.cmd->count(flag) == 0; };
  if (s.batch_policy && unset("--batch-policy")) o.batch_policy = BatchPolicyName(*s.batch_policy);
  if (s.max_num_seqs && unset("--max-num-seqs")) o.max_num_seqs = *s.max_num_seqs;
  if (s.max_num_batched_tokens && unset("--max-num-batched-tokens"))
    o.max_num_batched_tokens = *s.max_num_batched_tokens;
  if (s.max_prefill_chunk && unset("--max-prefill-chunk"))
    o.max_prefill_chunk = *s.max_prefill_chunk;
  if (s.tpot_target_ms && unset("--tpot-target")) o.tpot_target_ms = *s.tpot_target_ms;
  return Status::Ok();
}

// SIGHUP: the config file's batch settings, applied to the running engine (clamped to the
// limits it was started with; running requests are never dropped).
void ReloadBatchSettings(const ServeOptions& o, Engine& engine) {
  if (o.config.empty()) {
    std::fprintf(stderr, "brisk serve: reload requested, but no --config file was given\n");
    return;
  }
  auto s = server::LoadBatchSettings(o.config);
  if (!s.ok()) {
    std::fprintf(stderr, "brisk serve: reload failed, settings unchanged: %s\n",
                 s.message().c_str());
    return;
  }
  const EngineStats now = engine.Stats();
  const BatchPolicy policy = s->batch_policy.value_or(now.policy);
  const int seqs =
      std::min(s->max_num_seqs.value_or(now.max_num_seqs), engine.config().max_num_seqs);
  const int tokens = std::min(s->max_num_batched_tokens.value_or(now.max_num_batched_tokens),
                              engine.config().max_num_batched_tokens);
  const double tpot = s->tpot_target_ms.value_or(now.tpot_target_ms);
  engine.SetBatchPolicy(policy, seqs, tokens, tpot);
  std::fprintf(stderr,
               "brisk serve: reloaded %s: policy %s, max_num_seqs %d, max_num_batched_tokens %d, "
               "tpot target %.1f ms\n",
               o.config.c_str(), BatchPolicyName(policy), seqs, tokens, tpot);
}

int RunServe(ServeOptions& o) {
  // Signals are taken by one thread with sigwait; every other thread inherits the blocked mask.
  sigset_t signals;
  sigemptyset(&signals);
  for (int s : {SIGTERM, SIGINT, SIGHUP, SIGUSR1}) sigaddset(&signals, s);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);  // a vanished client must be an error code, not process death

  if (Status st = ApplyConfigDefaults(o); !st.ok()) return ReportError(st);
  auto key = ReadApiKey(o);
  if (!key.ok()) return ReportError(key.status());
  auto policy = ParseBatchPolicy(o.batch_policy);
  if (!policy.ok()) return ReportError(policy.status());
  auto kv_type = ParseKvType(o.kv_type);
  if (!kv_type.ok()) return ReportError(kv_type.status());
  auto path = ResolveModelPath(o.model);
  if (!path.ok()) return ReportError(path.status());

  server::ServerOptions so;
  so.model_id = o.served_model_name;
  if (so.model_id.empty()) {
    so.model_id = *path;
    const size_t slash = so.model_id.find_last_of('/');
    if (slash != std::string::npos) so.model_id = so.model_id.substr(slash + 1);
    if (so.model_id.size() > 5 && so.model_id.ends_with(".gguf"))
      so.model_id.resize(so.model_id.size() - 5);
  }
  so.api_key = *key;
  so.default_max_tokens = o.default_max_tokens;
  so.stream_interval = o.stream_interval;
  so.bench_dir = o.bench_dir.empty() ? BriskHome() + "/bench" : o.bench_dir;

  server::ServerMetrics metrics;
  std::unique_ptr<server::RequestLog> request_log;
  if (!o.request_log.empty()) {
    auto log = server::RequestLog::Open(o.request_log);
    if (!log.ok()) return ReportError(log.status());
    request_log = std::move(log).value();
  }
  so.log_requests = o.log_level == "debug";
  server::ApiServer api(so, &metrics, request_log.get());

  server::HttpLimits limits;
  limits.max_body_bytes = size_t(o.max_body_mib * (1 << 20));
  limits.header_timeout_s = o.header_timeout_s;
  limits.body_timeout_s = o.body_timeout_s;
  limits.write_timeout_s = o.write_timeout_s;
  auto http = server::HttpServer::Start(
      o.host, o.port, o.http_threads, limits,
      [&api](server::HttpRequest&& r, std::shared_ptr<server::HttpExchange> ex) {
        api.Handle(std::move(r), std::move(ex));
      },
      server::TransportErrorResponse);
  if (!http.ok()) return ReportError(http.status());
  std::printf("listening on http://%s:%d\n", o.host.c_str(), (*http)->port());
  std::fflush(stdout);

  // Signal thread: the first SIGTERM/SIGINT drains, a second one ends at once; SIGHUP reloads.
  std::atomic<int> stop_requests{0};
  std::atomic<bool> quit_signal_thread{false}, signal_thread_done{false};
  std::atomic<Engine*> engine_for_reload{nullptr};
  std::thread signal_thread([&] {
    for (;;) {
      int sig = 0;
      if (sigwait(&signals, &sig) != 0) continue;
      if (quit_signal_thread.load()) break;
      if (sig == SIGHUP || sig == SIGUSR1) {
        if (Engine* e = engine_for_reload.load()) ReloadBatchSettings(o, *e);
        continue;
      }
      api.BeginDrain();
      if (stop_requests.fetch_add(1) + 1 >= 2) break;
      std::fprintf(stderr, "brisk serve: draining (%d requests in flight)\n", api.in_flight());
    }
    signal_thread_done.store(true);
  });
  auto finish = [&](int code) {
    quit_signal_thread.store(true);
    if (!signal_thread_done.load()) pthread_kill(signal_thread.native_handle(), SIGTERM);
    signal_thread.join();
    (*http)->Stop();
    return code;
  };

  const double t0 = NowSeconds();
  auto model = Model::Load(*path);
  if (!model.ok()) return finish(ReportError(model.status()));
  auto tokenizer = TokenizerForModel(**model);
  if (!tokenizer.ok()) return finish(ReportError(tokenizer.status()));
  std::unique_ptr<jinja::ChatTemplate> tmpl;
  if (!(*model)->chat_template().empty()) {
    auto t = jinja::ChatTemplate::Parse((*model)->chat_template());
    if (!t.ok()) return finish(ReportError(t.status().WithContext("chat template")));
    tmpl = std::make_unique<jinja::ChatTemplate>(std::move(t).value());
  }
  EngineConfig ec;
  ec.threads = o.threads;
  ec.max_num_seqs = o.max_num_seqs;
  ec.max_num_batched_tokens = o.max_num_batched_tokens;
  ec.max_prefill_chunk = o.max_prefill_chunk;
  ec.max_model_len = o.max_model_len;
  ec.kv_cache_bytes = size_t(o.kv_cache_mib) << 20;
  ec.kv_type = *kv_type;
  ec.prefix_caching = !o.no_prefix_caching;
  ec.max_waiting = o.max_waiting;
  ec.batch_policy = *policy;
  ec.tpot_target_ms = o.tpot_target_ms;
  auto engine = Engine::Create(**model, &*tokenizer, ec);
  if (!engine.ok()) return finish(ReportError(engine.status()));
  const bool synthetic = IsSynthetic(**model);
  if (synthetic) std::fprintf(stderr, "%s\n", kSyntheticNotice);

  server::LoadedModel lm;
  lm.engine = engine->get();
  lm.tokenizer = &*tokenizer;
  lm.chat_template = tmpl.get();
  lm.synthetic = synthetic;
  lm.created = int64_t(std::time(nullptr));
  api.SetLoaded(lm);
  engine_for_reload.store(engine->get());
  const EngineStats s = (*engine)->Stats();
  std::fprintf(stderr,
               "brisk serve: model %s loaded in %.2f s; max_model_len %d, %d KV blocks, "
               "max_num_seqs %d, policy %s%s\n",
               so.model_id.c_str(), NowSeconds() - t0, (*engine)->config().max_model_len,
               s.kv_blocks_total, s.max_num_seqs, BatchPolicyName(s.policy),
               so.api_key.empty() ? "" : ", API key required");
  std::printf("ready\n");
  std::fflush(stdout);

  // Wait for the drain to finish (or a second signal).
  while (stop_requests.load() == 0 || (stop_requests.load() == 1 && api.in_flight() > 0))
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  std::fprintf(stderr, "brisk serve: %s\n",
               stop_requests.load() == 1 ? "drained, exiting" : "stopping now");
  engine_for_reload.store(nullptr);
  const int code = finish(0);
  engine->reset();  // cancels anything left (second signal)
  return code;
}

}  // namespace

CommandFn AddServeCommand(CLI::App& app) {
  auto o = std::make_shared<ServeOptions>();
  CLI::App* cmd = app.add_subcommand("serve", "OpenAI-compatible HTTP server with a web chat UI");
  o->cmd = cmd;
  cmd->add_option("-m,--model", o->model,
                  "GGUF file or HF directory (default: the embedded synthetic Qwen2.5-0.5B)");
  cmd->add_option("--host", o->host, "address to bind (default 127.0.0.1: this machine only)")
      ->capture_default_str();
  cmd->add_option("--port", o->port, "TCP port (0: any free port)")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  cmd->add_option("-t,--threads", o->threads, "compute threads (default: all cores)")
      ->check(CLI::Range(0, 1024));
  cmd->add_option("--http-threads", o->http_threads, "HTTP I/O threads")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmd->add_option("--served-model-name", o->served_model_name,
                  "the model name clients use (default: the file name)");
  cmd->add_option("--api-key", o->api_key, "require Authorization: Bearer KEY");
  cmd->add_option("--api-key-file", o->api_key_file, "read the API key from the file's first line");
  cmd->add_option("--config", o->config,
                  "batch settings file (JSON, from `brisk tune`); reloaded on SIGHUP/SIGUSR1");
  cmd->add_option("--request-log", o->request_log, "append one JSON line per finished request");
  cmd->add_option("--bench-dir", o->bench_dir,
                  "`brisk bench` output folder whose latest/ report GET /bench shows "
                  "(default: $BRISK_HOME/bench, i.e. ~/.cache/brisk/bench)");
  cmd->add_option("--max-num-seqs", o->max_num_seqs, "sequences per engine step (upper limit)")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  cmd->add_option("--max-num-batched-tokens", o->max_num_batched_tokens, "tokens per engine step")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  cmd->add_option("--max-prefill-chunk", o->max_prefill_chunk,
                  "tokens of one prompt per step (0: the whole step budget)")
      ->check(CLI::Range(0, 1 << 20));
  cmd->add_option("--max-model-len", o->max_model_len,
                  "prompt + output tokens (0: min(model context, 8192))")
      ->check(CLI::Range(0, 1 << 24));
  cmd->add_option("--kv-cache-mem", o->kv_cache_mib, "KV cache budget in MiB (0: automatic)")
      ->check(CLI::Range(0, 1 << 20));
  cmd->add_option("--kv-type", o->kv_type, "KV cache element type: f16 or f32")
      ->capture_default_str();
  cmd->add_option("--batch-policy", o->batch_policy, "static, loadavg or slo")
      ->capture_default_str();
  cmd->add_option("--tpot-target", o->tpot_target_ms, "slo policy: TPOT target in ms")
      ->capture_default_str();
  cmd->add_option("--max-waiting", o->max_waiting, "queued requests before 429")
      ->check(CLI::Range(0, 1 << 20))
      ->capture_default_str();
  cmd->add_option("--default-max-tokens", o->default_max_tokens,
                  "max_tokens when a request gives none")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  cmd->add_option("--stream-interval", o->stream_interval,
                  "tokens coalesced into one SSE event at most (1: every token)")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  cmd->add_flag("--no-prefix-caching", o->no_prefix_caching, "disable the prefix cache");
  cmd->add_option("--max-body-mib", o->max_body_mib, "largest request body (MiB)")
      ->check(CLI::Range(0.001, 1024.0))
      ->capture_default_str();
  cmd->add_option("--header-timeout", o->header_timeout_s, "seconds for a request's headers")
      ->check(CLI::Range(0.05, 3600.0));
  cmd->add_option("--body-timeout", o->body_timeout_s, "seconds for a request's body")
      ->check(CLI::Range(0.05, 3600.0));
  cmd->add_option("--write-timeout", o->write_timeout_s,
                  "seconds a response write may stall before the client is dropped")
      ->check(CLI::Range(0.05, 3600.0));
  cmd->add_option("--log-level", o->log_level, "info, or debug: one line per request on stderr")
      ->check(CLI::IsMember({"info", "debug"}));
  return [o] { return RunServe(*o); };
}

}  // namespace brisk::cli
