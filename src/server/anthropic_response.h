// The response side of Anthropic's Messages API: the JSON of a `message`, its content blocks,
// usage, and the events of a stream, shaped as Anthropic's SDKs read them. Pure builders, like
// openai_response.h: the writer (anthropic_response_writer.h) decides when each is sent.
//
// A stream is: message_start (the message with empty content and the input usage), then per
// content block content_block_start, content_block_delta (text_delta, or input_json_delta for a
// tool_use block's input), content_block_stop; then message_delta (stop_reason, stop_sequence,
// usage.output_tokens) and message_stop. Each is one SSE event named by its `type`
// (AnthropicSseEvent); there is no [DONE].
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "engine/request.h"
#include "server/openai_response.h"
#include "server/tool_calls.h"

namespace brisk::server {

// "end_turn", "stop_sequence" (a stop string matched), "tool_use" (calls were emitted) or
// "max_tokens"; nullptr when the request did not end normally (the server answers with an error).
const char* AnthropicStopReason(const FinishInfo& f, bool tool_use);
// The matched stop string when the stop reason is "stop_sequence", else null.
nlohmann::ordered_json AnthropicStopSequence(const FinishInfo& f, bool tool_use);

// {input_tokens, output_tokens}.
nlohmann::ordered_json AnthropicUsage(int input_tokens, int output_tokens);

// Content blocks: {type: "text", text} and {type: "tool_use", id, name, input}; the input is
// the call's arguments as JSON (an object when the model wrote one), or {} in a stream's
// content_block_start, whose input follows as input_json_delta.
nlohmann::ordered_json AnthropicTextBlock(std::string_view text);
nlohmann::ordered_json AnthropicToolUseBlock(const ToolCall& call, bool with_input = true);

// A whole message: text (one block, none when empty) then one tool_use block per call.
nlohmann::ordered_json AnthropicMessage(const ResponseMeta& m, std::string_view text,
                                        const std::vector<ToolCall>& calls, const FinishInfo& f);

// Stream events.
nlohmann::ordered_json MessageStartEvent(const ResponseMeta& m, int input_tokens);
nlohmann::ordered_json ContentBlockStartEvent(int index, nlohmann::ordered_json block);
nlohmann::ordered_json TextDeltaEvent(int index, std::string_view text);
nlohmann::ordered_json InputJsonDeltaEvent(int index, std::string_view partial_json);
nlohmann::ordered_json ContentBlockStopEvent(int index);
nlohmann::ordered_json MessageDeltaEvent(const FinishInfo& f, bool tool_use);
nlohmann::ordered_json MessageStopEvent();

// One named SSE event: "event: <its type>\ndata: <compact JSON>\n\n" (invalid UTF-8 replaced).
std::string AnthropicSseEvent(const nlohmann::ordered_json& event);

}  // namespace brisk::server
