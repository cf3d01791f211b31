// JSON Schema (the subset structured outputs need) compiled into a grammar (grammar.h), so that
// constrained decoding can only produce text that parses and validates against the schema.
//
// The grammar accepts a subset of the valid instances, never an invalid one: where the schema
// allows several spellings of a value, the grammar may allow only some (canonical) of them, and
// where a keyword cannot be enforced exactly it is refused (invalid_argument naming the keyword
// and its JSON pointer, field() = options.field) rather than loosened.
//
// Output form: compact JSON as OpenAI emits it (`{"a":1,"b":[true,null]}`); with any_whitespace,
// bounded whitespace between tokens (never unbounded: a model can loop forever on whitespace).
//
// Supported (exactly, or as the documented safe subset):
//   type (one or a list), nullable (OpenAPI: adds "null"), enum, const (any JSON value; one
//     compact spelling each, keys in the order written), anyOf, oneOf (treated as anyOf: branches
//     are assumed disjoint, as discriminated unions are), allOf (merged into one schema),
//     $ref to "#..." JSON pointers in the same document ($defs, definitions, any location;
//     recursion becomes rule references), $defs, definitions, boolean schemas.
//   object: properties (emitted in the order written; required ones always, optional ones may be
//     left out), required, additionalProperties (true / false / schema; absent means true unless
//     options.strict, where it means false as in OpenAI's strict mode). Keys that are not declared
//     come after the declared ones, never spell a declared name, and use raw characters plus the
//     escapes \" and \\ only (so "not a declared name" is decidable character by character).
//   array: items, prefixItems, items as a list + additionalItems (draft 4-7 tuples), minItems,
//     maxItems, uniqueItems false.
//   string: minLength / maxLength (in code points, an escape counting as the one character it
//     stands for), pattern (ECMAScript, unanchored as JSON Schema says), format: date, time,
//     date-time (RFC 3339: "T", "Z" or +hh:mm, no leap seconds), uuid, email, hostname (at most
//     6 labels of at most 40 characters, no trailing dot), ipv4, uri (http/https URLs).
//     Enumerated and patterned strings are spelled canonically (escapes as JSON.stringify
//     writes them); free strings take every JSON escape.
//   integer: -?(0|[1-9][0-9]{0,14}), bounds exact (minimum, maximum, exclusiveMinimum,
//     exclusiveMaximum as numbers; format int32 bounds it to 32 bits, int64 adds nothing).
//   number: without bounds -?(0|[1-9]\d{0,14})(\.\d{1,15})?([eE][+-]?\d{1,2})?; with bounds no
//     exponent and at most 15 significant digits (so the decimal text is exactly comparable with
//     the bound a validator reads as a double), compared exactly with the bound's shortest
//     round-trip decimal; format float/double add nothing.
//   Annotations are ignored: title, description, examples, default, $schema, $id (at the root
//     only), $comment, deprecated, readOnly, writeOnly.
//
// Refused (invalid_argument, "unsupported JSON Schema keyword 'K' at /pointer"): not, if / then /
// else, patternProperties, propertyNames, dependentRequired, dependentSchemas, dependencies,
// unevaluatedProperties, unevaluatedItems, minProperties, maxProperties, contains, minContains,
// maxContains, uniqueItems true, multipleOf, $anchor, $dynamicRef, $dynamicAnchor, $recursiveRef,
// $recursiveAnchor, $vocabulary, $id below the root, contentSchema / contentMediaType /
// contentEncoding, formats other than the above, $ref outside the document, and every keyword not
// named here. Also refused: combinations the grammar cannot intersect (pattern or format with
// minLength / maxLength or with each other, enum / const beside validation keywords other than
// type, two different patterns in one allOf), schemas that match nothing (false, an empty enum,
// minimum > maximum, minItems > maxItems, a required property that may not appear), schemas nested
// deeper than 128 levels, and $ref cycles that reach themselves before any text is consumed.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "structured/grammar.h"
#include "util/status.h"

namespace brisk::structured {

struct JsonSchemaOptions {
  // OpenAI strict mode (json_schema.strict): additionalProperties defaults to false.
  bool strict = false;
  // Whitespace between tokens: none (compact, the default) or, when true, at most one space or
  // one line break followed by at most max_indent spaces/tabs (pretty-printed JSON up to that
  // indentation). Never unbounded.
  bool any_whitespace = false;
  int max_indent = 20;
  // The request field errors name (Status::field()).
  std::string field = "response_format";
};

// Schema nesting allowed (subschema inside subschema, $ref chains included).
inline constexpr int kMaxJsonSchemaDepth = 128;

// The whole grammar for instances of `schema` (ordered_json keeps "properties" in the order
// written; a nlohmann::json converts implicitly, with keys sorted).
Result<Grammar> CompileJsonSchema(const nlohmann::ordered_json& schema,
                                  const JsonSchemaOptions& options = {});

// Adds the rules for `schema` to `b` (a larger grammar, e.g. tool calls with their arguments)
// and returns the rule matching its instances. `name` prefixes the new rules' names.
Result<int32_t> AddJsonSchema(GrammarBuilder& b, const nlohmann::ordered_json& schema,
                              std::string_view name, const JsonSchemaOptions& options = {});

// Adds the rules for any JSON value (the schema {} / true, json_object mode) and returns it.
int32_t AddAnyJsonValue(GrammarBuilder& b, const JsonSchemaOptions& options = {});

}  // namespace brisk::structured
