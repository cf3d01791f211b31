// allOf, and combinators beside other keywords, flattened into plain schemas. A schema is turned
// into a disjunction of flat schemas (no $ref / allOf / anyOf / oneOf at the top): allOf parts
// are merged keyword by keyword (the conjunction of two schemas is one schema for every keyword
// the compiler supports, except two different patterns or formats, which are refused), and
// anyOf / oneOf parts distribute over the rest: S and (A or B) = (S and A) or (S and B).
// Subschemas (properties, items) are not expanded here: their conjunction is written as an allOf
// and compiled when reached, so recursive schemas stay finite.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "structured/schema_compiler.h"

namespace brisk::structured::schema {
namespace {

// Distribution multiplies alternatives; past this a schema is refused rather than blown up.
constexpr size_t kMaxAlternatives = 64;

bool IsTrivial(const Json& s) { return (s.is_boolean() && s.get<bool>()) || s == Json::object(); }

// The conjunction of two subschemas, simplified where one side decides it.
Json AllOf(const Json& a, const Json& b) {
  if (IsTrivial(a)) return b;
  if (IsTrivial(b)) return a;
  if (a.is_boolean() || b.is_boolean()) return false;  // one of them is false
  return Json{{"allOf", Json::array({a, b})}};
}

Json TypeNamesJson(TypeSet t) {
  Json out = Json::array();
  const std::pair<TypeBits, const char*> names[] = {
      {kNull, "null"},     {kBoolean, "boolean"}, {kObject, "object"},  {kArray, "array"},
      {kNumber, "number"}, {kString, "string"},   {kInteger, "integer"}};
  for (auto [bit, name] : names)
    if ((t & bit) && !(bit == kInteger && (t & kNumber))) out.push_back(name);
  return out;
}

TypeSet WithIntegers(TypeSet t) { return (t & kNumber) ? (t | kInteger) : t; }

enum class Pick { kMax, kMin };

// The tighter of two numeric keyword values (as exact decimals).
Result<Json> Tighter(const SchemaCompiler& c, const std::string& key, const Json& a, const Json& b,
                     Pick pick, const At& at) {
  Result<Decimal> x = ToDecimal(a), y = ToDecimal(b);
  if (!x.ok() || !y.ok()) return c.Error("'" + key + "' must be a number at " + at.Text());
  const int cmp = CompareDecimal(*x, *y);
  return (cmp >= 0) == (pick == Pick::kMax) ? a : b;
}

// Properties declared on one side only must also satisfy the other side's additionalProperties.
void ApplyOtherAdditional(const Json& own, const Json& other, Json* out) {
  auto props = own.find("properties"), other_props = other.find("properties");
  auto other_ap = other.find("additionalProperties");
  if (props == own.end() || !props->is_object() || other_ap == other.end()) return;
  for (const auto& [key, sub] : props->items()) {
    if (other_props != other.end() && other_props->is_object() && other_props->contains(key))
      continue;
    (*out)["properties"][key] = AllOf((*out)["properties"][key], *other_ap);
  }
}

// A prefix on one side and items on the other: the other side's items bind every element.
Status MergeTuples(const SchemaCompiler& c, const Json& x, const Json& y, Json* out, const At& at) {
  for (const Json* s : {&x, &y}) {
    auto items = s->find("items");
    if (items != s->end() && items->is_array())
      return c.Error("unsupported JSON Schema keyword 'items' as a list inside 'allOf' at " +
                     at.Text());
  }
  const bool px = x.contains("prefixItems"), py = y.contains("prefixItems");
  if (px && py)
    return c.Error("unsupported JSON Schema keyword 'prefixItems' in two 'allOf' parts at " +
                   at.Text());
  if (!px && !py) return Status::Ok();
  const Json& other = px ? y : x;
  auto other_items = other.find("items");
  Json& prefix = (*out)["prefixItems"];
  if (other_items != other.end() && prefix.is_array())
    for (Json& element : prefix) element = AllOf(element, *other_items);
  return Status::Ok();
}

// One keyword present on both sides: the value of their conjunction, or nullopt when they
// contradict (no instance satisfies both).
Result<std::optional<Json>> MergeKeyword(const SchemaCompiler& c, const std::string& key,
                                         const Json& a, const Json& b, const At& at) {
  if (key == "type") {
    BRISK_ASSIGN_OR_RETURN(TypeSet ta, SchemaTypes(c, Json{{"type", a}}, at));
    BRISK_ASSIGN_OR_RETURN(TypeSet tb, SchemaTypes(c, Json{{"type", b}}, at));
    const TypeSet t = WithIntegers(ta) & WithIntegers(tb);
    if (t == 0) return std::optional<Json>();
    return std::optional<Json>(TypeNamesJson(t));
  }
  if (key == "enum") {
    if (!a.is_array() || !b.is_array()) return c.Error("'enum' must be an array at " + at.Text());
    Json both = Json::array();
    for (const Json& v : a)
      if (std::find(b.begin(), b.end(), v) != b.end()) both.push_back(v);
    if (both.empty()) return std::optional<Json>();
    return std::optional<Json>(both);
  }
  if (key == "const") return a == b ? std::optional<Json>(a) : std::optional<Json>();
  if (key == "properties") {
    if (!a.is_object() || !b.is_object())
      return c.Error("'properties' must be an object at " + at.Text());
    Json out = a;
    for (const auto& [k, v] : b.items()) out[k] = out.contains(k) ? AllOf(out[k], v) : v;
    return std::optional<Json>(out);
  }
  if (key == "required") {
    Json out = a;
    if (!a.is_array() || !b.is_array())
      return c.Error("'required' must be an array at " + at.Text());
    for (const Json& k : b)
      if (std::find(out.begin(), out.end(), k) == out.end()) out.push_back(k);
    return std::optional<Json>(out);
  }
  if (key == "additionalProperties" || key == "items") return std::optional<Json>(AllOf(a, b));
  if (key == "minItems" || key == "minLength" || key == "minimum" || key == "exclusiveMinimum") {
    BRISK_ASSIGN_OR_RETURN(Json v, Tighter(c, key, a, b, Pick::kMax, at));
    return std::optional<Json>(v);
  }
  if (key == "maxItems" || key == "maxLength" || key == "maximum" || key == "exclusiveMaximum") {
    BRISK_ASSIGN_OR_RETURN(Json v, Tighter(c, key, a, b, Pick::kMin, at));
    return std::optional<Json>(v);
  }
  if (a == b && (key == "pattern" || key == "format" || key == "uniqueItems" || key == "nullable" ||
                 key == "additionalItems"))
    return std::optional<Json>(a);
  return c.Error("unsupported JSON Schema keyword '" + key +
                 "' with different values in two 'allOf' parts at " + at.Text());
}

// The conjunction of two flat schemas, or nullopt when they contradict.
Result<std::optional<Json>> Merge(const SchemaCompiler& c, const Json& x, const Json& y,
                                  const At& at) {
  Json out = x;
  for (const auto& [key, v] : y.items()) {
    if (!out.contains(key)) {
      out[key] = v;
      continue;
    }
    BRISK_ASSIGN_OR_RETURN(std::optional<Json> merged, MergeKeyword(c, key, out[key], v, at));
    if (!merged) return std::optional<Json>();
    out[key] = std::move(*merged);
  }
  ApplyOtherAdditional(x, y, &out);
  ApplyOtherAdditional(y, x, &out);
  BRISK_RETURN_IF_ERROR(MergeTuples(c, x, y, &out, at));
  return std::optional<Json>(std::move(out));
}

// `s` without combinators, annotations and definitions; "nullable" folded into "type".
Result<Json> OwnKeywords(const SchemaCompiler& c, const Json& s, const At& at) {
  Json base = Json::object();
  for (const auto& [key, v] : s.items()) {
    if (key == "$ref" || key == "allOf" || key == "anyOf" || key == "oneOf" || key == "$defs" ||
        key == "definitions" || key == "$id" || IsAnnotation(key))
      continue;
    base[key] = v;
  }
  if (base.contains("nullable")) {
    BRISK_ASSIGN_OR_RETURN(TypeSet t, SchemaTypes(c, base, at));
    base.erase("nullable");
    base["type"] = TypeNamesJson(t);
  }
  return base;
}

}  // namespace

Result<std::vector<Json>> SchemaCompiler::Flatten(const Json& s, const At& at) {
  if (at.depth > kMaxJsonSchemaDepth)
    return Error("the JSON Schema nests deeper than " + std::to_string(kMaxJsonSchemaDepth) +
                 " levels at " + at.Text());
  if (s.is_boolean())
    return s.get<bool>() ? std::vector<Json>{Json::object()} : std::vector<Json>{};
  if (!s.is_object())
    return Error("a JSON Schema must be an object or a boolean, found " + CompactJson(s) + " at " +
                 at.Text());
  BRISK_RETURN_IF_ERROR(CheckKeywords(*this, s, at));
  BRISK_ASSIGN_OR_RETURN(Json base, OwnKeywords(*this, s, at));
  std::vector<Json> result = {std::move(base)};
  // result := result AND (one of alts)
  auto combine = [&](const std::vector<Json>& alts) -> Status {
    std::vector<Json> next;
    for (const Json& a : result) {
      for (const Json& b : alts) {
        BRISK_ASSIGN_OR_RETURN(std::optional<Json> m, Merge(*this, a, b, at));
        if (m) next.push_back(std::move(*m));
        if (next.size() > kMaxAlternatives)
          return Error("the allOf / anyOf / oneOf combinations at " + at.Text() +
                       " expand to more than " + std::to_string(kMaxAlternatives) +
                       " alternatives");
      }
    }
    result = std::move(next);
    return Status::Ok();
  };
  if (auto ref = s.find("$ref"); ref != s.end()) {
    BRISK_ASSIGN_OR_RETURN(auto target, Resolve(*ref, at));
    BRISK_ASSIGN_OR_RETURN(auto alts, Flatten(*target.first, At{target.second, at.depth + 1}));
    BRISK_RETURN_IF_ERROR(combine(alts));
  }
  for (const char* key : {"allOf", "anyOf", "oneOf"}) {
    auto parts = s.find(key);
    if (parts == s.end()) continue;
    if (!parts->is_array() || parts->empty())
      return Error("'" + std::string(key) + "' must be a non-empty array at " + at.Text());
    const bool all = key[0] == 'a' && key[1] == 'l';
    std::vector<Json> any;
    for (size_t i = 0; i < parts->size(); ++i) {
      BRISK_ASSIGN_OR_RETURN(auto alts, Flatten((*parts)[i], at.Key(key).Index(i)));
      if (all) BRISK_RETURN_IF_ERROR(combine(alts));
      if (!all) any.insert(any.end(), alts.begin(), alts.end());
    }
    if (!all) BRISK_RETURN_IF_ERROR(combine(any));
  }
  return result;
}

}  // namespace brisk::structured::schema
