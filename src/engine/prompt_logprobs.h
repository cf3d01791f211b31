// Scoring a given token under a logits row (prompt logprobs, DESIGN §6): the raw model
// distribution at temperature 1, as vLLM's prompt_logprobs and OpenAI's echo + logprobs report it;
// no sampling parameter applies to tokens the client wrote.
#pragma once

#include <cstdint>

#include "engine/request.h"

namespace brisk {

// The log-probability of `token` under softmax(logits) and the `top` most likely tokens (most
// likely first; equal logits: lower id first). NaN logits count as -inf. `logits` is read only.
TokenEvent ScoreToken(const float* logits, int n_vocab, int32_t token, int top);

}  // namespace brisk
