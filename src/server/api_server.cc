#include "server/api_server.h"

#include <charconv>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

#include "model/kv_store.h"
#include "server/bench_page.h"
#include "server/embeddings_route.h"
#include "server/generation_route.h"
#include "server/openai_response.h"
#include "server/rerank_route.h"
#include "server/responses_route.h"
#include "server/static_assets.h"
#include "util/ascii.h"
#include "util/clock.h"

namespace brisk::server {
namespace {

using Json = nlohmann::ordered_json;

HttpResponse JsonResponse(int status, const Json& body) {
  HttpResponse r;
  r.status = status;
  r.body = body.dump(-1, ' ', false, Json::error_handler_t::replace);
  return r;
}

// POST /reset_prefix_cache (vLLM's route): every cached prefix is forgotten before the next engine
// step; with --kv-events, subscribers receive AllBlocksCleared (docs/kv-events.md). Running
// requests keep their own blocks. `engine` is null while the model loads.
HttpResponse ResetPrefixCache(Engine* engine) {
  if (engine == nullptr)
    return ErrorResponse(
        ToApiError(Status::Unavailable("the model is still loading"), "model_loading"));
  engine->ResetPrefixCache();
  return JsonResponse(200, Json{{"reset", true}});
}

// Parses a JSON object body; nullopt + error response when it is not one.
std::optional<Json> ParseObject(const std::string& body, HttpResponse* error) {
  Json j = Json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    *error = ErrorResponse(BadRequest("the request body must be a JSON object"));
    return std::nullopt;
  }
  return j;
}

// The id of GET /v1/models/{id} (or /models/{id}), percent-decoded since SDKs encode it (an id
// may hold a '/'); nullopt for other paths. A bad escape is kept as it is: no id will match it.
std::optional<std::string> ModelIdInPath(std::string_view p) {
  for (std::string_view prefix : {"/v1/models/", "/models/"}) {
    if (!p.starts_with(prefix) || p.size() == prefix.size()) continue;
    std::string id;
    for (size_t i = prefix.size(); i < p.size(); ++i) {
      unsigned value = 0;
      const char* hex = p.data() + i + 1;
      if (p[i] == '%' && i + 2 < p.size() &&
          std::from_chars(hex, hex + 2, value, 16).ptr == hex + 2) {
        id += char(value);
        i += 2;
      } else {
        id += p[i];
      }
    }
    return id;
  }
  return std::nullopt;
}

}  // namespace

bool KeyMatches(const std::string* got, const std::string& expected) {
  if (!got) return false;
  // Length differences are not secret (the key length is), contents are: compare every byte.
  unsigned diff = got->size() == expected.size() ? 0u : 1u;
  for (size_t i = 0; i < expected.size(); ++i) {
    const unsigned char a = i < got->size() ? static_cast<unsigned char>((*got)[i]) : 0;
    diff |= a ^ static_cast<unsigned char>(expected[i]);
  }
  return diff == 0;
}

bool BearerMatches(const std::string* authorization, const std::string& key) {
  // "Bearer" is an auth-scheme, and schemes are case-insensitive (RFC 7235 §2.1): "bearer KEY"
  // and "BEARER KEY" are the same credentials. Only the token is secret.
  constexpr std::string_view kScheme = "bearer ";
  if (!authorization || authorization->size() < kScheme.size() ||
      AsciiLower(std::string_view(*authorization).substr(0, kScheme.size())) != kScheme)
    return false;
  const std::string token = authorization->substr(kScheme.size());
  return KeyMatches(&token, key);
}

ApiServer::ApiServer(ServerOptions options, ServerMetrics* metrics, RequestLog* request_log)
    : options_(std::move(options)),
      metrics_(metrics),
      request_log_(request_log),
      responses_(options_.responses) {}

ApiServer::~ApiServer() { StopWorkers(); }

void ApiServer::SetLoaded(const LoadedModel& model) {
  model_ = model;
  loaded_.store(true);
}

