#include "server/api_error.h"

#include <nlohmann/json.hpp>

namespace brisk::server {
namespace {

struct ErrorClass {
  int status;
  const char* type;
  const char* code;  // default machine code, "" = null
};

ErrorClass ClassOf(StatusCode code) {
  switch (code) {          // a table: one row per StatusCode
    case StatusCode::kOk:  // not an error: a caller bug, reported as one
    case StatusCode::kInternal:
      return {500, "server_error", ""};
    case StatusCode::kInvalidArgument:
    case StatusCode::kFailedPrecondition:
      return {400, "invalid_request_error", ""};
    case StatusCode::kOutOfRange:  // the only capacity a request can exceed: the context window
      return {400, "invalid_request_error", "context_length_exceeded"};
    case StatusCode::kUnimplemented:
      return {400, "invalid_request_error", "unsupported_value"};
    case StatusCode::kNotFound:
      return {404, "not_found_error", "not_found"};
    case StatusCode::kUnauthenticated:
      return {401, "authentication_error", "invalid_api_key"};
    case StatusCode::kResourceExhausted:
      return {429, "rate_limit_error", "overloaded"};
    case StatusCode::kUnavailable:  // while starting, callers say "model_loading"
      return {503, "unavailable_error", "shutting_down"};
  }
  return {500, "server_error", ""};
}

}  // namespace

ApiError ToApiError(const Status& s, std::string code) {
  const ErrorClass c = ClassOf(s.code());
  ApiError e;
  e.status = c.status;
  e.type = c.type;
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
  e.message = std::move(message);
  e.code = std::move(code);
  return e;
}

std::string ErrorJson(const ApiError& e) {
  nlohmann::ordered_json err = {{"message", e.message}, {"type", e.type}};
  err["param"] =
      e.param.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(e.param);
  err["code"] = e.code.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(e.code);
  // Invalid UTF-8 from a client (echoed in a message) must not make the error itself fail.
  return nlohmann::ordered_json{{"error", err}}.dump(-1, ' ', false,
                                                     nlohmann::json::error_handler_t::replace);
}

HttpResponse ErrorResponse(const ApiError& e) {
  HttpResponse r;
  r.status = e.status;
  r.body = ErrorJson(e);
  return r;
}

HttpResponse TransportErrorResponse(int status, const std::string& message) {
  return ErrorResponse(HttpError(status, message));
}

}  // namespace brisk::server
