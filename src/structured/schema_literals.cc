// enum and const: the allowed values, each spelled as its compact JSON text, as one literal trie.
// One spelling per value is a subset of what a validator accepts (it compares values, not text),
// which is all constrained decoding needs.
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "structured/schema_compiler.h"

namespace brisk::structured::schema {

std::string CompactJson(const Json& v) {
  return v.dump(-1, ' ', false, Json::error_handler_t::replace);
}

bool DeeperThan(const Json& v, int limit) {
  std::vector<std::pair<const Json*, int>> stack = {{&v, 0}};
  while (!stack.empty()) {
    auto [j, depth] = stack.back();
    stack.pop_back();
    if (!j->is_structured()) continue;
    if (depth >= limit) return true;
    for (const Json& child : *j) stack.push_back({&child, depth + 1});
  }
  return false;
}

namespace {

// Other validation keywords would have to be checked against each value; only "type" is.
bool MayAccompanyLiterals(std::string_view key, const At& at) {
  return key == "enum" || key == "const" || key == "type" || key == "nullable" || key == "$defs" ||
         key == "definitions" || IsAnnotation(key) || (key == "$id" && at.ptr.empty());
}

}  // namespace

Result<int32_t> SchemaCompiler::CompileLiterals(const Json& s, const At& at, TypeSet types) {
  for (const auto& [key, v] : s.items()) {
    if (!MayAccompanyLiterals(key, at))
      return Error("unsupported JSON Schema keyword '" + key +
                   "' beside 'enum' or 'const' (only 'type' may accompany them) at " + at.Text());
  }
  auto e = s.find("enum"), k = s.find("const");
  if ((e != s.end() && DeeperThan(*e, kMaxJsonSchemaDepth)) ||
      (k != s.end() && DeeperThan(*k, kMaxJsonSchemaDepth)))
    return Error("an 'enum' or 'const' value is nested deeper than " +
                 std::to_string(kMaxJsonSchemaDepth) + " levels at " + at.Text());
  std::vector<const Json*> values;
  if (e != s.end()) {
    if (!e->is_array()) return Error("'enum' must be an array at " + at.Text());
    if (e->empty()) return Nothing("'enum' is empty", at);
    for (const Json& v : *e)
      if (k == s.end() || v == *k) values.push_back(&v);
  } else {
    values.push_back(&*k);
  }
  std::vector<std::string> texts;
  std::set<std::string> seen;
  size_t total = 0;
  for (const Json* v : values) {
    if (!HasType(*v, types)) continue;
    std::string text = CompactJson(*v);
    total += text.size();
    if (total > size_t(GrammarLimits::kMaxSymbols))
      return Error("'enum' is too large (over " + std::to_string(GrammarLimits::kMaxSymbols) +
                   " characters of values) at " + at.Text());
    if (seen.insert(text).second) texts.push_back(std::move(text));
  }
  if (texts.empty())
    return Nothing("no 'enum' / 'const' value has the schema's type (" + TypeNames(types) + ")",
                   at);
  return AddLiteralTrie(b(), Name("enum"), texts);
}

}  // namespace brisk::structured::schema