void ApiServer::BeginDrain() {
  draining_.store(true);
  WakeDrainWaiters();
}

void ApiServer::WaitForDrain(const std::function<bool()>& give_up) {
  std::unique_lock<std::mutex> lock(drain_mu_);
  drain_cv_.wait(lock, [&] { return give_up() || (draining_.load() && in_flight_.load() == 0); });
}

void ApiServer::WakeDrainWaiters() {
  // Taking the lock orders the state change before a waiter's predicate check: no lost wake-up.
  { std::lock_guard<std::mutex> lock(drain_mu_); }
  drain_cv_.notify_all();
}

bool ApiServer::Authorized(const HttpRequest& r) const {
  if (options_.api_key.empty()) return true;
  // OpenAI clients send the key as a Bearer token, Anthropic clients in x-api-key.
  return BearerMatches(r.Header("authorization"), options_.api_key) ||
         KeyMatches(r.Header("x-api-key"), options_.api_key);
}

ApiServer::ModelRoute ApiServer::ModelRouteOf(const std::string& p) {
  if (p == "/v1/chat/completions" || p == "/chat/completions") return ModelRoute::kChat;
  if (p == "/v1/completions" || p == "/completions") return ModelRoute::kCompletion;
  if (p == "/v1/messages") return ModelRoute::kMessages;
  if (p == "/v1/messages/count_tokens") return ModelRoute::kCountTokens;
  if (p == "/v1/responses") return ModelRoute::kResponses;
  if (p == "/tokenize") return ModelRoute::kTokenize;
  if (p == "/detokenize") return ModelRoute::kDetokenize;
  if (p == "/v1/embeddings" || p == "/embeddings") return ModelRoute::kEmbeddings;
  if (p == "/v1/rerank" || p == "/rerank") return ModelRoute::kRerank;
  return ModelRoute::kNone;
}

void ApiServer::Handle(HttpRequest&& r, std::shared_ptr<HttpExchange> ex) {
  // CORS before anything: browsers send a preflight without the key, and every answer to an
  // allowed origin (errors and streams too) must carry the header for the page to read it.
  if (options_.cors.enabled()) {
    if (IsPreflight(r)) return ex->Respond(PreflightResponse(options_.cors, r));
    std::string allow = AllowOriginFor(options_.cors, r.Header("origin"));
    if (!allow.empty()) ex = WithCorsHeaders(std::move(ex), std::move(allow));
  }
  const std::string& p = r.path;
  const bool get = r.method == "GET" || r.method == "HEAD";
  const bool post = r.method == "POST";
  // Public: liveness, readiness (probes carry no key) and the web UI (the page asks for the key).
  if (p == "/health" && get) return ex->Respond(Health());
  if (p == "/ready" && get) return ex->Respond(Ready());
  if (get && FindStaticAsset(p) != nullptr) return ex->Respond(StaticFile(r));
  // The bench report is a UI page too (reached by a link, so it cannot carry a key), and its JSON
  // holds the same numbers as the page: guarding one copy and not the other would protect nothing.
  if (get && IsBenchRoute(p)) {
    const std::string* host = r.Header("host");
    const BenchPageServer self{options_.model_id, host ? *host : std::string()};
    return ex->Respond(BenchRouteResponse(p, options_.bench_dir, kMaxBenchReportBytes, self));
  }

  const ModelRoute route = ModelRouteOf(p);
  if (!Authorized(r)) {
    HttpResponse resp =
        ErrorResponse(ToApiError(Status::Unauthenticated(
                          "invalid or missing API key (Authorization: Bearer, or x-api-key)")),
                      ShapeOf(route));
    resp.headers.emplace_back("WWW-Authenticate", "Bearer");
    return ex->Respond(std::move(resp));
  }
  if (p == "/metrics" && get) return ex->Respond(Metrics());
  if ((p == "/v1/models" || p == "/models") && get) return ex->Respond(Models());
  if (auto id = ModelIdInPath(p); id && get) return ex->Respond(Model(*id));
  if (p == "/props" && get) return ex->Respond(Props());
  if (auto id = ResponseIdInPath(p)) {
    if (get) return ex->Respond(GetStoredResponse(responses_, *id));
    if (r.method == "DELETE") return ex->Respond(DeleteStoredResponse(responses_, *id));
    return ex->Respond(
        ErrorResponse(HttpError(405, "use GET or DELETE for " + r.path, "method_not_allowed")));
  }
  if (p == "/admin/config" && (get || r.method == "PATCH" || post))
    return ex->Respond(AdminConfig(r));
  if (p == "/reset_prefix_cache" && post)
    return ex->Respond(ResetPrefixCache(loaded_.load() ? model_.engine : nullptr));
  if (route != ModelRoute::kNone) {
    if (r.body.size() < kInlineBodyBytes)
      return HandleModelRoute(route, std::move(r), std::move(ex));
    auto task = [this, route, r = std::move(r), ex]() mutable {
      try {
        HandleModelRoute(route, std::move(r), ex);
      } catch (const std::exception& e) {
        ex->Respond(ErrorResponse(ToApiError(Status::Internal(e.what()))));
      }
    };
    if (!workers_.Post(std::move(task)))
      ex->Respond(ErrorResponse(
          ToApiError(Status::Unavailable("the server is shutting down"), "shutting_down")));
    return;
  }
  ex->Respond(ErrorResponse(ToApiError(Status::NotFound("no route for " + r.method + " " + p))));
}

