// POST /v1/embeddings (and /embeddings), OpenAI's shape (docs/embeddings.md): each input is
// tokenised (text + <|endoftext|>, or the client's token ids as given), all run as one engine
// batch, and each embedding is the final-normed hidden state of the input's last token,
// truncated to `dimensions` and L2-normalised. Served only by a model with pooling "last"
// (ApiServer refuses the route otherwise).
#pragma once

#include <memory>

#include "server/api_server.h"
#include "server/http_server.h"

namespace brisk::server {

void HandleEmbeddings(ApiServer& server, const LoadedModel& model, HttpRequest&& request,
                      std::shared_ptr<HttpExchange> ex);

}  // namespace brisk::server
