// The Responses API's routes (docs/responses-api.md): POST /v1/responses creates a response
// (parsed by responses_request.h, generated through the chat route's SubmitGeneration, shaped
// by responses_response_writer.h), continuing a stored one when previous_response_id names it;
// GET and DELETE /v1/responses/{id} read and remove a stored response (response_store.h).
// Errors are in OpenAI's shape.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "server/api_server.h"
#include "server/http_server.h"
#include "server/response_store.h"

namespace brisk::server {

void HandleCreateResponse(ApiServer& server, const LoadedModel& model, HttpRequest&& request,
                          std::shared_ptr<HttpExchange> ex);

// The {id} of /v1/responses/{id}; nullopt for other paths.
std::optional<std::string> ResponseIdInPath(std::string_view path);

// GET: the stored response object; DELETE: {id, object: "response.deleted", deleted: true}. A
// response never stored (store: false), expired, evicted or deleted is a 404 naming the id.
HttpResponse GetStoredResponse(ResponseStore& store, const std::string& id);
HttpResponse DeleteStoredResponse(ResponseStore& store, const std::string& id);

}  // namespace brisk::server
