#include "server/generation_route.h"

#include <ctime>
#include <random>
#include <variant>

#include "engine/token_constraint.h"
#include "server/chat_prompt.h"
#include "server/generation_sink.h"
#include "server/openai_request.h"
#include "server/openai_response.h"

namespace brisk::server {
namespace {

// Ids and tool-call ids: random per process (not secrets, only unique).
uint64_t RandomSeed() {
  static std::mutex mu;
  static std::mt19937_64 rng{std::random_device{}()};
  std::lock_guard<std::mutex> lock(mu);
  return rng();
}

}  // namespace

void HandleGeneration(ApiServer& server, const LoadedModel& model, bool chat, HttpRequest&& request,
                      std::shared_ptr<HttpExchange> ex) {
  Engine& engine = *model.engine;
  RequestLimits limits;
  limits.max_model_len = engine.config().max_model_len;
  limits.n_vocab = engine.model_config().n_vocab;
  limits.model_id = server.options().model_id;
  limits.default_max_tokens = server.options().default_max_tokens;
  auto parsed =
      chat ? ParseChatRequest(request.body, limits) : ParseCompletionRequest(request.body, limits);
  if (auto* err = std::get_if<ApiError>(&parsed)) return ex->Respond(ErrorResponse(*err));
  OpenAiRequest& req = std::get<OpenAiRequest>(parsed);

  // The prompt tokens.
  std::vector<int32_t> prompt;
  std::string echo;
  if (chat) {
    if (!model.chat_template)
      return ex->Respond(ErrorResponse(BadRequest(
          "the model has no chat template; use /v1/completions", "messages", "no_chat_template")));
    auto text = RenderChatPrompt(*model.chat_template, req);
    if (!text.ok())
      return ex->Respond(ErrorResponse(BadRequest("chat template: " + text.message(), "messages")));
    prompt = model.tokenizer->Encode(*text);
  } else if (!req.prompt_tokens.empty()) {
    prompt = std::move(req.prompt_tokens);
    if (req.echo) echo = model.tokenizer->Decode(prompt);
  } else {
    prompt = model.tokenizer->Encode(req.prompt);
    if (req.echo) echo = req.prompt;
  }
  if (prompt.empty())
    return ex->Respond(
        ErrorResponse(BadRequest("the prompt is empty", chat ? "messages" : "prompt")));
  int max_tokens = req.gen.max_tokens;
  if (auto err = CheckPromptLength(int(prompt.size()), req.gen.max_tokens, limits.max_model_len,
                                   &max_tokens))
    return ex->Respond(ErrorResponse(*err));

  std::mt19937_64 id_rng(RandomSeed());
  ResponseMeta meta;
  meta.id = NewResponseId(chat ? "chatcmpl-" : "cmpl-", id_rng);
  meta.created = int64_t(std::time(nullptr));
  meta.model = server.options().model_id;

  GenerationRequest gen = std::move(req.gen);
  gen.prompt = std::move(prompt);
  gen.max_tokens = max_tokens;
  if (req.json_object) gen.constraint = std::make_shared<JsonObjectConstraint>(*model.tokenizer);
  auto sink =
      std::make_shared<GenerationSink>(server, model, req, ex, meta, std::move(echo), id_rng());
  gen.sink = sink;

  uint64_t id = 0;
  {
    std::lock_guard<std::mutex> lock(sink->mutex());
    server.GenerationStarted();
    auto submitted = engine.Submit(std::move(gen));
    if (!submitted.ok()) {
      server.GenerationFinished();
      HttpResponse r = ErrorResponse(ToApiError(submitted.status()));
      if (submitted.code() == StatusCode::kResourceExhausted) {
        server.metrics()->OnRequestRejected();
        r.headers.emplace_back(
            "Retry-After", std::to_string(std::max(1, int(server.options().retry_after_s + 0.5))));
      }
      return ex->Respond(std::move(r));
    }
    id = *submitted;
    sink->StartLocked();
  }
  // A client that goes away cancels its request (runs at once if it is already gone).
  ex->OnDisconnect([&engine, id] { engine.Cancel(id); });
}

}  // namespace brisk::server
