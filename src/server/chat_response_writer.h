// chat.completion / chat.completion.chunk output (ResponseWriter), with tool calls parsed out of
// the content when the request offers tools.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "server/response_writer.h"
#include "server/tool_calls.h"

namespace brisk::server {

class ChatResponseWriter : public ResponseWriter {
 public:
  // tool_seed: the call ids' generator, when the request offers tools (nullopt: no parsing).
  ChatResponseWriter(WriterOptions options, std::optional<uint64_t> tool_seed);

  std::string FilterContent(const std::string& text) override;
  std::string FlushContent() override;
  bool made_tool_calls() const override;

  // The chat.completion.chunk that carries delta.role "assistant".
  std::string StreamOpening() override;
  // A delta.content chunk (logprobs.content per token), then one chunk per finished tool call.
  std::string StreamDelta(const std::string& text, std::span<const TokenEvent> events) override;
  // A chat.completion: message.content, message.tool_calls, logprobs.content.
  std::string Body(const std::string& content, std::span<const TokenEvent> events,
                   const char* finish_reason, const FinishInfo& f) override;

 private:
  std::vector<nlohmann::ordered_json> FinishChunks(const char* finish_reason,
                                                   const FinishInfo& f) override;

  std::optional<ToolCallParser> tools_;
  std::vector<ToolCall> calls_;  // every call so far (streams: sent up to calls_sent_)
  int calls_sent_ = 0;
};

}  // namespace brisk::server
