#include "engine/request_validation.h"

#include <string>

namespace brisk {
namespace {

std::string Indexed(const char* field, size_t i) {
  return std::string(field) + "[" + std::to_string(i) + "]";
}

Status CheckTokenIds(std::span<const int32_t> ids, int n_vocab, const char* field) {
  for (size_t i = 0; i < ids.size(); ++i) {
    BRISK_RETURN_IF_ERROR(CheckTokenId(ids[i], n_vocab, field, Indexed(field, i)));
  }
  return Status::Ok();
}

}  // namespace

Status ValidateGenerationParams(const GenerationRequest& r, const EngineRequestLimits& limits,
                                const SamplingRanges& sampling) {
  BRISK_RETURN_IF_ERROR(CheckInt(kMaxTokensRange, "max_tokens", r.max_tokens));
  BRISK_RETURN_IF_ERROR(CheckInt(kMinTokensRange, "min_tokens", r.min_tokens));
  if (r.min_tokens > r.max_tokens) {
    return Status::InvalidArgument("min_tokens (" + std::to_string(r.min_tokens) +
                                       ") must not exceed max_tokens (" +
                                       std::to_string(r.max_tokens) + ")",
                                   "min_tokens");
  }
  BRISK_RETURN_IF_ERROR(CheckInt(kPromptLogprobsRange, "prompt_logprobs", r.prompt_logprobs));
  if (r.return_hidden && r.max_tokens != 0)
    return Status::InvalidArgument("return_hidden needs max_tokens 0 (a prefill-only request)",
                                   "return_hidden");
  BRISK_RETURN_IF_ERROR(CheckFloat(kTimeoutRange, "timeout_s", r.timeout_s));
  BRISK_RETURN_IF_ERROR(CheckTokenIds(r.stop_token_ids, limits.n_vocab, "stop_token_ids"));
  if (!r.stop.empty() && !limits.has_tokenizer) {
    return Status::FailedPrecondition("stop strings need a tokenizer (none loaded)", "stop");
  }
  return ValidateSamplingParams(r.sampling, limits.n_vocab, sampling);
}

Status ValidatePrompt(std::span<const int32_t> prompt, int max_tokens,
                      const EngineRequestLimits& limits) {
  if (prompt.empty()) return Status::InvalidArgument("the prompt is empty", "prompt");
  BRISK_RETURN_IF_ERROR(CheckTokenIds(prompt, limits.n_vocab, "prompt"));
  return CheckPromptFits(int64_t(prompt.size()), max_tokens, limits.max_model_len);
}

Status ValidateGenerationRequest(const GenerationRequest& r, const EngineRequestLimits& limits) {
  BRISK_RETURN_IF_ERROR(ValidatePrompt(r.prompt, r.max_tokens, limits));
  return ValidateGenerationParams(r, limits);
}

Status CheckPromptFits(int64_t prompt_tokens, int max_tokens, int max_model_len) {
  if (prompt_tokens < max_model_len || (max_tokens == 0 && prompt_tokens == max_model_len))
    return Status::Ok();
  const int64_t total = prompt_tokens + max_tokens;
  return Status::OutOfRange(
      "This model's maximum context length is " + std::to_string(max_model_len) +
      " tokens. However, you requested " + std::to_string(total) + " tokens (" +
      std::to_string(prompt_tokens) + " in the messages, " + std::to_string(max_tokens) +
      " in the completion). Please reduce the length of the messages or completion.");
}

int FitMaxTokens(int64_t prompt_tokens, int max_tokens, int max_model_len) {
  if (prompt_tokens + max_tokens <= max_model_len) return max_tokens;
  return int(max_model_len - prompt_tokens);
}

Status CheckMaxTokensFit(int64_t prompt_tokens, int max_tokens, int max_model_len,
                         std::string_view field) {
  if (prompt_tokens + max_tokens <= max_model_len) return Status::Ok();
  const std::string name(field);
  return Status::OutOfRange("'" + name + "' is too large: " + std::to_string(max_tokens) +
                                ". This model's maximum context length is " +
                                std::to_string(max_model_len) + " tokens and your request has " +
                                std::to_string(prompt_tokens) + " input tokens (" +
                                std::to_string(max_tokens) + " > " + std::to_string(max_model_len) +
                                " - " + std::to_string(prompt_tokens) + ").",
                            name);
}

}  // namespace brisk
