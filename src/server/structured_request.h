// The request fields that ask for structured output (docs/structured-outputs.md), in the
// spellings of the servers our users come from: OpenAI's response_format (json_object,
// json_schema), vLLM's guided_json / guided_regex / guided_choice / guided_grammar, SGLang's
// regex / json_schema / ebnf, llama.cpp's grammar / json_schema. At most one may be given; each
// is checked for shape here, compiled later (output_constraints.h).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "server/api_error.h"

namespace brisk::server {

struct StructuredOutput {
  enum class Kind { kNone, kJsonObject, kJsonSchema, kRegex, kGrammar, kChoice };
  Kind kind = Kind::kNone;
  std::string field;                 // the request field it came from (errors name it)
  nlohmann::ordered_json schema;     // kJsonSchema
  bool strict = false;               // kJsonSchema: response_format.json_schema.strict
  std::string text;                  // kRegex: the pattern; kGrammar: GBNF
  std::vector<std::string> choices;  // kChoice
};

// Limits on what a request may ask for, before any compiling (one source for every field).
struct StructuredLimits {
  static constexpr size_t kMaxTextBytes = 64 * 1024;     // a pattern or a grammar
  static constexpr size_t kMaxSchemaBytes = 256 * 1024;  // a schema, serialised
  static constexpr size_t kMaxChoices = 1024;
};

// Reads the structured-output fields of a request body (an object). Errors name the field.
std::optional<ApiError> ParseStructuredOutput(const nlohmann::ordered_json& body,
                                              StructuredOutput* out);

// A JSON Schema (an object, or a string holding one) that an API names elsewhere (the Responses
// API's text.format): kind kJsonSchema, its size checked as for the fields above; errors name
// `field`.
std::optional<ApiError> ParseJsonSchemaField(const std::string& field,
                                             const nlohmann::ordered_json& schema, bool strict,
                                             StructuredOutput* out);

}  // namespace brisk::server
