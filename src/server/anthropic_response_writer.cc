#include "server/anthropic_response_writer.h"

#include "server/anthropic_response.h"

namespace brisk::server {

using Json = nlohmann::ordered_json;

AnthropicResponseWriter::AnthropicResponseWriter(WriterOptions options, int input_tokens,
                                                 std::optional<uint64_t> tool_seed)
    : ResponseWriter(std::move(options)), input_tokens_(input_tokens) {
  if (tool_seed) tools_.emplace(*tool_seed, "toolu_");
}

std::string AnthropicResponseWriter::FilterContent(const std::string& text) {
  return tools_ ? tools_->Feed(text, &calls_) : text;
}

std::string AnthropicResponseWriter::FlushContent() {
  return tools_ ? tools_->Finish(&calls_) : "";
}

bool AnthropicResponseWriter::made_tool_calls() const {
  return tools_ && tools_->calls_emitted() > 0;
}

std::string AnthropicResponseWriter::StreamOpening() {
  return Frame(MessageStartEvent(o_.meta, input_tokens_));
}

std::string AnthropicResponseWriter::CloseTextBlock() {
  if (!text_open_) return {};
  text_open_ = false;
  return Frame(ContentBlockStopEvent(next_index_ - 1));
}

std::string AnthropicResponseWriter::ToolUseEvents(const ToolCall& call) {
  std::string out = CloseTextBlock();
  const int index = next_index_++;
  out += Frame(ContentBlockStartEvent(index, AnthropicToolUseBlock(call, /*with_input=*/false)));
  out += Frame(InputJsonDeltaEvent(index, call.arguments));
  out += Frame(ContentBlockStopEvent(index));
  return out;
}

std::string AnthropicResponseWriter::StreamDelta(const std::string& text,
                                                 std::span<const TokenEvent> /*events*/) {
  std::string out;
  if (!text.empty()) {
    if (!text_open_) {
      out += Frame(ContentBlockStartEvent(next_index_++, AnthropicTextBlock("")));
      text_open_ = true;
    }
    out += Frame(TextDeltaEvent(next_index_ - 1, text));
  }
  for (; calls_sent_ < calls_.size(); ++calls_sent_) out += ToolUseEvents(calls_[calls_sent_]);
  return out;
}

std::vector<Json> AnthropicResponseWriter::FinishChunks(const char* /*finish_reason*/,
                                                        const FinishInfo& f) {
  std::vector<Json> out;
  if (text_open_) {
    out.push_back(ContentBlockStopEvent(next_index_ - 1));
    text_open_ = false;
  }
  out.push_back(MessageDeltaEvent(f, made_tool_calls()));
  out.push_back(MessageStopEvent());
  return out;
}

std::string AnthropicResponseWriter::Frame(const Json& event) const {
  return AnthropicSseEvent(event);
}

std::string AnthropicResponseWriter::Body(const std::string& content,
                                          std::span<const TokenEvent> /*events*/,
                                          const char* /*finish_reason*/, const FinishInfo& f) {
  return AnthropicMessage(o_.meta, content, calls_, f)
      .dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace brisk::server
