// The ranges of a generation request, checked in one place (DESIGN §5): Engine::Submit holds every
// request to them, and a server asks the same functions to answer a client's bad request itself,
// naming the offending field (Status::field()). The sampling parameters' ranges live next to the
// sampler (sampler.h); these are the request's own.
#pragma once

#include <cfloat>
#include <climits>
#include <cstdint>
#include <span>
#include <string_view>

#include "engine/param_range.h"
#include "engine/request.h"
#include "engine/sampler.h"
#include "util/status.h"

namespace brisk {

inline constexpr ParamRange kMaxTokensRange = IntRange(0, INT_MAX);  // 0: prefill only
// The chat APIs (OpenAI chat, Anthropic) ask for at least one token; only completions take 0.
inline constexpr ParamRange kChatMaxTokensRange = IntRange(1, INT_MAX);
inline constexpr int kMaxPromptLogprobs = 20;
inline constexpr ParamRange kPromptLogprobsRange = IntRange(-1, kMaxPromptLogprobs);  // -1: none
inline constexpr ParamRange kMinTokensRange = IntRange(0, INT_MAX);  // and <= max_tokens
inline constexpr ParamRange kTimeoutRange = {0, DBL_MAX};            // seconds; 0 = none

// Facts of the loaded engine a request is checked against.
struct EngineRequestLimits {
  int n_vocab = 0;
  int max_model_len = 0;
  bool has_tokenizer = false;  // stop strings need one
};

// Everything but the prompt: max_tokens, min_tokens <= max_tokens, prompt_logprobs, return_hidden
// only with max_tokens 0, the timeout, stop token ids,
// stop strings (failed_precondition without a tokenizer) and the sampling parameters, held to
// `sampling`. Errors are invalid_argument naming the field unless said otherwise.
Status ValidateGenerationParams(const GenerationRequest& r, const EngineRequestLimits& limits,
                                const SamplingRanges& sampling = kSamplerRanges);

// The prompt: not empty, token ids in the vocabulary, and room for max_tokens (see
// CheckPromptFits).
Status ValidatePrompt(std::span<const int32_t> prompt, int max_tokens,
                      const EngineRequestLimits& limits);

// What Engine::Submit checks: the prompt, then the parameters at the sampler's ranges.
Status ValidateGenerationRequest(const GenerationRequest& r, const EngineRequestLimits& limits);

// A prompt must leave room for at least one generated token (a prefill-only request, max_tokens 0,
// may fill the context): out_of_range otherwise, in vLLM's
// wording ("This model's maximum context length is ..."). A prompt that fits but leaves less room
// than max_tokens is fine: generation stops at the context limit (FitMaxTokens).
Status CheckPromptFits(int64_t prompt_tokens, int max_tokens, int max_model_len);
// max_tokens cut to the room a fitting prompt leaves in max_model_len.
int FitMaxTokens(int64_t prompt_tokens, int max_tokens, int max_model_len);
// The API servers' stricter rule for a max_tokens the client gave (OpenAI and vLLM refuse, not
// clamp): prompt + max_tokens must fit in max_model_len, else out_of_range naming `field` (the
// client's name for it, max_tokens or max_completion_tokens) in vLLM's wording, both numbers given.
Status CheckMaxTokensFit(int64_t prompt_tokens, int max_tokens, int max_model_len,
                         std::string_view field = "max_tokens");

}  // namespace brisk
