// Internal to the JSON Schema compiler (json_schema.h): the state one compilation shares (the
// builder, the document for $ref, the rules made once) and the pieces each schema_*.cc file
// supplies, one per kind of value.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "structured/grammar.h"
#include "structured/json_schema.h"
#include "util/status.h"

namespace brisk::structured::schema {

using Json = nlohmann::ordered_json;

// Digit budgets of the number grammars (see json_schema.h): 15 significant digits survive a
// round trip through a double, and a two-digit exponent keeps every number finite.
inline constexpr int kMaxIntDigits = 15;
inline constexpr int kMaxFracDigits = 15;
inline constexpr int kMaxExpDigits = 2;
inline constexpr int64_t kMaxInt = 999'999'999'999'999;  // the largest 15-digit integer

// Where a subschema sits: its JSON pointer in the document (for messages) and its nesting depth.
struct At {
  std::string ptr;
  int depth = 0;
  At Key(std::string_view key) const;  // ptr + "/" + key (~ and / escaped), one level deeper
  At Index(size_t i) const;
  // "/properties/tags", or "the schema root" for "".
  std::string Text() const;
};

// The JSON types a schema admits, as bits.
enum TypeBits : uint32_t {
  kNull = 1,
  kBoolean = 2,
  kObject = 4,
  kArray = 8,
  kNumber = 16,  // any number (integers included)
  kString = 32,
  kInteger = 64,  // integers only (implied by kNumber)
  kAllTypes = 127,
};
using TypeSet = uint32_t;

// The JSON type names of `types`, for messages.
std::string TypeNames(TypeSet types);
// Whether the instance `v` has one of `types`.
bool HasType(const Json& v, TypeSet types);

// The lexical rules every JSON grammar shares (whitespace, string characters, free strings,
// numbers, any value), each created on first use and then reused.
class JsonLexicon {
 public:
  JsonLexicon(GrammarBuilder& b, const JsonSchemaOptions& options, std::string prefix);
  // Appends the whitespace rule (nothing when output is compact).
  void Ws(Sequence* s);
  int32_t StringChar();  // one character of a string body: raw or any JSON escape
  int32_t FreeString();  // a whole string literal, quotes included
  int32_t Integer();     // -?(0|[1-9][0-9]{0,14})
  int32_t Number();      // integer, fraction and exponent, all bounded in digits
  int32_t AnyValue();    // any JSON value
  std::string Name(std::string_view kind) const { return prefix_ + std::string(kind); }
  GrammarBuilder& b() { return b_; }

 private:
  int32_t AnyObject(int32_t value);
  int32_t AnyArray(int32_t value);

  GrammarBuilder& b_;
  const JsonSchemaOptions& options_;
  std::string prefix_;
  int32_t ws_ = -1, char_ = -1, string_ = -1, integer_ = -1, number_ = -1, value_ = -1;
};

// item repeated n times, min <= n <= max (max < 0: unbounded), for any int64 bounds: large
// counts are decomposed into blocks so the grammar stays small (see schema_repeat.cc).
Result<int32_t> RepeatRange(GrammarBuilder& b, std::string_view name, const Sequence& item,
                            int64_t min, int64_t max);
// The rule matching exactly the given UTF-8 strings, laid out as a trie so the matcher never
// holds more than one open alternative per shared prefix.
int32_t AddLiteralTrie(GrammarBuilder& b, std::string_view name,
                       const std::vector<std::string>& literals);
// The string literals (quotes included) that are none of `names`, spelled with raw characters
// and the escapes \" and \\ only (schema_keys.cc).
int32_t AddKeyExcluding(GrammarBuilder& b, std::string_view name,
                        const std::vector<std::string>& names);
// The compact JSON text of `v` (invalid UTF-8 replaced instead of thrown).
std::string CompactJson(const Json& v);
// Whether `v` nests arrays/objects more than `limit` deep (measured without recursion, so a
// hostile document cannot exhaust the stack here).
bool DeeperThan(const Json& v, int limit);

// Signed decimal without exponent: the exact value of a bound, as digit strings.
struct Decimal {
  bool negative = false;
  std::string int_digits = "0";  // no leading zeros
  std::string frac_digits;       // no trailing zeros
  bool zero() const { return int_digits == "0" && frac_digits.empty(); }
};
// A JSON number as the decimal a validator compares with: integers exactly, doubles by their
// shortest round-trip spelling. Fails for non-numbers.
Result<Decimal> ToDecimal(const Json& v);
// -1, 0, 1 as a < b, a == b, a > b (exact).
int CompareDecimal(const Decimal& a, const Decimal& b);

// One side of a numeric range.
struct Bound {
  bool present = false;
  bool exclusive = false;
  Decimal value;
};
// The integers in [lo, hi] as digit grammars; fails when the range is empty.
Result<int32_t> AddIntegerRange(GrammarBuilder& b, std::string_view name, const Bound& lo,
                                const Bound& hi);
// The decimal numbers in the range (no exponent, at most 15 significant digits); fails when no
// such number exists.
Result<int32_t> AddNumberRange(GrammarBuilder& b, std::string_view name, const Bound& lo,
                               const Bound& hi);

// One compilation: the document (for $ref), the shared lexicon, and the rules made per $ref.
class SchemaCompiler {
 public:
  SchemaCompiler(GrammarBuilder& b, const Json& root, const JsonSchemaOptions& options,
                 std::string_view name);