ErrorShape ApiServer::ShapeOf(ModelRoute route) {
  const bool anthropic = route == ModelRoute::kMessages || route == ModelRoute::kCountTokens;
  return anthropic ? ErrorShape::kAnthropic : ErrorShape::kOpenAi;
}

std::optional<ApiError> ApiServer::WrongTask(ModelRoute route) const {
  const Pooling pooling = model_.pooling;
  const bool generation = route == ModelRoute::kChat || route == ModelRoute::kCompletion ||
                          route == ModelRoute::kMessages || route == ModelRoute::kResponses;
  if (generation && pooling != Pooling::kNone) {
    return BadRequest(std::string("this server runs the model with pooling '") +
                          PoolingName(pooling) + "': it cannot generate text; use " +
                          (pooling == Pooling::kRank ? "/v1/rerank" : "/v1/embeddings"),
                      "model", "model_not_supported");
  }
  if (route == ModelRoute::kEmbeddings && pooling != Pooling::kLast) {
    return BadRequest(pooling == Pooling::kRank
                          ? "this server runs a reranker (pooling 'rank'): use /v1/rerank, or "
                            "start brisk serve with --pooling last for embeddings"
                          : "the model is not an embedding model: start brisk serve with "
                            "--pooling last to embed with its last token's hidden state",
                      "model", "model_not_supported");
  }
  if (route == ModelRoute::kRerank && pooling != Pooling::kRank) {
    return BadRequest(
        std::string("the model is not a reranker (pooling '") + PoolingName(pooling) +
            "'): start brisk serve with --pooling rank to score with its \"yes\"/\"no\" logits",
        "model", "model_not_supported");
  }
  return std::nullopt;
}

