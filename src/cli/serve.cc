// `brisk serve`: the OpenAI-compatible HTTP server (DESIGN §6). Starts listening at once (GET
// /health answers 503 "loading" meanwhile), loads the model, then serves until SIGTERM/SIGINT,
// which drain: new generation requests get 503, running ones finish, then the process exits 0
// (a second signal exits at once). SIGHUP / SIGUSR1 reload the batch settings from --config.
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/engine_options.h"
#include "engine/engine.h"
#include "kvevents/kv_event_publisher.h"
#include "model/default_model.h"
#include "model/embedding.h"
#include "model/model_tokenizer.h"
#include "model/synth.h"
#include "runtime/cgroup_limits.h"
#include "server/api_error.h"
#include "server/api_server.h"
#include "server/batch_config.h"
#include "server/http_server.h"
#include "server/output_constraints.h"
#include "server/response_store.h"
#include "tokenizer/jinja/chat_template.h"

namespace brisk::cli {
namespace {

struct ServeOptions {
  std::string model;
  std::string host = "127.0.0.1";
  int port = 8080;
  int http_threads = 2;
  std::string served_model_name;
  std::string api_key, api_key_file;
  std::string config;
  std::string request_log;
  std::string bench_dir;        // "" = BriskHome()/bench, where `brisk bench` writes by default
  std::string allowed_origins;  // "" = no CORS
  std::string pooling;          // --pooling: "" = the model file's
  EngineOptions engine;
  int default_max_tokens = 0;  // 0: the rest of the context
  int stream_interval = 1;
  // The Responses API's store: its defaults are ResponseStoreLimits' (one source).
  server::ResponseStoreLimits responses;
  double responses_max_mib = double(server::ResponseStoreLimits{}.max_bytes) / (1 << 20);
  double max_body_mib = 8;
  double header_timeout_s = 10, body_timeout_s = 30, write_timeout_s = 30;
  // Connection limits: their defaults are HttpLimits' (one source).
  int max_connections = server::HttpLimits{}.max_connections;
  int max_connections_per_client = server::HttpLimits{}.max_connections_per_client;
  std::string log_level = "info";
  // KV-cache events (issue 31, docs/kv-events.md): "" = off.
  std::string kv_events, kv_events_replay, kv_events_topic;
  CLI::App* cmd = nullptr;
};

// Step batches the engine may run ahead of the publisher thread before it drops some.
constexpr int kKvEventQueueBatches = 10000;

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
  EngineConfig& c = o.engine.config;
  if (s.batch_policy && unset("--batch-policy"))
    o.engine.batch_policy = BatchPolicyName(*s.batch_policy);
  if (s.max_num_seqs && unset("--max-num-seqs")) c.max_num_seqs = *s.max_num_seqs;
  if (s.max_num_batched_tokens && unset("--max-num-batched-tokens"))
    c.max_num_batched_tokens = *s.max_num_batched_tokens;
  if (s.max_prefill_chunk && unset("--max-prefill-chunk"))
    c.max_prefill_chunk = *s.max_prefill_chunk;
  if (s.tpot_target_ms && unset("--tpot-target")) c.tpot_target_ms = *s.tpot_target_ms;
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
  const BatchSettings now = engine.UpdateBatchSettings([&](BatchSettings& b) {
    if (s->batch_policy) b.policy = *s->batch_policy;
    if (s->max_num_seqs) b.max_num_seqs = *s->max_num_seqs;
    if (s->max_num_batched_tokens) b.max_num_batched_tokens = *s->max_num_batched_tokens;
    if (s->tpot_target_ms) b.tpot_target_ms = *s->tpot_target_ms;
  });
  std::fprintf(stderr,
               "brisk serve: reloaded %s: policy %s, max_num_seqs %d, max_num_batched_tokens %d, "
               "tpot target %.1f ms\n",
               o.config.c_str(), BatchPolicyName(now.policy), now.max_num_seqs,
               now.max_num_batched_tokens, now.tpot_target_ms);
}

// CLI::Range of a ParamRange (the limits' own ranges, response_store.h).
CLI::Range RangeOf(const ParamRange& r) { return CLI::Range(r.lo, r.hi); }

void AddResponseStoreOptions(CLI::App* cmd, ServeOptions* o) {
  cmd->add_option("--responses-max", o->responses.max_responses,
                  "Responses API: most responses kept for previous_response_id and GET "
                  "/v1/responses/{id} (least recently used go first; 0: keep none)")
      ->check(RangeOf(server::kResponsesMaxRange))
      ->capture_default_str();
  cmd->add_option("--responses-max-mib", o->responses_max_mib,
                  "Responses API: memory for kept responses and their conversations (MiB)")
      ->check(RangeOf(server::kResponsesMaxMibRange))
      ->capture_default_str();
  cmd->add_option("--responses-ttl", o->responses.ttl_s,
                  "Responses API: seconds a kept response lives after it was created")
      ->check(RangeOf(server::kResponsesTtlRange))
      ->capture_default_str();
}

// What `serve` needs before it binds a port: every flag checked (the engine's limits included),
// nothing loaded yet.
struct ServePlan {
  std::string model_path;
  std::optional<Pooling> pooling;  // --pooling, over the file's
  EngineConfig engine;
  server::ServerOptions server;
};

std::string ModelIdFromPath(std::string id) {
  const size_t slash = id.find_last_of('/');
  if (slash != std::string::npos) id = id.substr(slash + 1);
  if (id.size() > 5 && id.ends_with(".gguf")) id.resize(id.size() - 5);
  return id;
}

Result<ServePlan> PlanServe(ServeOptions& o) {
  BRISK_RETURN_IF_ERROR(ApplyConfigDefaults(o));
  ServePlan p;
  BRISK_ASSIGN_OR_RETURN(p.engine, o.engine.Resolve());
  BRISK_ASSIGN_OR_RETURN(p.server.api_key, ReadApiKey(o));
  BRISK_ASSIGN_OR_RETURN(p.server.cors, server::ParseAllowedOrigins(o.allowed_origins));
  if (!o.pooling.empty()) {
    BRISK_ASSIGN_OR_RETURN(p.pooling, ParsePooling(o.pooling));
  }
  BRISK_ASSIGN_OR_RETURN(p.model_path, ResolveModelPath(o.model));
  p.server.model_id =
      o.served_model_name.empty() ? ModelIdFromPath(p.model_path) : o.served_model_name;
  p.server.default_max_tokens = o.default_max_tokens;
  p.server.stream_interval = o.stream_interval;
  p.server.responses = o.responses;
  p.server.responses.max_bytes = size_t(o.responses_max_mib * (1 << 20));
  p.server.bench_dir = o.bench_dir.empty() ? BriskHome() + "/bench" : o.bench_dir;
  p.server.log_requests = o.log_level == "debug";
  if (!o.kv_events_replay.empty() && o.kv_events.empty())
    return Status::InvalidArgument("--kv-events-replay needs --kv-events", "--kv-events-replay");
  if (!o.kv_events.empty()) {
    BRISK_RETURN_IF_ERROR(ValidateKvEventsEndpoint(o.kv_events, "--kv-events"));
    if (!o.kv_events_replay.empty())
      BRISK_RETURN_IF_ERROR(ValidateKvEventsEndpoint(o.kv_events_replay, "--kv-events-replay"));
    p.engine.kv_event_queue = kKvEventQueueBatches;
  }
  return p;
}

// The KV-event sockets, bound before the model loads so a busy port fails the start at once.
Result<std::unique_ptr<KvEventPublisher>> OpenKvEvents(const ServeOptions& o, const ServePlan& p) {
  if (o.kv_events.empty()) return std::unique_ptr<KvEventPublisher>();
  KvEventPublisherOptions k;
  k.endpoint = o.kv_events;
  k.replay_endpoint = o.kv_events_replay;
  k.topic = o.kv_events_topic;
  k.encoding.block_size = p.engine.kv_block_size;
  k.encoding.medium = "CPU";  // brisk's KV cache lives in host memory
  BRISK_ASSIGN_OR_RETURN(std::unique_ptr<KvEventPublisher> pub, KvEventPublisher::Open(k));
  std::fprintf(stderr, "brisk serve: KV events on %s%s%s\n", pub->endpoint().c_str(),
               pub->replay_endpoint().empty() ? "" : ", replay on ",
               pub->replay_endpoint().c_str());
  return pub;
}

Result<std::unique_ptr<server::HttpServer>> StartHttp(const ServeOptions& o,
                                                      server::ApiServer& api) {
  server::HttpLimits limits;
  limits.max_body_bytes = size_t(o.max_body_mib * (1 << 20));
  limits.header_timeout_s = o.header_timeout_s;
  limits.body_timeout_s = o.body_timeout_s;
  limits.write_timeout_s = o.write_timeout_s;
  limits.max_connections = o.max_connections;
  limits.max_connections_per_client = o.max_connections_per_client;
  return server::HttpServer::Start(
      o.host, o.port, o.http_threads, limits,
      [&api](server::HttpRequest&& r, std::shared_ptr<server::HttpExchange> ex) {
        api.Handle(std::move(r), std::move(ex));
      },
      server::TransportErrorResponse);
}

// Takes SIGTERM/SIGINT/SIGHUP/SIGUSR1 with sigwait on its own thread (every other thread keeps
// them blocked): the first SIGTERM/SIGINT drains, a second one ends at once; SIGHUP/SIGUSR1
// reload the batch settings.
class SignalThread {
 public:
  // Blocks the signals for the calling thread and every thread it starts from now on.
  static sigset_t BlockSignals() {
    sigset_t signals;
    sigemptyset(&signals);
    for (int s : {SIGTERM, SIGINT, SIGHUP, SIGUSR1}) sigaddset(&signals, s);
    pthread_sigmask(SIG_BLOCK, &signals, nullptr);
    signal(SIGPIPE, SIG_IGN);  // a vanished client must be an error code, not process death
    return signals;
  }