  // The rule for instances of `s` (any schema: refs, combinators, types).
  Result<int32_t> Compile(const Json& s, const At& at);

  // The pieces, one file each. `s` has no $ref / allOf / anyOf / oneOf at its top.
  Result<int32_t> CompileObject(const Json& s, const At& at);  // schema_objects.cc
  Result<int32_t> CompileArray(const Json& s, const At& at);   // schema_arrays.cc
  Result<int32_t> CompileString(const Json& s, const At& at);  // schema_strings.cc
  Result<int32_t> CompileFormat(const std::string& format);    // schema_formats.cc
  Result<int32_t> CompileNumeric(const Json& s, const At& at,  // schema_numbers.cc
                                 bool integer);
  Result<int32_t> CompileLiterals(const Json& s, const At& at,  // schema_literals.cc
                                  TypeSet types);
  // allOf, $ref beside other keywords, and combinators beside other keywords become a list of
  // alternatives, each a schema without them (schema_merge.cc).
  Result<std::vector<Json>> Flatten(const Json& s, const At& at);

  // The subschema a "#..." reference names, and its pointer.
  Result<std::pair<const Json*, std::string>> Resolve(const Json& ref, const At& at) const;

  JsonLexicon& lex() { return lex_; }
  GrammarBuilder& b() { return b_; }
  const JsonSchemaOptions& options() const { return options_; }
  std::string Name(std::string_view kind) const { return lex_.Name(kind); }
  // invalid_argument naming options.field.
  Status Error(std::string message) const;
  Status Unsupported(std::string_view keyword, const At& at) const;
  Status Nothing(std::string_view why, const At& at) const;  // the schema matches no value
  Status WithField(const Status& s) const;                   // a builder error, our field

 private:
  Result<int32_t> CompileRef(const Json& ref, const At& at);
  Result<int32_t> CompileUnion(const Json& branches, const At& at);
  Result<int32_t> CompileFlat(const Json& s, const At& at);
  Result<int32_t> CompileAlternatives(const std::vector<Json>& alts, const At& at);

  GrammarBuilder& b_;
  const Json& root_;
  const JsonSchemaOptions& options_;
  JsonLexicon lex_;
  std::map<std::string, int32_t> ref_rules_;  // target pointer -> its rule
  std::map<std::string, int32_t> formats_;    // format name -> its string rule
};

// Keyword checks (schema_keywords.cc).
// Refuses keywords outside the supported set (json_schema.h), naming the first one.
Status CheckKeywords(const SchemaCompiler& c, const Json& s, const At& at);
// Annotations: ignored wherever they appear.
bool IsAnnotation(std::string_view keyword);
// The types `s` admits: its "type" (+ "nullable"), else inferred from the type-specific keywords
// it uses, else all.
Result<TypeSet> SchemaTypes(const SchemaCompiler& c, const Json& s, const At& at);
// A non-negative integer keyword (minItems, maxLength, ...): its value, or `fallback` if absent.
Result<int64_t> CountKeyword(const SchemaCompiler& c, const Json& s, std::string_view key,
                             const At& at, int64_t fallback);

}  // namespace brisk::structured::schema
