// Error results (DESIGN §6 "Errors"): an HTTP status plus, in OpenAI's shape,
// {"error": {"message", "type", "param", "code"}}, or on the Anthropic routes (/v1/messages) in
// Anthropic's, {"type": "error", "error": {"type", "message"}}. Every route turns a failed Status
// into one with ToApiError, so the HTTP status and both APIs' error types follow the Status code
// (one table, api_error.cc), never the message text; clients see one error shape per API whatever
// failed.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "server/http_server.h"
#include "util/status.h"

namespace brisk::server {

struct ApiError {
  int status = 400;
  std::string type = "invalid_request_error";  // authentication_error, not_found_error, ...
  // Anthropic's type for the same failure (api_error, overloaded_error, ...): the table's too.
  std::string anthropic_type = "invalid_request_error";
  std::string message;
  std::string param;  // offending field ("messages[2].role"), or "" (JSON null)
  std::string code;   // machine-readable code ("context_length_exceeded"), or "" (JSON null)
};

// Which API's error body a route answers with.
enum class ErrorShape { kOpenAi, kAnthropic };

// The table: HTTP status, OpenAI error type, default machine code and Anthropic error type of each
// StatusCode. `code` replaces the default machine code when given; param is the Status's field.
ApiError ToApiError(const Status& s, std::string code = {});

// Shorthands: ToApiError(Status::InvalidArgument(message, param), code).
ApiError BadRequest(std::string message, std::string param = {}, std::string code = {});
// Errors that are facts of HTTP rather than a Status (405, 413, 431, a malformed request):
// invalid_request_error with that status; 5xx become server_error. The Anthropic type of these
// bare statuses comes from the same table (AnthropicErrorType).
ApiError HttpError(int status, std::string message, std::string code = {});
// Errors that end a generation already under way (generation_sink.cc, by finish reason) and
// bench report failures; prefer ToApiError for anything that starts as a Status.
ApiError MakeError(int status, std::string type, std::string message, std::string code = {});

// Anthropic's type for an HTTP status that does not come from a Status: the type of the table's
// row with that status, else Anthropic's rule (other 4xx invalid_request_error, 5xx api_error).
const char* AnthropicErrorType(int status);

// {"error":{...}} (OpenAI) or {"type":"error","error":{...}} (Anthropic); ErrorJson as compact
// JSON (invalid UTF-8 replaced).
nlohmann::ordered_json ErrorObject(const ApiError& e, ErrorShape shape = ErrorShape::kOpenAi);
std::string ErrorJson(const ApiError& e, ErrorShape shape = ErrorShape::kOpenAi);
HttpResponse ErrorResponse(const ApiError& e, ErrorShape shape = ErrorShape::kOpenAi);
// The transport's own failures (HttpErrorBody, http_server.h) as OpenAI errors.
HttpResponse TransportErrorResponse(int status, const std::string& message);

}  // namespace brisk::server