  SignalThread(sigset_t signals, const ServeOptions& o, server::ApiServer& api)
      : signals_(signals), o_(o), api_(api), thread_([this] { Run(); }) {}
  ~SignalThread() {
    quit_.store(true);
    if (!done_.load()) pthread_kill(thread_.native_handle(), SIGTERM);
    thread_.join();
  }

  int stop_requests() const { return stop_requests_.load(); }
  void set_engine(Engine* e) { engine_.store(e); }

 private:
  void Run() {
    for (;;) {
      int sig = 0;
      if (sigwait(&signals_, &sig) != 0) continue;
      if (quit_.load()) break;
      if (sig == SIGHUP || sig == SIGUSR1) {
        if (Engine* e = engine_.load()) ReloadBatchSettings(o_, *e);
        continue;
      }
      const int n = stop_requests_.fetch_add(1) + 1;
      api_.BeginDrain();
      if (n >= 2) {
        api_.WakeDrainWaiters();
        break;
      }
      std::fprintf(stderr, "brisk serve: draining (%d requests in flight)\n", api_.in_flight());
    }
    done_.store(true);
  }

  sigset_t signals_;
  const ServeOptions& o_;
  server::ApiServer& api_;
  std::atomic<int> stop_requests_{0};
  std::atomic<bool> quit_{false}, done_{false};
  std::atomic<Engine*> engine_{nullptr};
  std::thread thread_;
};

// The model, its tokenizer and chat template, and the engine over them.
struct LoadedEngine {
  std::unique_ptr<Model> model;
  std::unique_ptr<Tokenizer> tokenizer;
  std::unique_ptr<jinja::ChatTemplate> chat_template;
  std::unique_ptr<Engine> engine;
  std::unique_ptr<server::OutputConstraints> constraints;
  Pooling pooling = Pooling::kNone;    // what the server does with the model
  std::unique_ptr<RerankHead> rerank;  // pooling rank
};

// Under a memory limit the packed weights alone take about the file's size: a model that cannot
// fit is refused before loading it, instead of the kernel killing the process while it packs.
Status CheckModelFitsMemory(const std::string& path, size_t limit) {
  if (limit == 0) return Status::Ok();
  std::error_code ec;
  uintmax_t bytes = 0;
  if (std::filesystem::is_directory(path, ec)) {
    for (const auto& e : std::filesystem::directory_iterator(path, ec))
      if (e.path().extension() == ".safetensors") bytes += e.file_size(ec);
  } else {
    bytes = std::filesystem::file_size(path, ec);
  }
  if (ec) return Status::Ok();  // Model::Load reports unreadable paths
  const size_t need = size_t(bytes) + MemoryHeadroom(limit);
  if (need <= limit) return Status::Ok();
  return Status::ResourceExhausted(
      "memory limit " + FormatBytes(int64_t(limit)) + " is below what the model needs resident: " +
      FormatBytes(int64_t(bytes)) + " of weights + " + FormatBytes(int64_t(MemoryHeadroom(limit))) +
      " headroom, before any KV cache; raise the limit or use a smaller file");
}

// The pooling served: --pooling, else the file's. Mean and cls pooling (read from a file) are
// refused before the server opens; rank needs the yes/no head.
Status ResolvePooling(const ServePlan& p, LoadedEngine& l) {
  l.pooling = p.pooling.value_or(l.model->config().pooling);
  if (l.pooling == Pooling::kMean || l.pooling == Pooling::kCls)
    return Status::Unimplemented(std::string("the model declares ") + PoolingName(l.pooling) +
                                 " pooling, which brisk does not implement (it pools the last "
                                 "token); --pooling none serves it as a generative model");
  if (l.pooling == Pooling::kRank) {
    BRISK_ASSIGN_OR_RETURN(RerankHead head, RerankHead::Create(*l.model, *l.tokenizer));
    l.rerank = std::make_unique<RerankHead>(std::move(head));
  }
  return Status::Ok();
}

Result<LoadedEngine> LoadEngine(const ServePlan& p) {
  LoadedEngine l;
  BRISK_RETURN_IF_ERROR(CheckModelFitsMemory(p.model_path, p.engine.memory_limit_bytes));
  BRISK_ASSIGN_OR_RETURN(l.model, Model::Load(p.model_path));
  BRISK_ASSIGN_OR_RETURN(Tokenizer tokenizer, TokenizerForModel(*l.model));
  l.tokenizer = std::make_unique<Tokenizer>(std::move(tokenizer));
  BRISK_RETURN_IF_ERROR(ResolvePooling(p, l));
  if (!l.model->chat_template().empty()) {
    auto t = jinja::ChatTemplate::Parse(l.model->chat_template());
    if (!t.ok()) return t.status().WithContext("chat template");
    l.chat_template = std::make_unique<jinja::ChatTemplate>(std::move(t).value());
  }
  BRISK_ASSIGN_OR_RETURN(l.engine, Engine::Create(*l.model, l.tokenizer.get(), p.engine));
  l.constraints = std::make_unique<server::OutputConstraints>(*l.tokenizer);
  return l;
}

// The model loads on a thread of its own so that SIGTERM/SIGINT are obeyed during the load too: a
// read that never returns (a hung network mount) cannot be interrupted, only left behind.
class BackgroundLoad {
 public:
  explicit BackgroundLoad(ServePlan plan) : state_(std::make_shared<State>()) {
    std::thread([state = state_, plan = std::move(plan)] {
      Result<LoadedEngine> r = LoadEngine(plan);
      std::lock_guard<std::mutex> lock(state->mu);
      state->result.emplace(std::move(r));
      state->cv.notify_all();
    }).detach();
  }
  // The load's result, or nullopt as soon as `give_up()` holds (checked every few ms).
  std::optional<Result<LoadedEngine>> Wait(const std::function<bool()>& give_up) {
    std::unique_lock<std::mutex> lock(state_->mu);
    while (!state_->result) {
      if (give_up()) return std::nullopt;
      state_->cv.wait_for(lock, std::chrono::milliseconds(20));
    }
    return std::move(state_->result);
  }

