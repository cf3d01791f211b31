// The "process outputs" phase of an engine step (after the model ran and tokens were sampled):
// each sampled token is appended to its request, turned into text (stop strings held back), handed
// to the request's sink, and checked against the request's end conditions. Plain data in, plain
// decisions out: the engine applies the decisions (frees blocks, tells sinks the finish), so a
// test can drive this phase from a hand-made batch result without a model.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/request_state.h"

namespace brisk {

// A request that ends this step, and why.
struct FinishDecision {
  RequestState* request = nullptr;
  FinishReason reason = FinishReason::kStop;
  std::string message;       // errors
  std::string stop_matched;  // the stop string that ended it, or ""
};

struct OutputRules {
  std::span<const int32_t> eog_ids;  // end-of-generation ids (the tokenizer's)
  int max_model_len = 0;             // prompt + generated tokens
};

// Applies results[i] (token -1: no token was allowed, the request fails) to sampled[i] at time
// `now`, emitting one TokenEvent per token. Returns the requests that end, in batch order.
std::vector<FinishDecision> ProcessOutputs(std::span<RequestState* const> sampled,
                                           std::span<const SampleResult> results, double now,
                                           const OutputRules& rules);

// The same for one request; nullopt while it goes on.
std::optional<FinishDecision> ProcessOutput(RequestState& r, const SampleResult& result, double now,
                                            const OutputRules& rules);

}  // namespace brisk
