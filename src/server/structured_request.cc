#include "server/structured_request.h"

#include <string_view>

#include "server/openai_request.h"

namespace brisk::server {
namespace {

using Json = nlohmann::ordered_json;
using Kind = StructuredOutput::Kind;

ApiError TypeError(const std::string& field, const char* expected, const Json& got) {
  return BadRequest(field + " must be " + expected + ", got " + JsonTypeName(got), field);
}

// A schema given as an object, or as a string holding one (vLLM and SGLang accept both).
std::optional<ApiError> ReadSchema(const std::string& field, const Json& v, StructuredOutput* out) {
  Json schema = v;
  if (v.is_string()) {
    schema = Json::parse(v.get<std::string>(), nullptr, /*allow_exceptions=*/false);
    if (schema.is_discarded()) return BadRequest(field + " is not valid JSON", field);
  }
  if (!schema.is_object() && !schema.is_boolean())
    return TypeError(field, "a JSON Schema (an object)", schema);
  if (schema.dump().size() > StructuredLimits::kMaxSchemaBytes) {
    return BadRequest(
        field + " is longer than " + std::to_string(StructuredLimits::kMaxSchemaBytes) + " bytes",
        field);
  }
  out->kind = Kind::kJsonSchema;
  out->field = field;
  out->schema = std::move(schema);
  return std::nullopt;
}

std::optional<ApiError> ReadText(const std::string& field, Kind kind, const Json& v,
                                 StructuredOutput* out) {
  if (!v.is_string()) return TypeError(field, "a string", v);
  std::string text = v.get<std::string>();
  if (text.empty()) return BadRequest(field + " must not be empty", field);
  if (text.size() > StructuredLimits::kMaxTextBytes) {
    return BadRequest(
        field + " is longer than " + std::to_string(StructuredLimits::kMaxTextBytes) + " bytes",
        field);
  }
  out->kind = kind;
  out->field = field;
  out->text = std::move(text);
  return std::nullopt;
}

std::optional<ApiError> ReadChoices(const std::string& field, const Json& v,
                                    StructuredOutput* out) {
  if (!v.is_array() || v.empty()) return TypeError(field, "a non-empty array of strings", v);
  if (v.size() > StructuredLimits::kMaxChoices) {
    return BadRequest(
        field + " has more than " + std::to_string(StructuredLimits::kMaxChoices) + " choices",
        field);
  }
  size_t bytes = 0;
  for (const Json& c : v) {
    if (!c.is_string()) return TypeError(field + "[]", "a string", c);
    bytes += c.get_ref<const std::string&>().size();
    out->choices.push_back(c.get<std::string>());
  }
  if (bytes > StructuredLimits::kMaxTextBytes)
    return BadRequest(field + " is longer than " + std::to_string(StructuredLimits::kMaxTextBytes) +
                          " bytes in all",
                      field);
  out->kind = Kind::kChoice;
  out->field = field;
  return std::nullopt;
}

// response_format: text, json_object (llama.cpp: with an optional "schema"), json_schema.
std::optional<ApiError> ReadResponseFormat(const Json& v, StructuredOutput* out) {
  const std::string field = "response_format";
  if (!v.is_object()) return TypeError(field, "an object", v);
  auto t = v.find("type");
  if (t == v.end() || !t->is_string())
    return BadRequest("response_format.type must be 'text', 'json_object' or 'json_schema'", field);
  const std::string& type = t->get_ref<const std::string&>();
  if (type == "text") return std::nullopt;
  if (type == "json_object") {
    if (auto s = v.find("schema"); s != v.end() && !s->is_null()) return ReadSchema(field, *s, out);
    out->kind = Kind::kJsonObject;
    out->field = field;
    return std::nullopt;
  }
  if (type != "json_schema") {
    return BadRequest(
        "response_format.type must be 'text', 'json_object' or 'json_schema', got '" + type + "'",
        field);
  }
  auto js = v.find("json_schema");
  if (js == v.end() || !js->is_object())
    return BadRequest("response_format.json_schema must be an object", field);
  auto schema = js->find("schema");
  auto strict = js->find("strict");
  if (strict != js->end() && !strict->is_null() && !strict->is_boolean())
    return TypeError("response_format.json_schema.strict", "a boolean", *strict);
  // OpenAI: a missing schema means any JSON object.
  const Json any = Json::object();
  if (auto e = ReadSchema(field, schema == js->end() ? any : *schema, out)) return e;
  out->strict = strict != js->end() && strict->is_boolean() && strict->get<bool>();
  return std::nullopt;
}

}  // namespace

std::optional<ApiError> ParseJsonSchemaField(const std::string& field, const Json& schema,
                                             bool strict, StructuredOutput* out) {
  if (auto e = ReadSchema(field, schema, out)) return e;
  out->strict = strict;
  return std::nullopt;
}

std::optional<ApiError> ParseStructuredOutput(const Json& body, StructuredOutput* out) {
  struct Reader {
    const char* field;
    std::optional<ApiError> (*read)(const std::string& field, const Json& v, StructuredOutput*);
  };
  static constexpr Reader kReaders[] = {
      {"response_format", [](const std::string&, const Json& v,
                             StructuredOutput* o) { return ReadResponseFormat(v, o); }},
      {"guided_json", ReadSchema},
      {"json_schema", ReadSchema},
      {"guided_regex", [](const std::string& f, const Json& v,
                          StructuredOutput* o) { return ReadText(f, Kind::kRegex, v, o); }},
      {"regex", [](const std::string& f, const Json& v,
                   StructuredOutput* o) { return ReadText(f, Kind::kRegex, v, o); }},
      {"guided_grammar", [](const std::string& f, const Json& v,
                            StructuredOutput* o) { return ReadText(f, Kind::kGrammar, v, o); }},
      {"grammar", [](const std::string& f, const Json& v,
                     StructuredOutput* o) { return ReadText(f, Kind::kGrammar, v, o); }},
      {"ebnf", [](const std::string& f, const Json& v,
                  StructuredOutput* o) { return ReadText(f, Kind::kGrammar, v, o); }},
      {"guided_choice", ReadChoices},
  };
  for (const Reader& r : kReaders) {
    auto it = body.find(r.field);
    if (it == body.end() || it->is_null()) continue;
    StructuredOutput next;
    if (auto e = r.read(r.field, *it, &next)) return e;
    if (next.kind == Kind::kNone) continue;  // response_format text
    if (out->kind != Kind::kNone) {
      return BadRequest("only one of " + out->field + " and " + next.field + " may be given",
                        next.field);
    }
    *out = std::move(next);
  }
  return std::nullopt;
}

}  // namespace brisk::server
