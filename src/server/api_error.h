// OpenAI-style error results (DESIGN §6 "Errors"): an HTTP status plus
// {"error": {"message", "type", "param", "code"}}. Every route turns a failed Status into one with
// ToApiError, so the HTTP status follows the Status code (one table, api_error.cc), never the
// message text; clients see one error shape whatever failed.
#pragma once

#include <string>

#include "server/http_server.h"
#include "util/status.h"

namespace brisk::server {

struct ApiError {
  int status = 400;
  std::string type = "invalid_request_error";  // authentication_error, not_found_error, ...
  std::string message;
  std::string param;  // offending field ("messages[2].role"), or "" (JSON null)
  std::string code;   // machine-readable code ("context_length_exceeded"), or "" (JSON null)
};

// The table: HTTP status, OpenAI error type and default machine code of each StatusCode.
// `code` replaces the default machine code when given; param is the Status's field.
ApiError ToApiError(const Status& s, std::string code = {});

// Shorthands: ToApiError(Status::InvalidArgument(message, param), code).
ApiError BadRequest(std::string message, std::string param = {}, std::string code = {});
// Errors that are facts of HTTP rather than a Status (405, 413, 431, a malformed request):
// invalid_request_error with that status; 5xx become server_error.
ApiError HttpError(int status, std::string message, std::string code = {});
// Errors that end a generation already under way (generation_sink.cc, by finish reason) and
// bench report failures; prefer ToApiError for anything that starts as a Status.
ApiError MakeError(int status, std::string type, std::string message, std::string code = {});

// {"error":{...}} as compact JSON.
std::string ErrorJson(const ApiError& e);
HttpResponse ErrorResponse(const ApiError& e);
// The transport's own failures (HttpErrorBody, http_server.h) as OpenAI errors.
HttpResponse TransportErrorResponse(int status, const std::string& message);

}  // namespace brisk::server
