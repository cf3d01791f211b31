// OpenAI-style error results (DESIGN §6 "Errors"): an HTTP status plus
// {"error": {"message", "type", "param", "code"}}. Used by the transport (413, 431, 408) and by
// every route, so clients see one error shape whatever failed.
#pragma once

#include <string>

#include "server/http_server.h"

namespace brisk::server {

struct ApiError {
  int status = 400;
  std::string type = "invalid_request_error";  // authentication_error, not_found_error, ...
  std::string message;
  std::string param;  // offending field ("messages[2].role"), or "" (JSON null)
  std::string code;   // machine-readable code ("context_length_exceeded"), or "" (JSON null)
};

ApiError BadRequest(std::string message, std::string param = {}, std::string code = {});
// Any other error: 401 authentication_error, 404 not_found_error, 429 rate_limit_error, ...
ApiError MakeError(int status, std::string type, std::string message, std::string code = {});

// {"error":{...}} as compact JSON.
std::string ErrorJson(const ApiError& e);
HttpResponse ErrorResponse(const ApiError& e);

}  // namespace brisk::server
