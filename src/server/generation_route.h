// POST /v1/chat/completions, /v1/completions and /v1/messages (DESIGN §6): parse and validate,
// render the chat template, tokenise, check the context length, submit to the engine, and answer
// — one JSON response, or an SSE stream fed from the engine thread through a request sink. A
// client that goes away cancels its request (its KV blocks are freed at the next engine step).
// Anthropic's /v1/messages is parsed into the chat route's request (anthropic_request.h), so the
// three differ only in their parser, response writer and error shape.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "server/api_server.h"
#include "server/http_server.h"
#include "server/openai_request.h"
#include "server/response_writer.h"

namespace brisk::server {

// The API a generation request speaks (the Responses API has its own route, responses_route.h,
// which ends in SubmitGeneration too).
enum class GenerationApi { kChat, kCompletion, kAnthropicMessages };

void HandleGeneration(ApiServer& server, const LoadedModel& model, GenerationApi api,
                      HttpRequest&& request, std::shared_ptr<HttpExchange> ex);

// The request parsers' limits on this server and model.
RequestLimits LimitsOf(const ApiServer& server, const Engine& engine);

// What a route's writer is made from, once the prompt is known.
struct WriterRequest {
  WriterOptions options;  // meta (id with the route's prefix, created, model), token bytes, ...
  int prompt_tokens = 0;
  std::optional<uint64_t> tool_seed;  // set when the request's tool calls are to be parsed
  std::string echo;                   // completions with echo: the prompt's text
  int32_t first_prompt_token = -1;  // completions with echo and logprobs (CompletionResponseWriter)
};
using WriterFactory = std::function<std::unique_ptr<ResponseWriter>(WriterRequest)>;

// The tail every generation route shares, for a parsed chat or completion request: the prompts,
// the context check, per choice (n x prompts) an output constraint, a writer and an engine
// request, Engine::SubmitAll (several choices answer through one ChoiceGroup); errors answered in
// `shape`.
void SubmitGeneration(ApiServer& server, const LoadedModel& model, OpenAiRequest& req,
                      std::string_view id_prefix, ErrorShape shape,
                      const WriterFactory& make_writer, std::shared_ptr<HttpExchange> ex);

// POST /v1/messages/count_tokens: {"input_tokens": N}, the length of the prompt /v1/messages
// would render for the same system, messages and tools.
HttpResponse AnthropicCountTokens(const ApiServer& server, const LoadedModel& model,
                                  const HttpRequest& request);

// POST /tokenize in vLLM's shapes: {"prompt"} (a completion's prompt) or {"messages", ...} (a
// chat request, rendered as /v1/chat/completions would: add_generation_prompt true unless given)
// -> {"count", "max_model_len", "tokens"}: the tokens generation would see.
HttpResponse VllmTokenize(const ApiServer& server, const LoadedModel& model,
                          const HttpRequest& request, bool chat);

}  // namespace brisk::server
