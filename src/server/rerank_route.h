// POST /v1/rerank and /rerank (Jina's and Cohere's shape, as vLLM serves it; docs/embeddings.md):
// each document is paired with the query in Qwen3-Reranker's prompt, all pairs run as one engine
// batch, and each score is P("yes") from the final-normed hidden state of the pair's last token
// (RerankHead). Results come sorted by score, highest first. Served only by a model with pooling
// "rank" (ApiServer refuses the route otherwise).
#pragma once

#include <memory>

#include "server/api_server.h"
#include "server/http_server.h"

namespace brisk::server {

void HandleRerank(ApiServer& server, const LoadedModel& model, HttpRequest&& request,
                  std::shared_ptr<HttpExchange> ex);

}  // namespace brisk::server
