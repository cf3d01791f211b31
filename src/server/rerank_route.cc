#include "server/rerank_route.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <random>
#include <variant>

#include "model/embedding.h"
#include "server/openai_response.h"
#include "server/pooled_batch.h"
#include "server/pooling_prompts.h"
#include "server/pooling_request.h"

namespace brisk::server {
namespace {

using Json = nlohmann::ordered_json;

// {id, model, usage, results: [{index, relevance_score, document?}]}, highest score first (ties
// in document order), at most top_n of them (0: all).
Json ResultsJson(const RerankRequest& req, const std::vector<double>& scores,
                 const std::string& model_id, int64_t total_tokens) {
  std::vector<size_t> order(scores.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return scores[a] > scores[b]; });
  if (req.top_n > 0 && size_t(req.top_n) < order.size()) order.resize(size_t(req.top_n));
  Json results = Json::array();
  for (size_t i : order) {
    Json r = {{"index", i}, {"relevance_score", scores[i]}};
    if (req.return_documents) r["document"] = {{"text", req.documents[i]}};
    results.push_back(std::move(r));
  }
  std::mt19937_64 rng{std::random_device{}()};
  return Json{{"id", NewResponseId("rerank-", rng)},
              {"model", model_id},
              {"usage", {{"total_tokens", total_tokens}}},
              {"results", std::move(results)}};
}

}  // namespace

void HandleRerank(ApiServer& server, const LoadedModel& model, HttpRequest&& request,
                  std::shared_ptr<HttpExchange> ex) {
  Engine& engine = *model.engine;
  auto parsed = ParseRerankRequest(request.body, PoolingLimitsOf(server, engine));
  if (auto* err = std::get_if<ApiError>(&parsed)) return ex->Respond(ErrorResponse(*err));
  auto req = std::make_shared<RerankRequest>(std::move(std::get<RerankRequest>(parsed)));
  std::vector<std::vector<int32_t>> prompts;
  int64_t total_tokens = 0;
  for (const std::string& doc : req->documents) {
    prompts.push_back(RerankPrompt(*model.tokenizer, req->instruction, req->query, doc));
    total_tokens += int64_t(prompts.back().size());
  }
  if (auto err = CheckPromptsFit(prompts, engine.config().max_model_len, "documents"))
    return ex->Respond(ErrorResponse(*err));

  auto done = [&server, ex, req, head = model.rerank,
               total_tokens](std::variant<PooledHidden, ApiError> outcome) {
    if (auto* err = std::get_if<ApiError>(&outcome))
      return ex->Respond(PooledErrorResponse(server, *err));
    std::vector<double> scores;
    for (const std::vector<float>& h : std::get<PooledHidden>(outcome))
      scores.push_back(head->Score(h));
    HttpResponse r;
    r.body = ResultsJson(*req, scores, server.options().model_id, total_tokens)
                 .dump(-1, ' ', false, Json::error_handler_t::replace);
    ex->Respond(std::move(r));
  };
  RunPooled(server, engine, std::move(prompts), ex, std::move(done));
}

}  // namespace brisk::server
