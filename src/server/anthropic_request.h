// The request side of Anthropic's Messages API (POST /v1/messages and
// /v1/messages/count_tokens): a body becomes the same OpenAiRequest the chat route builds, so one
// chat template, tokenizer and engine path serves both APIs. Pure functions: no tokenizer, no
// engine; prompt-length checks happen later, as for chat (CheckPromptLength).
//
// The conversion, block by block:
//   system (a string or text blocks)      -> a leading "system" message (none when empty)
//   user text blocks                      -> a "user" message (texts joined with "\n")
//   user tool_result {tool_use_id, content, is_error}
//                                         -> a "tool" message (tool_call_id; is_error prefixes
//                                            the content with "Error: ")
//   assistant text + tool_use {id, name, input}
//                                         -> one "assistant" message with tool_calls whose
//                                            function.arguments is the input as a JSON string
//   tools [{name, description, input_schema}] -> [{type: "function", function: {name,
//                                            description, parameters}}]
//   tool_choice auto | any | tool{name} | none -> "auto" | "required" | the name | "none"
//   max_tokens (required), stop_sequences, temperature, top_p, top_k, stream as themselves;
//   metadata is checked and ignored.
// Refused with a 400 naming the field: image and document blocks, server tools, a final
// assistant message (prefill), the "system" role inside messages. Unknown top-level fields are
// ignored, as on the OpenAI routes.
#pragma once

#include <string_view>
#include <variant>

#include "server/api_error.h"
#include "server/openai_request.h"

namespace brisk::server {

// POST /v1/messages.
std::variant<OpenAiRequest, ApiError> ParseAnthropicRequest(std::string_view body,
                                                            const RequestLimits& limits);

// POST /v1/messages/count_tokens: model, system, messages, tools, tool_choice (max_tokens is not
// needed; sampling fields are ignored).
std::variant<OpenAiRequest, ApiError> ParseAnthropicCountTokens(std::string_view body,
                                                                const RequestLimits& limits);

}  // namespace brisk::server
