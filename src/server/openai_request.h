// The request side of the OpenAI protocol (DESIGN §6 "Request fields", "Errors"): a request body
// of POST /v1/chat/completions or /v1/completions becomes a validated OpenAiRequest or an ApiError
// whose message, type, param and code match what OpenAI / vLLM clients expect. Pure functions: no
// tokenizer, no engine. Prompt-length checks need the token count and happen later
// (CheckPromptLength).
//
// Accepted: OpenAI's fields plus the llama-server / vLLM extensions brisk supports (top_k, min_p,
// repetition_penalty alias repeat_penalty, min_tokens, ignore_eos, priority, stop_token_ids,
// chat_template_kwargs, add_generation_prompt, continue_final_message, mode). Unknown fields are
// ignored (clients send extras). `null` for an optional field means "not given", as the OpenAI SDKs
// do.
#pragma once

#include <climits>
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
  // max_tokens of a request that gives none, cut to the room its prompt leaves; 0 = no cap: up to
  // the end of the context, as vLLM does.
  int default_max_tokens = 0;
  size_t max_messages = 512;
  size_t max_stop = 4;
};

// gen.max_tokens of a request without max_tokens on a server without a default: no cap but the
// context.
inline constexpr int kNoMaxTokensCap = INT_MAX;

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
  // chat (vLLM's fields): open a new assistant turn after the messages, or continue the final
  // assistant message (its text is left open: prefill). Never both.
  bool add_generation_prompt = true, continue_final_message = false;
  // completions: one prompt, or several (a batched prompt: an array of strings or of token-id
  // arrays); each is text or token ids.
  struct Prompt {
    std::string text;
    std::vector<int32_t> tokens;  // given as token ids (text is empty)
  };
  std::vector<Prompt> prompts;
  int n = 1;              // choices per prompt
  GenerationRequest gen;  // sampling/max_tokens/min_tokens/ignore_eos/stop/priority; no prompt
  // The field the client's max_tokens came from ("max_tokens", "max_completion_tokens"); "" when
  // it gave none and gen.max_tokens is a default (a preset's, the server's, or kNoMaxTokensCap).
  std::string max_tokens_field;
  bool stream = false, include_usage = false, echo = false;
  StructuredOutput structured;  // response_format json_object / json_schema, guided_*, grammar
  std::string mode;             // "", "qa", "code", "copywriting"
  std::string user;
};

// Choices one request may ask for (n x prompts): each is an engine request.
inline constexpr int kMaxChoices = 128;

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

// After tokenising, the max_tokens the engine gets (*max_tokens). A prompt of max_model_len tokens
// or more is refused (400, "context_length_exceeded"). A max_tokens the client gave must fit
// beside the prompt, else the same 400 naming its field, as OpenAI and vLLM answer; a default is
// cut to the room left, so a request without max_tokens may run to the end of the context.
std::optional<ApiError> CheckPromptLength(int prompt_tokens, const OpenAiRequest& request,
                                          int max_model_len, int* max_tokens);

// Tool calls are parsed out of the output only when the request offers tools and allows them.
inline bool ToolCallsEnabled(const OpenAiRequest& r) {
  return r.chat && r.tools.is_array() && !r.tools.empty() && r.tool_choice != "none";
}

}  // namespace brisk::server