 private:
  struct State {
    std::mutex mu;
    std::condition_variable cv;
    std::optional<Result<LoadedEngine>> result;
  };
  std::shared_ptr<State> state_;  // shared with the thread, which may outlive this object
};

// Opens the generation routes and says so.
void Announce(const ServePlan& p, const LoadedEngine& l, double load_s, server::ApiServer& api) {
  server::LoadedModel lm;
  lm.engine = l.engine.get();
  lm.tokenizer = l.tokenizer.get();
  lm.chat_template = l.chat_template.get();
  lm.constraints = l.constraints.get();
  lm.pooling = l.pooling;
  lm.rerank = l.rerank.get();
  lm.synthetic = IsSynthetic(*l.model);
  lm.created = int64_t(std::time(nullptr));
  if (lm.synthetic) std::fprintf(stderr, "%s\n", kSyntheticNotice);
  api.SetLoaded(lm);
  const EngineStats s = l.engine->Stats();
  std::fprintf(stderr,
               "brisk serve: model %s loaded in %.2f s; max_model_len %d, %d KV blocks, "
               "max_num_seqs %d, policy %s%s%s\n",
               p.server.model_id.c_str(), load_s, l.engine->config().max_model_len,
               s.kv_blocks_total, s.max_num_seqs, BatchPolicyName(s.policy),
               p.server.api_key.empty() ? "" : ", API key required",
               l.pooling == Pooling::kLast   ? ", embeddings (pooling last)"
               : l.pooling == Pooling::kRank ? ", reranker (pooling rank)"
                                             : "");
  const EngineConfig& c = l.engine->config();
  const CgroupLimits& cg = ProcessCgroupLimits();
  std::string cpu = cg.cpu_quota
                        ? ", cgroup CPU quota " + std::to_string(*cg.cpu_quota).substr(0, 4)
                        : std::string();
  std::string mem =
      c.memory_limit_bytes
          ? "memory limit " + FormatBytes(int64_t(c.memory_limit_bytes)) +
                (cg.memory_bytes && size_t(*cg.memory_bytes) == c.memory_limit_bytes
                     ? " (cgroup v" + std::to_string(cg.version) + " " + cg.memory_dir + ")"
                     : " (--memory-limit)")
          : std::string("no memory limit");
  std::fprintf(stderr, "brisk serve: %d compute threads%s; %s; KV cache %s\n",
               c.threads > 0 ? c.threads : ThreadPool::DefaultThreads(), cpu.c_str(), mem.c_str(),
               FormatBytes(int64_t(c.kv_cache_bytes)).c_str());
  std::printf("ready\n");
  std::fflush(stdout);
}

// The last responses were handed to the transport when the drain completed; give their bytes time
// to reach the clients before the connections close (the transport has no completion callback,
// and a finished response flushes within milliseconds, so a short bounded poll is enough).
void FlushResponses(const server::HttpServer& http, double limit_s) {
  const double end = NowSeconds() + limit_s;
  while (http.active_exchanges() > 0 && NowSeconds() < end)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
}

// Each connection holds a descriptor, and the usual soft limit (1024) would refuse connections
// below --max-connections: raise it to the hard limit, as most servers do.
void RaiseOpenFileLimit() {
  rlimit r{};
  if (getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < r.rlim_max) {
    r.rlim_cur = r.rlim_max;
    setrlimit(RLIMIT_NOFILE, &r);
  }
}

int RunServe(ServeOptions& o) {
  const sigset_t signals = SignalThread::BlockSignals();
  RaiseOpenFileLimit();
  auto plan = PlanServe(o);
  if (!plan.ok()) return ReportError(plan.status());
  server::ServerMetrics metrics;
  std::unique_ptr<server::RequestLog> request_log;
  if (!o.request_log.empty()) {
    auto log = server::RequestLog::Open(o.request_log);
    if (!log.ok()) return ReportError(log.status());
    request_log = std::move(log).value();
  }
  // Declared before the engine so that it outlives it: the engine's last events still go out.
  auto kv_publisher = OpenKvEvents(o, *plan);
  if (!kv_publisher.ok()) return ReportError(kv_publisher.status());
  server::ApiServer api(plan->server, &metrics, request_log.get());
  auto http = StartHttp(o, api);
  if (!http.ok()) return ReportError(http.status());
  api.SetTransport(http->get());
  std::printf("listening on http://%s:%d\n", o.host.c_str(), (*http)->port());
  std::fflush(stdout);

  // Destroyed in reverse order: the engine (cancelling anything left after a second signal)
  // after the HTTP server has stopped and the signal thread has ended.
  Result<LoadedEngine> loaded = Status::Error("not loaded");
  SignalThread signal_thread(signals, o, api);
  const double t0 = NowSeconds();
  std::optional<Result<LoadedEngine>> load =
      BackgroundLoad(*plan).Wait([&] { return signal_thread.stop_requests() >= 1; });
  if (!load) {
    // Nothing runs yet, so there is nothing to drain; the load thread may be stuck in a read that
    // nothing can interrupt, so leave without destructors (they would wait for it).
    std::fprintf(stderr, "brisk serve: stopped while loading the model\n");
    (*http)->Stop();
    std::fflush(nullptr);
    std::_Exit(0);
  }
  loaded = std::move(*load);
  if (!loaded.ok()) {
    (*http)->Stop();
    return ReportError(loaded.status());
  }
  // Reloads reach the engine before "ready" is printed: a client that waits for it and then
  // sends SIGHUP must not find the signal dropped.
  signal_thread.set_engine(loaded->engine.get());
  if (*kv_publisher) (*kv_publisher)->Follow(loaded->engine->kv_events());
  Announce(*plan, *loaded, NowSeconds() - t0, api);
  api.WaitForDrain([&] { return signal_thread.stop_requests() >= 2; });
  if (signal_thread.stop_requests() == 1) FlushResponses(**http, o.write_timeout_s);
  std::fprintf(stderr, "brisk serve: %s\n",
               signal_thread.stop_requests() == 1 ? "drained, exiting" : "stopping now");
  signal_thread.set_engine(nullptr);
  (*http)->Stop();
  api.StopWorkers();  // before the engine goes: a worker may be submitting to it
  return 0;
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
  AddEngineOptions(cmd, &o->engine);
  cmd->add_option("--http-threads", o->http_threads, "HTTP I/O threads")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmd->add_option("--served-model-name", o->served_model_name,
                  "the model name clients use (default: the file name)");
  cmd->add_option("--api-key", o->api_key, "require Authorization: Bearer KEY");
  cmd->add_option("--api-key-file", o->api_key_file, "read the API key from the file's first line");
  cmd->add_option("--allowed-origins", o->allowed_origins,
                  "CORS: origins whose web pages may call the API, comma-separated "
                  "(https://app.example.com), or * for any (default: none)");
  cmd->add_option("--pooling", o->pooling,
                  "none | last | rank: what the model serves (default: the file's pooling type). "
                  "last: /v1/embeddings from the last token's hidden state; rank: /v1/rerank "
                  "from the \"yes\"/\"no\" logits; none: text generation")
      ->check(CLI::IsMember({"none", "last", "rank"}));
  cmd->add_option("--config", o->config,
                  "batch settings file (JSON, from `brisk tune`); reloaded on SIGHUP/SIGUSR1");
  cmd->add_option("--request-log", o->request_log, "append one JSON line per finished request");
  cmd->add_option("--bench-dir", o->bench_dir,
                  "`brisk bench` output folder whose latest/ report GET /bench shows "
                  "(default: $BRISK_HOME/bench, i.e. ~/.cache/brisk/bench)");
  cmd->add_option("--default-max-tokens", o->default_max_tokens,
                  "max_tokens when a request gives none, cut to the room its prompt leaves "
                  "(0: the rest of the context, as vLLM)")
      ->check(CLI::Range(0, 1 << 20))
      ->capture_default_str();
  cmd->add_option("--stream-interval", o->stream_interval,
                  "tokens coalesced into one SSE event at most (1: every token)")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  AddResponseStoreOptions(cmd, o.get());
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
  cmd->add_option("--max-connections", o->max_connections,
                  "HTTP connections open at once; a new one over the limit takes the slot of the "
                  "longest-idle connection, or gets 503 when all are busy (0: no limit)")
      ->check(CLI::Range(0, 1 << 20))
      ->capture_default_str();
  cmd->add_option("--max-connections-per-client", o->max_connections_per_client,
                  "HTTP connections one client address may hold, with the same eviction (0: no "
                  "limit; behind a proxy or gateway every client shares its address)")
      ->check(CLI::Range(0, 1 << 20))
      ->capture_default_str();
  cmd->add_option("--kv-events", o->kv_events,
                  "publish KV-cache events (vLLM's format, for llm-d's precise prefix-cache "
                  "routing) on this ZeroMQ PUB endpoint, e.g. tcp://*:5557 (default: off)");
  cmd->add_option("--kv-events-replay", o->kv_events_replay,
                  "ZeroMQ ROUTER endpoint answering replay requests for recent event batches, "
                  "e.g. tcp://*:5558");
  cmd->add_option("--kv-events-topic", o->kv_events_topic,
                  "topic frame of each event message (vLLM's default: empty; llm-d reads "
                  "kv@POD@MODEL)");
  cmd->add_option("--log-level", o->log_level, "info, or debug: one line per request on stderr")
      ->check(CLI::IsMember({"info", "debug"}));
  return [o] { return RunServe(*o); };
}

}  // namespace brisk::cli
