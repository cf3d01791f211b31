// The engine side of the pooling routes (/v1/embeddings, /v1/rerank): every prompt of a request
// becomes a prefill-only engine request (max_tokens 0, return_hidden) and all are submitted as one
// group (Engine::SubmitAll), so the scheduler runs them as one batch as far as its token budget
// allows, and equal inputs are computed once. What comes
// back per prompt is the final-normed hidden state of its last token (FinishInfo::hidden). The
// first failure ends the whole request and cancels the rest; a client that goes away cancels
// everything.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "engine/engine.h"
#include "server/api_error.h"
#include "server/api_server.h"
#include "server/http_server.h"
#include "server/pooling_request.h"

namespace brisk::server {

// One hidden state (n_embd floats) per prompt, in the prompts' order.
using PooledHidden = std::vector<std::vector<float>>;
// Called exactly once: with every prompt's hidden state, or with the first failure. It runs on
// the engine thread (the last finish), or on the caller's when a submission is refused; it must
// be quick (build the body and Respond).
using PooledDone = std::function<void(std::variant<PooledHidden, ApiError>)>;

// Submits the prompts (each already checked against the context length) and arranges `done`.
// Counts as one generation for the server's drain bookkeeping.
void RunPooled(ApiServer& server, Engine& engine, std::vector<std::vector<int32_t>> prompts,
               const std::shared_ptr<HttpExchange>& ex, PooledDone done);

// The limits the pooling parsers check against: the model's width and vocabulary, the served id.
PoolingLimits PoolingLimitsOf(const ApiServer& server, const Engine& engine);

// Every prompt fits the context (prefill only: its length may equal it); else out_of_range naming
// the first that does not ("input[3]").
std::optional<ApiError> CheckPromptsFit(const std::vector<std::vector<int32_t>>& prompts,
                                        int max_model_len, const std::string& field);

// The error's response; a 429 (the engine's queue is full) carries Retry-After and is counted as
// a rejection, as on the generation routes.
HttpResponse PooledErrorResponse(ApiServer& server, const ApiError& e);

}  // namespace brisk::server