void ApiServer::HandleModelRoute(ModelRoute route, HttpRequest&& r,
                                 std::shared_ptr<HttpExchange> ex) {
  const ErrorShape shape = ShapeOf(route);
  if (r.method != "POST")
    return ex->Respond(
        ErrorResponse(HttpError(405, "use POST for " + r.path, "method_not_allowed"), shape));
  if (!loaded_.load())
    return ex->Respond(ErrorResponse(
        ToApiError(Status::Unavailable("the model is still loading"), "model_loading"), shape));
  // Requests that only read the tokenizer are served while draining.
  if (route == ModelRoute::kTokenize) return ex->Respond(Tokenize(r));
  if (route == ModelRoute::kDetokenize) return ex->Respond(Detokenize(r));
  if (route == ModelRoute::kCountTokens) return ex->Respond(AnthropicCountTokens(*this, model_, r));
  if (draining_.load()) {
    HttpResponse resp = ErrorResponse(
        ToApiError(Status::Unavailable("the server is shutting down"), "shutting_down"), shape);
    resp.headers.emplace_back("Connection", "close");
    return ex->Respond(std::move(resp));
  }
  if (auto e = WrongTask(route)) return ex->Respond(ErrorResponse(*e, shape));
  if (route == ModelRoute::kResponses)
    return HandleCreateResponse(*this, model_, std::move(r), std::move(ex));
  if (route == ModelRoute::kEmbeddings)
    return HandleEmbeddings(*this, model_, std::move(r), std::move(ex));
  if (route == ModelRoute::kRerank) return HandleRerank(*this, model_, std::move(r), std::move(ex));
  const GenerationApi api = route == ModelRoute::kChat         ? GenerationApi::kChat
                            : route == ModelRoute::kCompletion ? GenerationApi::kCompletion
                                                               : GenerationApi::kAnthropicMessages;
  HandleGeneration(*this, model_, api, std::move(r), std::move(ex));
}

HttpResponse ApiServer::Health() const {
  if (!loaded_.load()) return JsonResponse(503, Json{{"status", "loading"}});
  if (draining_.load()) return JsonResponse(503, Json{{"status", "draining"}});
  return JsonResponse(200, Json{{"status", "ok"}});
}

HttpResponse ApiServer::Ready() {
  const bool loaded = loaded_.load();
  bool stalled = false;
  if (loaded) {
    const EngineStats s = model_.engine->Stats();
    // The server's own count is current even when a wedged engine stopped publishing its stats.
    const bool has_work = in_flight_.load() > 0 || s.running + s.waiting > 0;
    stalled =
        watchdog_.Stalled(s.steps, has_work, options_.clock ? options_.clock() : NowSeconds());
  }
  const Readiness r = ReadinessOf(loaded, draining_.load(), stalled);
  Json body = {{"status", ReadinessName(r)}};
  if (r == Readiness::kStalled)
    body["message"] = "the engine holds requests but has not finished a step in " +
                      std::to_string(int(kEngineStallSeconds)) + " s";
  return JsonResponse(r == Readiness::kReady ? 200 : 503, body);
}

HttpResponse ApiServer::Models() const {
  // model_ is written once before loaded_ is set: read it only after seeing loaded_.
  const bool loaded = loaded_.load();
  return JsonResponse(200, ModelsList(options_.model_id, loaded ? model_.created : 0, "brisk",
                                      loaded ? model_.engine->config().max_model_len : 0));
}

HttpResponse ApiServer::Model(const std::string& id) const {
  if (id != options_.model_id) {
    return ErrorResponse(ToApiError(
        Status::NotFound("The model `" + id + "` does not exist.", "model"), "model_not_found"));
  }
  const bool loaded = loaded_.load();
  return JsonResponse(200, ModelObject(options_.model_id, loaded ? model_.created : 0, "brisk",
                                       loaded ? model_.engine->config().max_model_len : 0));
}

HttpResponse ApiServer::Props() const {
  Json j = {{"model", options_.model_id}, {"version", BRISK_VERSION}, {"loaded", loaded_.load()}};
  if (loaded_.load()) {
    const EngineConfig& c = model_.engine->config();
    const EngineStats s = model_.engine->Stats();
    j["synthetic"] = model_.synthetic;
    j["pooling"] = PoolingName(model_.pooling);
    j["max_model_len"] = c.max_model_len;
    // null: a request without max_tokens may run to the end of the context.
    j["default_max_tokens"] =
        options_.default_max_tokens > 0 ? Json(options_.default_max_tokens) : Json(nullptr);
    j["stream_interval"] = options_.stream_interval;
    j["kv"] = {{"type", KvTypeName(c.kv_type)},
               {"block_size", c.kv_block_size},
               {"blocks", s.kv_blocks_total},
               {"prefix_caching", c.prefix_caching}};
    j["batch"] = {{"policy", BatchPolicyName(s.policy)},
                  {"max_num_seqs", s.max_num_seqs},
                  {"max_num_seqs_limit", c.max_num_seqs},
                  {"max_num_batched_tokens", s.max_num_batched_tokens},
                  {"max_num_batched_tokens_limit", c.max_num_batched_tokens},
                  {"tpot_target_ms", s.tpot_target_ms},
                  {"max_waiting", c.max_waiting}};
    j["auth"] = !options_.api_key.empty();
  }
  return JsonResponse(200, j);
}

