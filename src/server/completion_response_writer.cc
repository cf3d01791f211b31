#include "server/completion_response_writer.h"

namespace brisk::server {

using Json = nlohmann::ordered_json;

CompletionResponseWriter::CompletionResponseWriter(WriterOptions options, std::string echo,
                                                   int32_t first_prompt_token)
    : ResponseWriter(std::move(options)),
      echo_(std::move(echo)),
      first_prompt_token_(first_prompt_token) {}

void CompletionResponseWriter::SetPromptLogprobs(std::span<const TokenEvent> prompt) {
  prompt_events_.assign(prompt.begin(), prompt.end());
}

Json CompletionResponseWriter::PromptLogprobs() {
  if (first_prompt_token_ < 0) return nullptr;
  return CompletionPromptLogprobs(first_prompt_token_, prompt_events_, o_.token_bytes,
                                  &text_offset_);
}

std::string CompletionResponseWriter::StreamOpening() {
  if (echo_.empty() && first_prompt_token_ < 0) return {};
  return SseData(CompletionChunk(o_.meta, echo_, PromptLogprobs(), nullptr));
}

std::string CompletionResponseWriter::StreamDelta(const std::string& text,
                                                  std::span<const TokenEvent> events) {
  const bool has_logprobs = o_.logprobs && !events.empty();
  if (text.empty() && !has_logprobs) return {};
  const Json lp =
      has_logprobs ? CompletionLogprobs(events, o_.token_bytes, &text_offset_) : Json(nullptr);
  return SseData(CompletionChunk(o_.meta, text, lp, nullptr));
}

std::vector<Json> CompletionResponseWriter::FinishChunks(const char* finish_reason,
                                                         const FinishInfo& f) {
  return CompletionStreamEnd(o_.meta, finish_reason, f, o_.include_usage);
}

std::string CompletionResponseWriter::Body(const std::string& content,
                                           std::span<const TokenEvent> events,
                                           const char* finish_reason, const FinishInfo& f) {
  Json lp = PromptLogprobs();
  if (o_.logprobs)
    AppendCompletionLogprobs(lp, CompletionLogprobs(events, o_.token_bytes, &text_offset_));
  return TextCompletion(o_.meta, echo_ + content, lp, finish_reason, f)
      .dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace brisk::server
