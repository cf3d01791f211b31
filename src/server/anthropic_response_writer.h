// Anthropic Messages output (ResponseWriter): a `message` body, or a stream of named events
// (anthropic_response.h) in which text arrives as one text block per run of text and each tool
// call the parser completes as a tool_use block whose input comes whole in one input_json_delta.
// Tool calls are parsed out of the content when the request offers tools, as for chat.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "server/response_writer.h"
#include "server/tool_calls.h"

namespace brisk::server {

class AnthropicResponseWriter : public ResponseWriter {
 public:
  // input_tokens: the prompt's length (message_start reports it before the engine's usage
  // exists); tool_seed: the tool_use ids' generator when the request offers tools (nullopt: no
  // parsing).
  AnthropicResponseWriter(WriterOptions options, int input_tokens,
                          std::optional<uint64_t> tool_seed);

  std::string FilterContent(const std::string& text) override;
  std::string FlushContent() override;
  bool made_tool_calls() const override;
  ErrorShape error_shape() const override { return ErrorShape::kAnthropic; }

  // message_start.
  std::string StreamOpening() override;
  // Text: content_block_start (when no text block is open) and a text_delta; then each newly
  // completed call as a whole tool_use block (start, input_json_delta, stop).
  std::string StreamDelta(const std::string& text, std::span<const TokenEvent> events) override;
  // The message: a text block (when there is text) and the tool_use blocks.
  std::string Body(const std::string& content, std::span<const TokenEvent> events,
                   const char* finish_reason, const FinishInfo& f) override;

 private:
  // content_block_stop of an open text block, message_delta, message_stop. The stop reason is
  // Anthropic's own (AnthropicStopReason), not the OpenAI finish_reason passed in.
  std::vector<nlohmann::ordered_json> FinishChunks(const char* finish_reason,
                                                   const FinishInfo& f) override;
  // "event: <type>\ndata: ...": Anthropic names every event; its stream has no [DONE].
  std::string Frame(const nlohmann::ordered_json& event) const override;
  std::string_view Terminator() const override { return {}; }

  std::string CloseTextBlock();  // the stop event of an open text block, else ""
  std::string ToolUseEvents(const ToolCall& call);

  const int input_tokens_;
  std::optional<ToolCallParser> tools_;
  std::vector<ToolCall> calls_;  // every call so far (streams: sent up to calls_sent_)
  size_t calls_sent_ = 0;
  int next_index_ = 0;      // the index of the next content block
  bool text_open_ = false;  // block next_index_ - 1 is a text block not yet stopped
};

}  // namespace brisk::server