HttpResponse ApiServer::Tokenize(const HttpRequest& r) const {
  HttpResponse err;
  auto j = ParseObject(r.body, &err);
  if (!j) return err;
  auto it = j->find("content");
  if (it == j->end()) {  // vLLM's shapes
    if (j->contains("messages")) return VllmTokenize(*this, model_, r, /*chat=*/true);
    if (j->contains("prompt")) return VllmTokenize(*this, model_, r, /*chat=*/false);
  }
  if (it == j->end() || !it->is_string()) {
    return ErrorResponse(BadRequest(
        "\"content\" must be a string (or give vLLM's \"prompt\" or \"messages\")", "content"));
  }
  const bool special = j->value("add_special", false) || j->value("parse_special", true);
  const std::string& text = it->get_ref<const std::string&>();
  const std::vector<int32_t> ids = model_.tokenizer->Encode(text, special);
  Json out = {{"tokens", ids}};
  if (j->value("with_pieces", false)) {
    Json pieces = Json::array();
    for (int32_t id : ids)
      pieces.push_back({{"id", id}, {"piece", std::string(model_.tokenizer->PieceBytes(id))}});
    out["tokens"] = pieces;
  }
  return JsonResponse(200, out);
}

HttpResponse ApiServer::Detokenize(const HttpRequest& r) const {
  HttpResponse err;
  auto j = ParseObject(r.body, &err);
  if (!j) return err;
  auto it = j->find("tokens");
  if (it == j->end() || !it->is_array())
    return ErrorResponse(BadRequest("\"tokens\" must be an array of token ids", "tokens"));
  const int n_vocab = model_.engine->model_config().n_vocab;
  std::vector<int32_t> ids;
  for (const Json& t : *it) {
    if (!t.is_number_integer() || t.get<int64_t>() < 0 || t.get<int64_t>() >= n_vocab)
      return ErrorResponse(BadRequest(
          "\"tokens\" must hold integer ids in 0.." + std::to_string(n_vocab - 1), "tokens"));
    ids.push_back(t.get<int32_t>());
  }
  return JsonResponse(200, Json{{"content", model_.tokenizer->Decode(ids)}});
}

HttpResponse ApiServer::Metrics() const {
  HttpResponse r;
  r.content_type = "text/plain; version=0.0.4; charset=utf-8";
  EngineStats s;
  KvCacheInfo cache;
  if (loaded_.load()) {
    s = model_.engine->Stats();
    const EngineConfig& c = model_.engine->config();
    cache = {c.kv_block_size, s.kv_blocks_total, KvTypeName(c.kv_type), c.prefix_caching};
  }
  SideCounters side;
  if (const HttpServer* http = transport_.load()) side.connections = http->admission();
  if (request_log_) side.request_log = request_log_->counters();
  r.body = metrics_->Render(s, options_.model_id, cache, side);
  return r;
}

