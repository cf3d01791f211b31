#include "server/responses_route.h"

#include <random>
#include <utility>
#include <variant>

#include "server/generation_route.h"
#include "server/responses_request.h"
#include "server/responses_response_writer.h"

namespace brisk::server {
namespace {

using Json = nlohmann::ordered_json;

constexpr std::string_view kResponsesPrefix = "/v1/responses/";

ApiError NotStored(const std::string& id, const char* param) {
  return ToApiError(Status::NotFound("Response with id '" + id +
                                         "' not found (never stored, store: false, deleted, "
                                         "or evicted / expired from the in-memory store).",
                                     param));
}

uint64_t ItemSeed() {
  static std::mutex mu;
  static std::mt19937_64 rng{std::random_device{}()};
  std::lock_guard<std::mutex> lock(mu);
  return rng();
}

}  // namespace

void HandleCreateResponse(ApiServer& server, const LoadedModel& model, HttpRequest&& request,
                          std::shared_ptr<HttpExchange> ex) {
  auto parsed = ParseResponsesRequest(request.body, LimitsOf(server, *model.engine));
  if (auto* err = std::get_if<ApiError>(&parsed)) return ex->Respond(ErrorResponse(*err));
  ResponsesRequest& r = std::get<ResponsesRequest>(parsed);
  // The stored conversation is shared and immutable: held, not copied, until it is joined.
  std::shared_ptr<const StoredResponse> previous;
  if (!r.previous_response_id.empty()) {
    previous = server.responses().Get(r.previous_response_id);
    if (!previous)
      return ex->Respond(ErrorResponse(NotStored(r.previous_response_id, "previous_response_id")));
  }
  const Json* history = previous ? &previous->conversation : nullptr;
  AssembleConversation(history, &r);

  ResponsesContext context;
  context.store = r.store ? &server.responses() : nullptr;
  if (context.store) {
    if (history) context.conversation = *history;
    for (Json& m : r.input) context.conversation.push_back(std::move(m));
  }
  context.settings = std::move(r.settings);
  context.item_seed = ItemSeed();
  auto make_writer = [context = std::move(context)](WriterRequest w) mutable {
    context.tool_seed = w.tool_seed;
    return std::make_unique<ResponsesResponseWriter>(std::move(w.options), std::move(context));
  };
  SubmitGeneration(server, model, r.chat, "resp_", ErrorShape::kOpenAi, make_writer, std::move(ex));
}

std::optional<std::string> ResponseIdInPath(std::string_view path) {
  if (!path.starts_with(kResponsesPrefix) || path.size() == kResponsesPrefix.size())
    return std::nullopt;
  std::string_view id = path.substr(kResponsesPrefix.size());
  if (id.find('/') != std::string_view::npos) return std::nullopt;  // e.g. .../input_items
  return std::string(id);
}

HttpResponse GetStoredResponse(ResponseStore& store, const std::string& id) {
  auto stored = store.Get(id);
  if (!stored) return ErrorResponse(NotStored(id, ""));
  HttpResponse r;
  r.body = stored->response.dump(-1, ' ', false, Json::error_handler_t::replace);
  return r;
}

HttpResponse DeleteStoredResponse(ResponseStore& store, const std::string& id) {
  if (!store.Delete(id)) return ErrorResponse(NotStored(id, ""));
  HttpResponse r;
  r.body = Json{{"id", id}, {"object", "response.deleted"}, {"deleted", true}}.dump(
      -1, ' ', false, Json::error_handler_t::replace);
  return r;
}

}  // namespace brisk::server
