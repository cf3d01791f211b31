// The response side of OpenAI's Responses API: the `response` object, its output items (a
// `message` with `output_text` parts, `function_call`s), usage, and the typed events of a stream,
// shaped as the official SDKs read them (openai-node's Response and ResponseStreamEvent types).
// Pure builders, like openai_response.h: the writer (responses_response_writer.h) decides when
// each is sent and numbers the events.
//
// A stream is: response.created and response.in_progress (the response, status in_progress, no
// output); per message response.output_item.added, response.content_part.added,
// response.output_text.delta..., response.output_text.done, response.content_part.done,
// response.output_item.done; per function call response.output_item.added,
// response.function_call_arguments.delta, response.function_call_arguments.done,
// response.output_item.done; then response.completed or response.incomplete (the whole response),
// or response.failed. Each event is one SSE event with an `event:` line equal to its `type` and a
// `sequence_number`; there is no [DONE].
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "engine/request.h"
#include "server/api_error.h"
#include "server/openai_response.h"
#include "server/tool_calls.h"

namespace brisk::server {

// {input_tokens, input_tokens_details: {cached_tokens}, output_tokens, output_tokens_details:
// {reasoning_tokens: 0}, total_tokens}.
nlohmann::ordered_json ResponsesUsage(const Usage& u);

// "completed", or "incomplete" when the answer ran into max_output_tokens (or the context's end);
// nullptr when the request did not end normally (the response failed).
const char* ResponseStatusOf(const FinishInfo& f);
// {reason: "max_output_tokens"} for an incomplete response, else null.
nlohmann::ordered_json IncompleteDetails(const FinishInfo& f);

// Output items. status: "in_progress", "completed" or "incomplete".
nlohmann::ordered_json OutputTextPart(std::string_view text);  // annotations and logprobs: []
// A message item; `with_text` false gives the empty content of response.output_item.added.
nlohmann::ordered_json MessageItem(const std::string& id, std::string_view text, const char* status,
                                   bool with_text = true);
// {type: function_call, id, call_id, name, arguments, status}; arguments "" while in progress.
nlohmann::ordered_json FunctionCallItem(const std::string& id, const ToolCall& call,
                                        const char* status);

// The response object: id, object, created_at, status, error, incomplete_details, the request's
// settings (ResponsesRequest::settings), model, output, usage (null while in progress).
nlohmann::ordered_json ResponseObject(const ResponseMeta& m, const nlohmann::ordered_json& settings,
                                      const char* status, nlohmann::ordered_json output,
                                      nlohmann::ordered_json usage,
                                      nlohmann::ordered_json incomplete_details,
                                      nlohmann::ordered_json error);

// An event: {type, ...fields}; the writer adds sequence_number.
nlohmann::ordered_json ResponsesEvent(const char* type, nlohmann::ordered_json fields);

// One named SSE event: "event: <its type>\ndata: <compact JSON>\n\n".
std::string ResponsesSseEvent(const nlohmann::ordered_json& event);

}  // namespace brisk::server
