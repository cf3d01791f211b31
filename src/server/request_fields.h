// What every JSON API request parser shares (OpenAI's in openai_request.cc, Anthropic's in
// anthropic_request.cc): the body checks before anything recurses over it, and typed access to
// the fields of an object whose errors are 400s naming the field. The APIs differ in their
// fields, not in how a field is checked.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "engine/param_range.h"
#include "server/api_error.h"

namespace brisk::server {

// The body as a JSON object: valid UTF-8, nested at most kMaxJsonDepth deep, JSON syntax, an
// object. Errors are 400s without a param (the body as a whole is wrong).
std::variant<nlohmann::ordered_json, ApiError> ParseJsonBody(std::string_view body);

// Typed access to the fields of a request object, or of an object inside it. Every getter leaves
// *out alone when the field is absent or null ("not given", as the SDKs send optional fields) and
// returns the 400 naming the field when it has the wrong type or range. Fields of a nested object
// are named by their path: Fields(block, "messages[0].content[1]") names "...content[1].text".
class Fields {
 public:
  explicit Fields(const nlohmann::ordered_json& obj, std::string path = {})
      : obj_(obj), path_(std::move(path)) {}

  const nlohmann::ordered_json& object() const { return obj_; }
  const nlohmann::ordered_json* Get(const char* key) const;
  bool Has(const char* key) const { return Get(key) != nullptr; }
  // The name errors give the field: path.key, or key at the top level.
  std::string Name(const char* key) const;

  std::optional<ApiError> Bool(const char* key, bool* out) const;
  // required: absent or null is a 400 ("<name> is required") instead of "not given".
  std::optional<ApiError> String(const char* key, std::string* out, bool required = false) const;
  // A number within the engine's range r (request_validation.h, sampler.h).
  std::optional<ApiError> Float(const char* key, const ParamRange& r, float* out) const;
  // An integer within r (an int range); a float with an integral value counts (JavaScript
  // clients).
  std::optional<ApiError> Int(const char* key, const ParamRange& r, int64_t* out) const;
  std::optional<ApiError> Int32(const char* key, const ParamRange& r, int* out) const;
  // A sampling seed: any 64-bit integer (negative seeds wrap, as Python clients may send them);
  // absent or null leaves *out as it is.
  std::optional<ApiError> Seed(const char* key, std::optional<uint64_t>* out) const;

  // v as an int64 (integers, and floats with an integral value in range); false otherwise.
  static bool AsInt64(const nlohmann::ordered_json& v, int64_t* out);
  // "<key> must be <expected>, got <type>", param key.
  static ApiError TypeError(const std::string& key, const char* expected,
                            const nlohmann::ordered_json& got);

 private:
  const nlohmann::ordered_json& obj_;
  const std::string path_;
};

// The `model` field: absent or the served model's id; another name is a 404 (model_not_found).
std::optional<ApiError> ParseModelField(const Fields& f, const std::string& served_id,
                                        std::string* out);

}  // namespace brisk::server
