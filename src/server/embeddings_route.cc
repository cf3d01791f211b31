#include "server/embeddings_route.h"

#include <nlohmann/json.hpp>
#include <variant>

#include "model/embedding.h"
#include "server/embedding_json.h"
#include "server/pooled_batch.h"
#include "server/pooling_prompts.h"
#include "server/pooling_request.h"

namespace brisk::server {
namespace {

std::vector<std::vector<int32_t>> Prompts(const Tokenizer& tokenizer, EmbeddingsRequest& req) {
  if (!req.token_inputs.empty()) return std::move(req.token_inputs);  // as given
  std::vector<std::vector<int32_t>> prompts;
  prompts.reserve(req.texts.size());
  for (const std::string& t : req.texts) prompts.push_back(EmbeddingPrompt(tokenizer, t));
  return prompts;
}

// The response body, written by hand: one vector is up to n_embd numbers, and a batch thousands.
std::string Body(const PooledHidden& hidden, int dimensions, bool base64,
                 const std::string& model_id, int64_t prompt_tokens) {
  std::string body = R"({"object":"list","data":[)";
  for (size_t i = 0; i < hidden.size(); ++i) {
    const std::vector<float> e = PoolEmbedding(hidden[i], dimensions);
    if (i) body += ',';
    body += R"({"object":"embedding","index":)" + std::to_string(i) + R"(,"embedding":)";
    body += base64 ? Float32Base64Json(e) : FloatArrayJson(e);
    body += '}';
  }
  const nlohmann::ordered_json usage = {{"prompt_tokens", prompt_tokens},
                                        {"total_tokens", prompt_tokens}};
  body += R"(],"model":)" + nlohmann::ordered_json(model_id).dump() + R"(,"usage":)" +
          usage.dump() + "}";
  return body;
}

}  // namespace

void HandleEmbeddings(ApiServer& server, const LoadedModel& model, HttpRequest&& request,
                      std::shared_ptr<HttpExchange> ex) {
  Engine& engine = *model.engine;
  auto parsed = ParseEmbeddingsRequest(request.body, PoolingLimitsOf(server, engine));
  if (auto* err = std::get_if<ApiError>(&parsed)) return ex->Respond(ErrorResponse(*err));
  EmbeddingsRequest& req = std::get<EmbeddingsRequest>(parsed);
  std::vector<std::vector<int32_t>> prompts = Prompts(*model.tokenizer, req);
  if (auto err = CheckPromptsFit(prompts, engine.config().max_model_len, "input"))
    return ex->Respond(ErrorResponse(*err));
  int64_t prompt_tokens = 0;
  for (const auto& p : prompts) prompt_tokens += int64_t(p.size());

  auto done = [&server, ex, dims = req.dimensions, base64 = req.base64,
               prompt_tokens](std::variant<PooledHidden, ApiError> outcome) {
    if (auto* err = std::get_if<ApiError>(&outcome))
      return ex->Respond(PooledErrorResponse(server, *err));
    HttpResponse r;
    r.body = Body(std::get<PooledHidden>(outcome), dims, base64, server.options().model_id,
                  prompt_tokens);
    ex->Respond(std::move(r));
  };
  RunPooled(server, engine, std::move(prompts), ex, std::move(done));
}

}  // namespace brisk::server
