#include "server/chat_response_writer.h"

namespace brisk::server {

using Json = nlohmann::ordered_json;

ChatResponseWriter::ChatResponseWriter(WriterOptions options, std::optional<uint64_t> tool_seed)
    : ResponseWriter(std::move(options)) {
  if (tool_seed) tools_.emplace(*tool_seed);
}

std::string ChatResponseWriter::FilterContent(const std::string& text) {
  return tools_ ? tools_->Feed(text, &calls_) : text;
}

std::string ChatResponseWriter::FlushContent() { return tools_ ? tools_->Finish(&calls_) : ""; }

bool ChatResponseWriter::made_tool_calls() const { return tools_ && tools_->calls_emitted() > 0; }

std::string ChatResponseWriter::StreamOpening() { return SseData(ChatRoleChunk(o_.meta)); }

std::string ChatResponseWriter::StreamDelta(const std::string& text,
                                            std::span<const TokenEvent> events) {
  std::string out;
  const bool has_logprobs = o_.logprobs && !events.empty();
  if (!text.empty() || has_logprobs) {
    const Json lp = has_logprobs ? ChatLogprobs(events, o_.token_bytes) : Json(nullptr);
    out = SseData(ChatContentChunk(o_.meta, text, lp));
  }
  for (; calls_sent_ < int(calls_.size()); ++calls_sent_)
    out += SseData(ChatToolCallChunk(o_.meta, calls_sent_, calls_[size_t(calls_sent_)]));
  return out;
}

std::vector<Json> ChatResponseWriter::FinishChunks(const char* finish_reason, const FinishInfo& f) {
  return ChatStreamEnd(o_.meta, finish_reason, f, o_.include_usage);
}

std::string ChatResponseWriter::Body(const std::string& content, std::span<const TokenEvent> events,
                                     const char* finish_reason, const FinishInfo& f) {
  const Json lp = o_.logprobs ? ChatLogprobs(events, o_.token_bytes) : Json(nullptr);
  return ChatCompletion(o_.meta, content, calls_, lp, finish_reason, f)
      .dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace brisk::server
