// The routes of `brisk serve` (DESIGN §6): authentication, the loading and draining states, and
// the small endpoints (health, readiness (readiness.h), models, props, tokenize, detokenize,
// metrics, admin config, the static web UI, the bench report of bench_page.h), and CORS (cors.h).
// Generation routes (OpenAI's and Anthropic's /v1/messages with its count_tokens) are in
// generation_route.h, the Responses API's (with its store of responses) in responses_route.h. One
// ApiServer serves every HTTP thread; the handler never blocks: generation work goes to the engine
// and comes back through request sinks.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "engine/engine.h"
#include "model/embedding.h"
#include "server/api_error.h"
#include "server/cors.h"
#include "server/http_server.h"
#include "server/metrics.h"
#include "server/readiness.h"
#include "server/request_log.h"
#include "server/response_store.h"
#include "server/work_queue.h"
#include "tokenizer/jinja/chat_template.h"
#include "tokenizer/tokenizer.h"

namespace brisk::server {

struct ServerOptions {
  std::string model_id = "brisk";  // the name clients use in "model"
  std::string api_key;             // "" = no authentication
  int default_max_tokens = 0;      // cap of a request without max_tokens; 0 = the context's end
  int stream_interval = 1;         // max tokens coalesced into one SSE event (1 = every token)
  double retry_after_s = 1;        // Retry-After of a 429
  bool log_requests = false;       // one line per finished request on stderr (--log-level debug)
  std::string bench_dir;           // `brisk bench` output folder for GET /bench ("" = none)
  CorsPolicy cors;                 // --allowed-origins; off by default
  ResponseStoreLimits responses;   // the Responses API's store (--responses-max, ...)
  std::function<double()> clock;  // monotonic seconds for GET /ready's watchdog; empty = NowSeconds
};

// What exists once the model is loaded (the server answers 503 before).
class OutputConstraints;

struct LoadedModel {
  Engine* engine = nullptr;
  const Tokenizer* tokenizer = nullptr;
  const jinja::ChatTemplate* chat_template = nullptr;  // nullptr: chat route refuses
  OutputConstraints* constraints = nullptr;            // nullptr: structured outputs are refused
  // What the model serves (docs/embeddings.md): none = generation, last = /v1/embeddings,
  // rank = /v1/rerank (with `rerank`, its yes/no head); the other routes answer 400.
  Pooling pooling = Pooling::kNone;
  const RerankHead* rerank = nullptr;
  bool synthetic = false;  // random weights: the UI warns
  int64_t created = 0;     // unix time the model was loaded
};

// Model-route requests with bodies this large are handled on the request workers, not on the HTTP
// I/O thread that read them (parsing and tokenizing take ~0.1 s per MB); smaller ones are handled
// at once where they arrived, without a thread hop.
inline constexpr size_t kInlineBodyBytes = 64 << 10;
inline constexpr int kRequestWorkerThreads = 2;

class ApiServer {
 public:
  ApiServer(ServerOptions options, ServerMetrics* metrics, RequestLog* request_log);
  ~ApiServer();  // StopWorkers()

  // The transport serving this API, for its connection counts in /metrics (may stay unset).
  void SetTransport(const HttpServer* http) { transport_.store(http); }
  // Finishes the request workers' running tasks and drops their queue: call it after the
  // transport stopped and before the engine goes away.
  void StopWorkers() { workers_.Stop(); }

  void SetLoaded(const LoadedModel& model);  // once; the generation routes open
  // Refuses new generation work with 503 from now on (SIGTERM); running requests finish.
  void BeginDrain();
  bool draining() const { return draining_.load(); }
  // Generation requests submitted and not yet finished.
  int in_flight() const { return in_flight_.load(); }
  // Blocks until the drain is complete (draining, nothing in flight) or `give_up()` is true;
  // whoever makes give_up() true calls WakeDrainWaiters().
  void WaitForDrain(const std::function<bool()>& give_up);
  void WakeDrainWaiters();

  // The HttpHandler.
  void Handle(HttpRequest&& request, std::shared_ptr<HttpExchange> ex);

  // For generation_route: bookkeeping of one generation request's life.
  void GenerationStarted() { in_flight_.fetch_add(1); }
  void GenerationFinished() {
    if (in_flight_.fetch_sub(1) == 1 && draining_.load()) WakeDrainWaiters();
  }
  const ServerOptions& options() const { return options_; }
  ServerMetrics* metrics() const { return metrics_; }
  RequestLog* request_log() const { return request_log_; }
  ResponseStore& responses() { return responses_; }
  uint64_t NextRequestNumber() { return request_counter_.fetch_add(1) + 1; }

 private:
  // The routes that need the loaded model (POST only, 503 while loading).
  enum class ModelRoute {
    kNone,
    kChat,
    kCompletion,
    kMessages,
    kCountTokens,
    kResponses,
    kTokenize,
    kDetokenize,
    kEmbeddings,
    kRerank
  };
  static ModelRoute ModelRouteOf(const std::string& path);
  // Anthropic's routes answer every error in Anthropic's shape, authentication and method included.
  static ErrorShape ShapeOf(ModelRoute route);
  // The 400 of a route the loaded model's pooling does not serve, or nullopt.
  std::optional<ApiError> WrongTask(ModelRoute route) const;
  void HandleModelRoute(ModelRoute route, HttpRequest&& r, std::shared_ptr<HttpExchange> ex);

  bool Authorized(const HttpRequest& r) const;
  HttpResponse Health() const;
  HttpResponse Ready();  // GET /ready: 200 only when loaded, not draining and not stalled
  HttpResponse Models() const;
  HttpResponse Model(const std::string& id) const;  // GET /v1/models/{id}
  HttpResponse Props() const;
  HttpResponse Tokenize(const HttpRequest& r) const;
  HttpResponse Detokenize(const HttpRequest& r) const;
  HttpResponse Metrics() const;
  HttpResponse AdminConfig(const HttpRequest& r);
  HttpResponse StaticFile(const HttpRequest& r) const;

  ServerOptions options_;
  std::mutex drain_mu_;  // WaitForDrain's
  std::condition_variable drain_cv_;
  ServerMetrics* metrics_;
  RequestLog* request_log_;
  ResponseStore responses_;
  std::atomic<bool> loaded_{false};
  LoadedModel model_;  // written once before loaded_ is set
  std::atomic<bool> draining_{false};
  std::atomic<int> in_flight_{0};
  std::atomic<uint64_t> request_counter_{0};
  StepWatchdog watchdog_;  // when the engine's step counter last moved (GET /ready)
  std::atomic<const HttpServer*> transport_{nullptr};
  WorkQueue workers_{kRequestWorkerThreads};  // last: stopped first, before the members above
};

// Constant-time comparison of a header with the expected value (no early exit on the first
// differing byte, so the key cannot be found byte by byte from response times); false when the
// header is absent. BearerMatches: an Authorization header against "Bearer <key>".
bool KeyMatches(const std::string* got, const std::string& expected);
bool BearerMatches(const std::string* authorization, const std::string& key);

}  // namespace brisk::server
