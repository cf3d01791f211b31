#include "server/api_error.h"

#include <nlohmann/json.hpp>

namespace brisk::server {
namespace {

struct ErrorClass {
  int status;
  const char* type;            // OpenAI's
  const char* code;            // default machine code, "" = null
  const char* anthropic_type;  // Anthropic's (its HTTP statuses are the same per kind of error)
};

ErrorClass ClassOf(StatusCode code) {
  switch (code) {          // a table: one row per StatusCode
    case StatusCode::kOk:  // not an error: a caller bug, reported as one
    case StatusCode::kInternal:
      return {500, "server_error", "", "api_error"};
    case StatusCode::kInvalidArgument:
    case StatusCode::kFailedPrecondition:
      return {400, "invalid_request_error", "", "invalid_request_error"};
    case StatusCode::kOutOfRange:  // the only capacity a request can exceed: the context window
      return {400, "invalid_request_error", "context_length_exceeded", "invalid_request_error"};
    case StatusCode::kUnimplemented:
      return {400, "invalid_request_error", "unsupported_value", "invalid_request_error"};
    case StatusCode::kNotFound:
      return {404, "not_found_error", "not_found", "not_found_error"};
    case StatusCode::kUnauthenticated:
      return {401, "authentication_error", "invalid_api_key", "authentication_error"};
    case StatusCode::kResourceExhausted:
      return {429, "rate_limit_error", "overloaded", "rate_limit_error"};
    case StatusCode::kUnavailable:  // while starting, callers say "model_loading"
      return {503, "unavailable_error", "shutting_down", "overloaded_error"};
  }
  return {500, "server_error", "", "api_error"};
}

}  // namespace

ApiError ToApiError(const Status& s, std::string code) {
  const ErrorClass c = ClassOf(s.code());
  ApiError e;
  e.status = c.status;
  e.type = c.type;
  e.anthropic_type = c.anthropic_type;
  e.message = s.message();
  e.param = s.field();
  e.code = code.empty() ? c.code : std::move(code);
  return e;
}

ApiError BadRequest(std::string message, std::string param, std::string code) {
  return ToApiError(Status::InvalidArgument(std::move(message), std::move(param)), std::move(code));
}

ApiError HttpError(int status, std::string message, std::string code) {
  return MakeError(status, status >= 500 ? "server_error" : "invalid_request_error",
                   std::move(message), std::move(code));
}

ApiError MakeError(int status, std::string type, std::string message, std::string code) {
  ApiError e;
  e.status = status;
  e.type = std::move(type);
  e.anthropic_type = AnthropicErrorType(status);
  e.message = std::move(message);
  e.code = std::move(code);
  return e;
}

const char* AnthropicErrorType(int status) {
  // kInternal is the last StatusCode: every row of the table is visited.
  for (int c = 0; c <= int(StatusCode::kInternal); ++c) {
    const ErrorClass row = ClassOf(StatusCode(c));
    if (row.status == status) return row.anthropic_type;
  }
  return status < 500 ? "invalid_request_error" : "api_error";
}

nlohmann::ordered_json ErrorObject(const ApiError& e, ErrorShape shape) {
  using Json = nlohmann::ordered_json;
  if (shape == ErrorShape::kAnthropic) {
    return Json{{"type", "error"}, {"error", {{"type", e.anthropic_type}, {"message", e.message}}}};
  }
  Json err = {{"message", e.message}, {"type", e.type}};
  err["param"] = e.param.empty() ? Json(nullptr) : Json(e.param);
  err["code"] = e.code.empty() ? Json(nullptr) : Json(e.code);
  return Json{{"error", std::move(err)}};
}

std::string ErrorJson(const ApiError& e, ErrorShape shape) {
  // Invalid UTF-8 from a client (echoed in a message) must not make the error itself fail.
  return ErrorObject(e, shape).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

HttpResponse ErrorResponse(const ApiError& e, ErrorShape shape) {
  HttpResponse r;
  r.status = e.status;
  r.body = ErrorJson(e, shape);
  return r;
}

HttpResponse TransportErrorResponse(int status, const std::string& message) {
  return ErrorResponse(HttpError(status, message));
}

}  // namespace brisk::server
