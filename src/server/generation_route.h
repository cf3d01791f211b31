// POST /v1/chat/completions and /v1/completions (DESIGN §6): parse and validate, render the chat
// template, tokenise, check the context length, submit to the engine, and answer — one JSON
// response, or an SSE stream fed from the engine thread through a request sink. A client that
// goes away cancels its request (its KV blocks are freed at the next engine step).
#pragma once

#include <memory>

#include "server/api_server.h"
#include "server/http_server.h"

namespace brisk::server {

void HandleGeneration(ApiServer& server, const LoadedModel& model, bool chat, HttpRequest&& request,
                      std::shared_ptr<HttpExchange> ex);

}  // namespace brisk::server
