// The conversation of a chat request (DESIGN §4 "Chat templates", §6): checking and normalising
// the client's `messages`, `tools` and `tool_choice` (called by ParseChatRequest), and rendering
// them into the prompt text with the model's chat template, the way HF's apply_chat_template is
// called by vLLM / llama-server.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "server/api_error.h"
#include "server/openai_request.h"
#include "tokenizer/jinja/chat_template.h"
#include "util/status.h"

namespace brisk::server {

// Most tools one request may offer (OpenAI's limit; the Anthropic route holds its tools to it too).
inline constexpr size_t kMaxTools = 128;

// Validates `messages` (a non-empty array of at most max_messages objects) and writes the
// normalised copy described at OpenAiRequest::messages to *out. Errors name the offending field
// ("messages[2].role", "messages[0].content[1].type").
std::optional<ApiError> ParseMessages(const nlohmann::ordered_json& messages, size_t max_messages,
                                      nlohmann::ordered_json* out);

// Validates `tools` (an array of {"type": "function", "function": {"name", "description"?,
// "parameters"?}}; null when absent or null) and `tool_choice` ("none", "auto", "required" or
// {"type": "function", "function": {"name"}}; nullptr when absent). *tools_out: the tools as sent
// (null when there are none); *choice_out: the mode or the named function.
std::optional<ApiError> ParseTools(const nlohmann::ordered_json* tools,
                                   const nlohmann::ordered_json* tool_choice,
                                   nlohmann::ordered_json* tools_out, std::string* choice_out);

// The prompt text for a chat request: messages (assistant tool calls' `function.arguments` JSON
// strings become objects, as HF templates expect), tools (none for tool_choice "none"; only the
// named one for a named tool_choice), the request's add_generation_prompt, chat_template_kwargs as
// extra variables; with continue_final_message the text ends right after the final message's
// text, as HF does it. Errors: the template's own (raise_exception, limits); a template that does
// not render the final text as sent cannot continue it (field continue_final_message).
Result<std::string> RenderChatPrompt(const jinja::ChatTemplate& tmpl, const OpenAiRequest& request);

}  // namespace brisk::server
