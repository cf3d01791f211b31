#include "server/request_fields.h"

#include <cmath>
#include <limits>

#include "server/openai_request.h"
#include "tokenizer/unicode.h"

namespace brisk::server {

using Json = nlohmann::ordered_json;

std::variant<Json, ApiError> ParseJsonBody(std::string_view body) {
  if (!tok::IsValidUtf8(body)) {
    size_t at = 0;
    while (at < body.size()) {
      const tok::Utf8Step s = tok::DecodeUtf8(body.data() + at, body.size() - at);
      if (!s.ok) break;
      at += s.len;
    }
    return BadRequest("the request body is not valid UTF-8 (invalid byte sequence at offset " +
                      std::to_string(at) + ")");
  }
  if (!JsonDepthWithin(body, kMaxJsonDepth)) {
    return BadRequest("the request body is nested deeper than " + std::to_string(kMaxJsonDepth) +
                      " levels");
  }
  Json j;
  try {
    j = Json::parse(body);
  } catch (const nlohmann::json::exception& e) {
    // "[json.exception.parse_error.101] parse error at line 1, column 5: ..." -> drop the tag.
    std::string what = e.what();
    if (const size_t close = what.find("] ");
        what.rfind("[json.exception", 0) == 0 && close != std::string::npos) {
      what = what.substr(close + 2);
    }
    return BadRequest("invalid JSON: " + what);
  }
  if (!j.is_object()) {
    return BadRequest("the request body must be a JSON object, got " + JsonTypeName(j));
  }
  return j;
}

const Json* Fields::Get(const char* key) const {
  auto it = obj_.find(key);
  if (it == obj_.end() || it->is_null()) return nullptr;
  return &*it;
}

std::string Fields::Name(const char* key) const {
  return path_.empty() ? std::string(key) : path_ + "." + key;
}

std::optional<ApiError> Fields::Bool(const char* key, bool* out) const {
  const Json* v = Get(key);
  if (!v) return std::nullopt;
  if (!v->is_boolean()) return TypeError(Name(key), "a boolean", *v);
  *out = v->get<bool>();
  return std::nullopt;
}

std::optional<ApiError> Fields::String(const char* key, std::string* out, bool required) const {
  const Json* v = Get(key);
  if (!v) {
    if (required) return BadRequest(Name(key) + " is required", Name(key));
    return std::nullopt;
  }
  if (!v->is_string()) return TypeError(Name(key), "a string", *v);
  *out = v->get<std::string>();
  return std::nullopt;
}

std::optional<ApiError> Fields::Float(const char* key, const ParamRange& r, float* out) const {
  const Json* v = Get(key);
  if (!v) return std::nullopt;
  if (!v->is_number()) return TypeError(Name(key), "a number", *v);
  const double d = v->get<double>();
  if (Status st = CheckFloat(r, Name(key), d); !st.ok()) return ToApiError(st);
  *out = static_cast<float>(d);
  return std::nullopt;
}

std::optional<ApiError> Fields::Int(const char* key, const ParamRange& r, int64_t* out) const {
  const Json* v = Get(key);
  if (!v) return std::nullopt;
  int64_t x = 0;
  if (!AsInt64(*v, &x)) {
    if (v->is_number_unsigned()) return ToApiError(RangeError(r, Name(key), v->dump()));
    return TypeError(Name(key), "an integer", *v);
  }
  if (Status st = CheckInt(r, Name(key), x); !st.ok()) return ToApiError(st);
  *out = x;
  return std::nullopt;
}

std::optional<ApiError> Fields::Int32(const char* key, const ParamRange& r, int* out) const {
  int64_t x = 0;
  if (auto e = Int(key, r, &x)) return e;
  if (Has(key)) *out = static_cast<int>(x);
  return std::nullopt;
}

std::optional<ApiError> Fields::Seed(const char* key, std::optional<uint64_t>* out) const {
  const Json* v = Get(key);
  if (!v) return std::nullopt;
  int64_t s = 0;
  if (v->is_number_unsigned()) {
    *out = v->get<uint64_t>();
  } else if (AsInt64(*v, &s)) {
    *out = static_cast<uint64_t>(s);
  } else {
    return TypeError(Name(key), "an integer", *v);
  }
  return std::nullopt;
}

bool Fields::AsInt64(const Json& v, int64_t* out) {
  if (v.is_number_unsigned()) {
    if (v.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max())) return false;
    *out = static_cast<int64_t>(v.get<uint64_t>());
    return true;
  }
  if (v.is_number_integer()) {
    *out = v.get<int64_t>();
    return true;
  }
  if (v.is_number_float()) {
    const double d = v.get<double>();
    // 2^63 is the first double above int64's range.
    if (!std::isfinite(d) || d != std::floor(d) || d < -9.2233720368547758e18 ||
        d >= 9.2233720368547758e18) {
      return false;
    }
    *out = static_cast<int64_t>(d);
    return true;
  }
  return false;
}

ApiError Fields::TypeError(const std::string& key, const char* expected, const Json& got) {
  return BadRequest(key + " must be " + expected + ", got " + JsonTypeName(got), key);
}

std::optional<ApiError> ParseModelField(const Fields& f, const std::string& served_id,
                                        std::string* out) {
  if (auto e = f.String("model", out)) return e;
  if (!out->empty() && *out != served_id) {
    return ToApiError(Status::NotFound("The model `" + *out + "` does not exist.", "model"),
                      "model_not_found");
  }
  return std::nullopt;
}

}  // namespace brisk::server
