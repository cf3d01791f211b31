#include "server/anthropic_response.h"

#include <utility>

#include "server/openai_request.h"

namespace brisk::server {

using Json = nlohmann::ordered_json;

const char* AnthropicStopReason(const FinishInfo& f, bool tool_use) {
  switch (f.reason) {
    case FinishReason::kStop:
      if (tool_use) return "tool_use";
      return f.stop_matched.empty() ? "end_turn" : "stop_sequence";
    case FinishReason::kLength:
      return "max_tokens";
    default:
      return nullptr;
  }
}

Json AnthropicStopSequence(const FinishInfo& f, bool tool_use) {
  const char* reason = AnthropicStopReason(f, tool_use);
  if (reason && std::string_view(reason) == "stop_sequence") return Json(f.stop_matched);
  return nullptr;
}

Json AnthropicUsage(int input_tokens, int output_tokens) {
  return Json{{"input_tokens", input_tokens}, {"output_tokens", output_tokens}};
}

Json AnthropicTextBlock(std::string_view text) { return Json{{"type", "text"}, {"text", text}}; }

Json AnthropicToolUseBlock(const ToolCall& call, bool with_input) {
  Json input = Json::object();
  // The parser's arguments are compact JSON it wrote itself; the depth check guards the parse all
  // the same (a model's output is untrusted).
  if (with_input && JsonDepthWithin(call.arguments, kMaxJsonDepth)) {
    Json parsed = Json::parse(call.arguments, nullptr, /*allow_exceptions=*/false);
    if (!parsed.is_discarded()) input = std::move(parsed);
  }
  return Json{{"type", "tool_use"}, {"id", call.id}, {"name", call.name}, {"input", input}};
}

Json AnthropicMessage(const ResponseMeta& m, std::string_view text,
                      const std::vector<ToolCall>& calls, const FinishInfo& f) {
  const bool tool_use = !calls.empty();
  Json content = Json::array();
  if (!text.empty()) content.push_back(AnthropicTextBlock(text));
  for (const ToolCall& c : calls) content.push_back(AnthropicToolUseBlock(c));
  const char* reason = AnthropicStopReason(f, tool_use);
  return Json{{"id", m.id},
              {"type", "message"},
              {"role", "assistant"},
              {"model", m.model},
              {"content", std::move(content)},
              {"stop_reason", reason ? Json(reason) : Json(nullptr)},
              {"stop_sequence", AnthropicStopSequence(f, tool_use)},
              {"usage", AnthropicUsage(f.usage.prompt_tokens, f.usage.completion_tokens)}};
}

Json MessageStartEvent(const ResponseMeta& m, int input_tokens) {
  Json message = {{"id", m.id},
                  {"type", "message"},
                  {"role", "assistant"},
                  {"model", m.model},
                  {"content", Json::array()},
                  {"stop_reason", nullptr},
                  {"stop_sequence", nullptr},
                  {"usage", AnthropicUsage(input_tokens, 0)}};
  return Json{{"type", "message_start"}, {"message", std::move(message)}};
}

Json ContentBlockStartEvent(int index, Json block) {
  return Json{
      {"type", "content_block_start"}, {"index", index}, {"content_block", std::move(block)}};
}

Json TextDeltaEvent(int index, std::string_view text) {
  return Json{{"type", "content_block_delta"},
              {"index", index},
              {"delta", {{"type", "text_delta"}, {"text", text}}}};
}

Json InputJsonDeltaEvent(int index, std::string_view partial_json) {
  return Json{{"type", "content_block_delta"},
              {"index", index},
              {"delta", {{"type", "input_json_delta"}, {"partial_json", partial_json}}}};
}

Json ContentBlockStopEvent(int index) {
  return Json{{"type", "content_block_stop"}, {"index", index}};
}

Json MessageDeltaEvent(const FinishInfo& f, bool tool_use) {
  const char* reason = AnthropicStopReason(f, tool_use);
  return Json{{"type", "message_delta"},
              {"delta",
               {{"stop_reason", reason ? Json(reason) : Json(nullptr)},
                {"stop_sequence", AnthropicStopSequence(f, tool_use)}}},
              {"usage", {{"output_tokens", f.usage.completion_tokens}}}};
}

Json MessageStopEvent() { return Json{{"type", "message_stop"}}; }

std::string AnthropicSseEvent(const Json& event) {
  auto type = event.find("type");
  std::string s = "event: ";
  s += type != event.end() && type->is_string() ? type->get<std::string>() : "message";
  s += "\n";
  s += SseData(event);
  return s;
}

}  // namespace brisk::server