namespace {

// GET /admin/config's body: the settings asked for (one authoritative copy in the engine), their
// upper limits, and what the batch controller has in force at the last step (below the settings
// under the slo and loadavg policies).
Json AdminConfigJson(const BatchSettings& b, const Engine& e) {
  const EngineStats s = e.Stats();
  return Json{{"batch_policy", BatchPolicyName(b.policy)},
              {"max_num_seqs", b.max_num_seqs},
              {"max_num_batched_tokens", b.max_num_batched_tokens},
              {"tpot_target_ms", b.tpot_target_ms},
              {"max_num_seqs_limit", e.config().max_num_seqs},
              {"max_num_batched_tokens_limit", e.config().max_num_batched_tokens},
              {"in_force",
               {{"batch_policy", BatchPolicyName(s.policy)},
                {"max_num_seqs", s.max_num_seqs},
                {"max_num_batched_tokens", s.max_num_batched_tokens}}}};
}

// A PATCH body checked whole before anything changes: the fields given, nothing else.
struct BatchSettingsPatch {
  std::optional<BatchPolicy> policy;
  std::optional<int> max_num_seqs, max_num_batched_tokens;
  std::optional<double> tpot_target_ms;
};

std::optional<ApiError> ParseBatchSettingsPatch(const Json& j, const EngineConfig& limits,
                                                BatchSettingsPatch* out) {
  for (const auto& [key, v] : j.items()) {
    if (key == "batch_policy") {
      auto p = v.is_string() ? ParseBatchPolicy(v.get<std::string>())
                             : Result<BatchPolicy>(Status::Error("must be a string"));
      if (!p.ok()) return BadRequest("batch_policy: " + p.message(), key);
      out->policy = *p;
    } else if (key == "max_num_seqs" || key == "max_num_batched_tokens") {
      const bool seqs = key == "max_num_seqs";
      const int limit = seqs ? limits.max_num_seqs : limits.max_num_batched_tokens;
      if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > limit)
        return BadRequest(key + " must be an integer in 1.." + std::to_string(limit) +
                              " (the limit the server was started with)",
                          key);
      (seqs ? out->max_num_seqs : out->max_num_batched_tokens) = v.get<int>();
    } else if (key == "tpot_target_ms") {
      if (!v.is_number() || !(v.get<double>() > 0) || v.get<double>() > 1e6)
        return BadRequest("tpot_target_ms must be a number > 0", key);
      out->tpot_target_ms = v.get<double>();
    } else {
      return BadRequest("unknown setting \"" + key + "\"", key);
    }
  }
  return std::nullopt;
}

}  // namespace

// GET: the batch settings. PATCH/POST {"batch_policy", "max_num_seqs", "max_num_batched_tokens",
// "tpot_target_ms"} (any subset; the others keep their values): applied at the next engine step,
// running requests untouched.
HttpResponse ApiServer::AdminConfig(const HttpRequest& r) {
  if (!loaded_.load())
    return ErrorResponse(
        ToApiError(Status::Unavailable("the model is still loading"), "model_loading"));
  Engine& e = *model_.engine;
  if (r.method == "GET" || r.method == "HEAD")
    return JsonResponse(200, AdminConfigJson(e.batch_settings(), e));
  HttpResponse err;
  auto j = ParseObject(r.body, &err);
  if (!j) return err;
  BatchSettingsPatch patch;
  if (auto bad = ParseBatchSettingsPatch(*j, e.config(), &patch)) return ErrorResponse(*bad);
  const BatchSettings stored = e.UpdateBatchSettings([&](BatchSettings& s) {
    if (patch.policy) s.policy = *patch.policy;
    if (patch.max_num_seqs) s.max_num_seqs = *patch.max_num_seqs;
    if (patch.max_num_batched_tokens) s.max_num_batched_tokens = *patch.max_num_batched_tokens;
    if (patch.tpot_target_ms) s.tpot_target_ms = *patch.tpot_target_ms;
  });
  Json body = AdminConfigJson(stored, e);
  body["applied"] = true;
  return JsonResponse(200, body);
}

HttpResponse ApiServer::StaticFile(const HttpRequest& r) const {
  return StaticAssetResponse(*FindStaticAsset(r.path), r.Header("if-none-match"));
}

}  // namespace brisk::server
