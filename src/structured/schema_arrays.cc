// array schemas: a tuple prefix (prefixItems, or items as a list in drafts 4-7), then items of
// one schema (items, or additionalItems after a list), the count within minItems..maxItems.
// After i elements, C_i ::= "" (when i >= minItems) | "," e_i+1 C_i+1 for the prefix; past it
// the rest is a counted repetition of "," e, so the grammar stays linear in the prefix.
#include <algorithm>
#include <string>
#include <vector>

#include "structured/schema_compiler.h"

namespace brisk::structured::schema {
namespace {

Symbol Ch(char c) { return Symbol::Char(uint32_t(uint8_t(c))); }

// The array's shape: element schemas of the prefix, the schema of the rest (nullptr: none may
// follow), and the count bounds.
struct ArrayShape {
  std::vector<std::pair<const Json*, At>> prefix;
  const Json* rest = nullptr;
  At rest_at;
  int64_t min = 0, max = -1;  // max < 0: unbounded
};

const Json& True() {
  static const Json t = true;
  return t;
}

Result<ArrayShape> ReadShape(const SchemaCompiler& c, const Json& s, const At& at) {
  ArrayShape shape;
  auto items = s.find("items"), prefix = s.find("prefixItems"), more = s.find("additionalItems");
  const Json* list = prefix != s.end() ? &*prefix : nullptr;
  const char* list_key = "prefixItems";
  if (items != s.end() && items->is_array()) {
    if (list) return c.Error("'items' as a list beside 'prefixItems' at " + at.Text());
    list = &*items, list_key = "items";
  }
  if (list && !list->is_array()) return c.Error("'prefixItems' must be an array at " + at.Text());
  if (list)
    for (size_t i = 0; i < list->size(); ++i)
      shape.prefix.push_back({&(*list)[i], at.Key(list_key).Index(i)});
  // The rest: items (a schema), or additionalItems after a list; absent means anything.
  shape.rest = &True();
  if (items != s.end() && !items->is_array()) shape.rest = &*items, shape.rest_at = at.Key("items");
  if (items != s.end() && items->is_array() && more != s.end())
    shape.rest = &*more, shape.rest_at = at.Key("additionalItems");
  if (!shape.rest->is_boolean() && !shape.rest->is_object())
    return c.Error("'items' must be a schema at " + at.Text());
  BRISK_ASSIGN_OR_RETURN(shape.min, CountKeyword(c, s, "minItems", at, 0));
  BRISK_ASSIGN_OR_RETURN(shape.max, CountKeyword(c, s, "maxItems", at, -1));
  // An element that may not exist ends the array before it.
  for (size_t i = 0; i < shape.prefix.size(); ++i) {
    const Json& e = *shape.prefix[i].first;
    if (e.is_boolean() && !e.get<bool>()) {
      shape.prefix.resize(i);
      shape.rest = nullptr;
      break;
    }
  }
  if (shape.rest && shape.rest->is_boolean() && !shape.rest->get<bool>()) shape.rest = nullptr;
  if (!shape.rest) {
    const int64_t k = int64_t(shape.prefix.size());
    shape.max = shape.max < 0 ? k : std::min(shape.max, k);
  }
  if (shape.max >= 0 && shape.min > shape.max)
    return c.Nothing("it needs more items than it allows ('minItems' above the items possible)",
                     at);
  return shape;
}

Sequence Element(JsonLexicon& lex, int32_t value) {
  Sequence s;
  lex.Ws(&s);
  s.push_back(Symbol::Ref(value));
  lex.Ws(&s);
  return s;
}

}  // namespace

Result<int32_t> SchemaCompiler::CompileArray(const Json& s, const At& at) {
  BRISK_ASSIGN_OR_RETURN(ArrayShape shape, ReadShape(*this, s, at));
  const int64_t k = int64_t(shape.prefix.size());
  // Only the elements the count allows are compiled (maxItems 2 never needs prefix element 3).
  const int64_t used = shape.max < 0 ? k : std::min(k, shape.max);
  std::vector<Sequence> elements;
  for (int64_t i = 0; i < used; ++i) {
    const auto& [schema, where] = shape.prefix[size_t(i)];
    BRISK_ASSIGN_OR_RETURN(int32_t r, Compile(*schema, where));
    elements.push_back(Element(lex(), r));
  }
  const bool rest_used = shape.rest && (shape.max < 0 || shape.max > k);
  Sequence rest_element;
  if (rest_used) {
    BRISK_ASSIGN_OR_RETURN(int32_t r, Compile(*shape.rest, shape.rest_at));
    rest_element = Element(lex(), r);
  }
  // Chain from the end: C_used (the rest), then C_i for i = used-1 .. 1.
  const std::string name = Name("items");
  Sequence tail;  // C_i
  if (rest_used) {
    Sequence more = {Ch(',')};
    more.insert(more.end(), rest_element.begin(), rest_element.end());
    const int64_t lo = std::max<int64_t>(0, shape.min - std::max<int64_t>(used, 1));
    const int64_t hi = shape.max < 0 ? -1 : shape.max - std::max<int64_t>(used, 1);
    Result<int32_t> r = RepeatRange(b(), name, more, lo, hi);
    if (!r.ok()) return WithField(r.status().WithContext("array length at " + at.Text()));
    tail = {Symbol::Ref(*r)};
  }
  for (int64_t i = used - 1; i >= 1; --i) {  // tail is C_{i+1}; make C_i
    std::vector<Sequence> alts;
    Sequence next = {Ch(',')};
    next.insert(next.end(), elements[size_t(i)].begin(), elements[size_t(i)].end());
    next.insert(next.end(), tail.begin(), tail.end());
    alts.push_back(std::move(next));
    if (i >= shape.min) alts.emplace_back();
    tail = {Symbol::Ref(b().AddRule(name, std::move(alts)))};
  }
  std::vector<Sequence> alts;
  if (shape.min == 0) {
    Sequence empty = {Ch('[')};
    lex().Ws(&empty);
    empty.push_back(Ch(']'));
    alts.push_back(std::move(empty));
  }
  if (shape.max != 0) {
    Sequence full = {Ch('[')};
    const Sequence& first = used > 0 ? elements[0] : rest_element;
    full.insert(full.end(), first.begin(), first.end());
    full.insert(full.end(), tail.begin(), tail.end());
    full.push_back(Ch(']'));
    alts.push_back(std::move(full));
  }
  return b().AddRule(Name("array"), std::move(alts));
}

}  // namespace brisk::structured::schema
