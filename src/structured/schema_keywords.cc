// Which JSON Schema keywords the compiler knows (json_schema.h lists them with the reasons), the
// types a schema admits, and the checks of keyword values that every kind of schema shares.
#include <array>
#include <cmath>
#include <string>
#include <string_view>

#include "structured/schema_compiler.h"

namespace brisk::structured::schema {
namespace {

constexpr std::array<std::string_view, 9> kAnnotations = {"title",      "description", "examples",
                                                          "default",    "$schema",     "$comment",
                                                          "deprecated", "readOnly",    "writeOnly"};

// Enforced by some piece of the compiler; everything else is refused.
constexpr std::array<std::string_view, 27> kSupported = {"type",
                                                         "nullable",
                                                         "enum",
                                                         "const",
                                                         "anyOf",
                                                         "oneOf",
                                                         "allOf",
                                                         "$ref",
                                                         "$defs",
                                                         "definitions",
                                                         "properties",
                                                         "required",
                                                         "additionalProperties",
                                                         "items",
                                                         "prefixItems",
                                                         "additionalItems",
                                                         "minItems",
                                                         "maxItems",
                                                         "uniqueItems",
                                                         "minLength",
                                                         "maxLength",
                                                         "pattern",
                                                         "format",
                                                         "minimum",
                                                         "maximum",
                                                         "exclusiveMinimum",
                                                         "exclusiveMaximum"};

constexpr std::array<std::string_view, 8> kStringFormats = {
    "date", "time", "date-time", "uuid", "email", "hostname", "ipv4", "uri"};
constexpr std::array<std::string_view, 4> kNumberFormats = {"int32", "int64", "float", "double"};

template <size_t N>
bool In(const std::array<std::string_view, N>& set, std::string_view s) {
  for (std::string_view x : set)
    if (x == s) return true;
  return false;
}

constexpr std::array<std::pair<std::string_view, TypeBits>, 7> kTypeNames = {{
    {"null", kNull},
    {"boolean", kBoolean},
    {"object", kObject},
    {"array", kArray},
    {"number", kNumber},
    {"string", kString},
    {"integer", kInteger},
}};

Status CheckFormat(const SchemaCompiler& c, const Json& v, const At& at) {
  if (!v.is_string()) return c.Error("'format' must be a string at " + at.Text());
  const std::string& f = v.get_ref<const std::string&>();
  if (In(kStringFormats, f) || In(kNumberFormats, f)) return Status::Ok();
  return c.Error("unsupported JSON Schema keyword 'format' ('" + f +
                 "' is not one of date, time, date-time, uuid, email, hostname, ipv4, uri, "
                 "int32, int64, float, double) at " +
                 at.Text());
}

// Keyword values whose mere form decides refusal.
Status CheckValue(const SchemaCompiler& c, const std::string& key, const Json& v, const At& at) {
  if (key == "uniqueItems") {
    if (!v.is_boolean()) return c.Error("'uniqueItems' must be a boolean at " + at.Text());
    if (v.get<bool>())
      return c.Error("unsupported JSON Schema keyword 'uniqueItems' (true) at " + at.Text());
  }
  if (key == "format") return CheckFormat(c, v, at);
  if ((key == "exclusiveMinimum" || key == "exclusiveMaximum") && v.is_boolean())
    return c.Error("unsupported JSON Schema keyword '" + key +
                   "' as a boolean (draft 4; write the bound itself) at " + at.Text());
  return Status::Ok();
}

// The types a schema's type-specific keywords imply, when it names none.
TypeSet InferTypes(const Json& s) {
  TypeSet t = 0;
  for (const auto& [key, v] : s.items()) {
    if (key == "properties" || key == "required" || key == "additionalProperties") t |= kObject;
    if (key == "items" || key == "prefixItems" || key == "additionalItems" || key == "minItems" ||
        key == "maxItems" || key == "uniqueItems")
      t |= kArray;
    if (key == "minLength" || key == "maxLength" || key == "pattern") t |= kString;
    if (key == "minimum" || key == "maximum" || key == "exclusiveMinimum" ||
        key == "exclusiveMaximum")
      t |= kNumber;
    if (key == "format" && v.is_string()) {
      const std::string& f = v.get_ref<const std::string&>();
      t |= f == "int32" || f == "int64" ? kInteger : In(kNumberFormats, f) ? kNumber : kString;
    }
  }
  return t ? t : TypeSet(kAllTypes);
}

}  // namespace

bool IsAnnotation(std::string_view keyword) { return In(kAnnotations, keyword); }

Status CheckKeywords(const SchemaCompiler& c, const Json& s, const At& at) {
  for (const auto& [key, v] : s.items()) {
    if (IsAnnotation(key)) continue;
    if (key == "$id" && at.ptr.empty()) continue;  // below the root it would move $ref's base
    if (!In(kSupported, key)) return c.Unsupported(key, at);
    BRISK_RETURN_IF_ERROR(CheckValue(c, key, v, at));
  }
  return Status::Ok();
}

std::string TypeNames(TypeSet types) {
  std::string out;
  for (const auto& [name, bit] : kTypeNames)
    if (types & bit) out += (out.empty() ? "" : ", ") + std::string(name);
  return out;
}

bool HasType(const Json& v, TypeSet types) {
  if (v.is_null()) return types & kNull;
  if (v.is_boolean()) return types & kBoolean;
  if (v.is_object()) return types & kObject;
  if (v.is_array()) return types & kArray;
  if (v.is_string()) return types & kString;
  if (!v.is_number()) return false;
  if (types & kNumber) return true;
  if (!(types & kInteger)) return false;
  if (v.is_number_integer()) return true;
  const double d = v.get<double>();
  return std::isfinite(d) && d == std::floor(d);
}

Result<TypeSet> SchemaTypes(const SchemaCompiler& c, const Json& s, const At& at) {
  auto type = s.find("type");
  auto nullable = s.find("nullable");
  if (nullable != s.end() && !nullable->is_boolean())
    return c.Error("'nullable' must be a boolean at " + at.Text());
  if (type == s.end()) {
    if (nullable != s.end()) return c.Error("'nullable' needs 'type' beside it at " + at.Text());
    return InferTypes(s);
  }
  const Json names = type->is_array() ? *type : Json::array({*type});
  TypeSet t = 0;
  for (const Json& n : names) {
    bool known = false;
    for (const auto& [name, bit] : kTypeNames) {
      if (n.is_string() && n.get_ref<const std::string&>() == name) t |= bit, known = true;
    }
    if (!known)
      return c.Error(
          "'type' must be a type name (null, boolean, object, array, number, string, "
          "integer) or a list of them, found " +
          CompactJson(n) + " at " + at.Text());
  }
  if (t == 0) return c.Nothing("'type' is an empty list", at);
  if (nullable != s.end() && nullable->get<bool>()) t |= kNull;
  return t;
}

Result<int64_t> CountKeyword(const SchemaCompiler& c, const Json& s, std::string_view key,
                             const At& at, int64_t fallback) {
  auto it = s.find(key);
  if (it == s.end()) return fallback;
  if (it->is_number_unsigned()) {
    const uint64_t u = it->get<uint64_t>();
    return int64_t(u > uint64_t(INT64_MAX) ? INT64_MAX : u);
  }
  if (it->is_number_integer() && it->get<int64_t>() >= 0) return it->get<int64_t>();
  if (it->is_number_float()) {
    const double d = it->get<double>();
    if (d >= 0 && d == std::floor(d)) return d >= 9.2e18 ? INT64_MAX : int64_t(d);
  }
  return c.Error("'" + std::string(key) + "' must be a non-negative integer at " + at.Text());
}

}  // namespace brisk::structured::schema
