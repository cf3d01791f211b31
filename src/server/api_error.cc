#include "server/api_error.h"

#include <nlohmann/json.hpp>

namespace brisk::server {

ApiError BadRequest(std::string message, std::string param, std::string code) {
  ApiError e;
  e.message = std::move(message);
  e.param = std::move(param);
  e.code = std::move(code);
  return e;
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

}  // namespace brisk::server
