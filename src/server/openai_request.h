// The request side of the OpenAI protocol (DESIGN §6 "Request fields", "Errors"): a request body
// of POST /v1/chat/completions or /v1/completions becomes a validated OpenAiRequest or an ApiError
// whose message, type, param and code match what OpenAI / vLLM clients expect. Pure functions: no
// tokenizer, no engine. Prompt-length checks need the token count and happen later
// (CheckPromptLength).
//
// Accepted: OpenAI's fields plus the llama-server / vLLM extensions brisk supports (top_k, min_p,
// repetition_penalty alias repeat_penalty, min_tokens, ignore_eos, priority, stop_token_ids,
// chat_template_kwargs, mode). Unknown fields are ignored (clients send extras). `null` for an
// optional field means "not given", as the OpenAI SDKs do.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "engine/request.h"
#include "server/api_error.h"
#include "server/structured_request.h"

namespace brisk::server {

struct RequestLimits {
  int max_model_len = 0;
  int n_vocab = 0;
  std::string model_id;  // served model name
  int default_max_tokens = 256;
  size_t max_messages = 512;
  size_t max_stop = 4;
};

struct OpenAiRequest {
  bool chat = true;  // /v1/chat/completions vs /v1/completions
  std::string model;
  // chat: validated; each message is rebuilt with the known keys only (role, content, name,
  // tool_calls, tool_call_id, reasoning_content); content is always a string (text parts joined
  // with "\n", null -> ""), so templates can concatenate it. "developer" (OpenAI's newer name for
  // the system role) becomes "system".
  nlohmann::ordered_json messages;
  nlohmann::ordered_json tools;                 // chat: a non-empty array, or null
  std::string tool_choice = "auto";             // "none" | "auto" | "required" | a function name
  bool parallel_tool_calls = true;              // several calls in one answer
  nlohmann::ordered_json chat_template_kwargs;  // chat: an object or null (e.g. enable_thinking)
  std::string prompt;                           // completions: text prompt (string or [string])
  std::vector<int32_t> prompt_tokens;  // completions: prompt given as token ids (prompt is empty)
  GenerationRequest gen;  // sampling/max_tokens/min_tokens/ignore_eos/stop/priority; no prompt
  bool stream = false, include_usage = false, echo = false;
  StructuredOutput structured;  // response_format json_object / json_schema, guided_*, grammar
  std::string mode;             // "", "qa", "code", "copywriting"
  std::string user;
};

// Nesting deeper than this is refused before parsing (everything downstream may recurse).
inline constexpr int kMaxJsonDepth = 64;

// True when the arrays/objects of the JSON text `s` nest at most max_depth deep (a scan that
// skips strings; the text need not be valid JSON).
bool JsonDepthWithin(std::string_view s, int max_depth);
// "null", "boolean", "integer", "number", "string", "array", "object": for error messages.
std::string JsonTypeName(const nlohmann::ordered_json& v);

std::variant<OpenAiRequest, ApiError> ParseChatRequest(std::string_view body,
                                                       const RequestLimits& limits);
std::variant<OpenAiRequest, ApiError> ParseCompletionRequest(std::string_view body,
                                                             const RequestLimits& limits);

// After tokenising: a prompt of max_model_len tokens or more is refused (400,
// "context_length_exceeded", vLLM's wording). A prompt that fits but leaves less room than
// max_tokens is not an error: *clamped_max_tokens gets the room left (max_model_len - prompt),
// else max_tokens itself.
std::optional<ApiError> CheckPromptLength(int prompt_tokens, int max_tokens, int max_model_len,
                                          int* clamped_max_tokens);

// Tool calls are parsed out of the output only when the request offers tools and allows them.
inline bool ToolCallsEnabled(const OpenAiRequest& r) {
  return r.chat && r.tools.is_array() && !r.tools.empty() && r.tool_choice != "none";
}

}  // namespace brisk::server
