// POST /v1/chat/completions, /v1/completions and /v1/messages (DESIGN §6): parse and validate,
// render the chat template, tokenise, check the context length, submit to the engine, and answer
// — one JSON response, or an SSE stream fed from the engine thread through a request sink. A
// client that goes away cancels its request (its KV blocks are freed at the next engine step).
// Anthropic's /v1/messages is parsed into the chat route's request (anthropic_request.h), so the
// three differ only in their parser, response writer and error shape.
#pragma once

#include <memory>

#include "server/api_server.h"
#include "server/http_server.h"

namespace brisk::server {

// The API a generation request speaks.
enum class GenerationApi { kChat, kCompletion, kAnthropicMessages };

void HandleGeneration(ApiServer& server, const LoadedModel& model, GenerationApi api,
                      HttpRequest&& request, std::shared_ptr<HttpExchange> ex);

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
