// The request side of OpenAI's Responses API (POST /v1/responses, docs/responses-api.md): a body
// becomes the same OpenAiRequest the chat route builds, so one chat template, tokenizer and
// engine path serves it, plus what only this API has (instructions, store, previous_response_id,
// the settings its response object repeats). Pure functions: the stored conversation of a
// previous response is looked up by the route and joined here (AssembleConversation).
//
// The conversion, item by item:
//   input "text"                            -> one "user" message
//   {role: user|system|developer|assistant, content: string | [input_text | output_text |
//    refusal parts]} (type "message" or none) -> a message of that role (developer -> system;
//                                              parts joined with "\n")
//   {type: function_call, call_id, name, arguments}
//                                           -> a tool call of the assistant message right before
//                                              it (a new assistant message when there is none)
//   {type: function_call_output, call_id, output}
//                                           -> a "tool" message (tool_call_id = call_id)
//   instructions                            -> a leading "system" message (never stored)
//   tools [{type: function, name, description, parameters, strict}]
//                                           -> the chat route's function tools
//   tool_choice none|auto|required|{type: function, name}, parallel_tool_calls, temperature,
//   top_p, max_output_tokens, text.format (text | json_object | json_schema), stream, seed as the
//   chat route's fields.
// Refused with a 400 naming the field (never silently ignored, since each would change the
// answer): built-in tools, image / file / audio inputs, reasoning and item_reference items,
// reasoning effort or summaries, include other than reasoning.encrypted_content, background,
// conversation, prompt templates, max_tool_calls, top_logprobs, truncation "auto". Unknown
// top-level fields are ignored, as on the other routes.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <variant>

#include "server/api_error.h"
#include "server/openai_request.h"

namespace brisk::server {

struct ResponsesRequest {
  // The chat route's request; its messages are set by AssembleConversation.
  OpenAiRequest chat;
  // This request's input as chat messages (without the instructions).
  nlohmann::ordered_json input = nlohmann::ordered_json::array();
  std::string instructions;          // "" = none
  std::string previous_response_id;  // "" = none
  bool store = true;
  // What the response object repeats of the request: instructions, max_output_tokens,
  // metadata, parallel_tool_calls, previous_response_id, store, temperature, text, tool_choice,
  // tools, top_p, truncation, user (only when given).
  nlohmann::ordered_json settings = nlohmann::ordered_json::object();
};

std::variant<ResponsesRequest, ApiError> ParseResponsesRequest(std::string_view body,
                                                               const RequestLimits& limits);

// r->chat.messages = the instructions (a system message, when given) + `history` (a previous
// response's stored conversation, or nullptr) + r->input.
void AssembleConversation(const nlohmann::ordered_json* history, ResponsesRequest* r);

}  // namespace brisk::server
