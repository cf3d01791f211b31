// object schemas. Declared properties come in the order the schema writes them; required ones
// are always there, optional ones may be left out. "Any subset of the optional ones, in order,
// with commas only between members" is a chain of two rules per property:
//   F_i: members i.. when none has been written yet (no comma before the next one)
//   T_i: members i.. after one has been written (a comma before each next one)
//   F_i ::= m_i T_i+1 | F_i+1 (the second only when property i is optional)
//   T_i ::= "," m_i T_i+1 | T_i+1 (likewise)
// so the grammar grows linearly and no comma can lead or trail. F_i is only needed up to the
// first required property. Undeclared keys (additionalProperties) may follow the declared ones:
// F_n ::= "" | x X, T_n ::= X, X ::= "" | "," x X, where x is one key-value pair whose key is
// no declared name (schema_keys.cc).
#include <algorithm>
#include <string>
#include <vector>

#include "structured/schema_compiler.h"

namespace brisk::structured::schema {
namespace {

struct Member {
  std::string key;
  int32_t value = -1;
  bool required = false;
};

Symbol Ch(char c) { return Symbol::Char(uint32_t(uint8_t(c))); }

Sequence Append(Sequence a, const Sequence& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// ws "key" ws ":" ws value ws, where `key` is the literal key or a key rule.
Sequence MemberSeq(JsonLexicon& lex, const Sequence& key, int32_t value) {
  Sequence s;
  lex.Ws(&s);
  s.insert(s.end(), key.begin(), key.end());
  lex.Ws(&s);
  s.push_back(Ch(':'));
  lex.Ws(&s);
  s.push_back(Symbol::Ref(value));
  lex.Ws(&s);
  return s;
}

// The object rule over `members` (declared, in order) and `extra` (the member sequence of one
// undeclared key-value pair; empty when none are allowed). See the file comment.
int32_t ObjectRule(JsonLexicon& lex, const std::vector<Member>& members, const Sequence& extra) {
  GrammarBuilder& b = lex.b();
  const std::string name = lex.Name("props");
  Sequence t_next, f_next;  // T_{i+1}, F_{i+1}; empty sequence = the empty string
  if (!extra.empty()) {
    const int32_t more = b.NewRule(name);
    b.Define(more, {{}, Append(Append({Ch(',')}, extra), {Symbol::Ref(more)})});
    t_next = {Symbol::Ref(more)};
    f_next = {Symbol::Ref(b.AddRule(name, {{}, Append(extra, t_next)}))};
  }
  const size_t n = members.size();
  size_t first_required = n;
  for (size_t i = 0; i < n; ++i)
    if (members[i].required) first_required = std::min(first_required, i);
  for (size_t i = n; i-- > 0;) {
    const Member& m = members[i];
    const Sequence member =
        MemberSeq(lex, GrammarBuilder::Literal(CompactJson(Json(m.key))), m.value);
    Sequence f;
    if (i <= first_required) {
      std::vector<Sequence> alts = {Append(member, t_next)};
      if (!m.required) alts.push_back(f_next);
      f = {Symbol::Ref(b.AddRule(name, std::move(alts)))};
    }
    if (i > 0) {
      std::vector<Sequence> alts = {Append(Append({Ch(',')}, member), t_next)};
      if (!m.required) alts.push_back(t_next);
      t_next = {Symbol::Ref(b.AddRule(name, std::move(alts)))};
    }
    f_next = std::move(f);
  }
  std::vector<Sequence> alts = {Append(Append({Ch('{')}, f_next), {Ch('}')})};
  if (first_required == n) {  // may be empty: allow whitespace inside "{ }" too
    Sequence empty = {Ch('{')};
    lex.Ws(&empty);
    empty.push_back(Ch('}'));
    if (empty.size() > 2) alts.push_back(std::move(empty));
  }
  return b.AddRule(lex.Name("object"), std::move(alts));
}

Result<std::vector<std::string>> RequiredNames(const SchemaCompiler& c, const Json& s,
                                               const At& at) {
  std::vector<std::string> out;
  auto it = s.find("required");
  if (it == s.end()) return out;
  if (!it->is_array()) return c.Error("'required' must be an array of strings at " + at.Text());
  for (const Json& k : *it) {
    if (!k.is_string()) return c.Error("'required' must be an array of strings at " + at.Text());
    if (std::find(out.begin(), out.end(), k.get<std::string>()) == out.end())
      out.push_back(k.get<std::string>());
  }
  return out;
}

}  // namespace

Result<int32_t> SchemaCompiler::CompileObject(const Json& s, const At& at) {
  BRISK_ASSIGN_OR_RETURN(std::vector<std::string> required, RequiredNames(*this, s, at));
  auto props = s.find("properties");
  if (props != s.end() && !props->is_object())
    return Error("'properties' must be an object at " + at.Text());
  auto ap = s.find("additionalProperties");
  if (ap != s.end() && !ap->is_boolean() && !ap->is_object())
    return Error("'additionalProperties' must be a schema at " + at.Text());
  const bool extras = ap == s.end() ? !options().strict : !(ap->is_boolean() && !ap->get<bool>());
  int32_t extra_value = -1;
  if (extras) {
    if (ap != s.end() && ap->is_object()) {
      BRISK_ASSIGN_OR_RETURN(extra_value, Compile(*ap, at.Key("additionalProperties")));
    } else {
      extra_value = lex().AnyValue();
    }
  }
  auto is_required = [&](const std::string& k) {
    return std::find(required.begin(), required.end(), k) != required.end();
  };
  std::vector<std::string> declared;
  std::vector<Member> members;
  if (props != s.end()) {
    for (const auto& [key, sub] : props->items()) {
      declared.push_back(key);
      if (sub.is_boolean() && !sub.get<bool>()) {  // may not appear at all
        if (is_required(key)) return Nothing("required property '" + key + "' is false", at);
        continue;
      }
      BRISK_ASSIGN_OR_RETURN(int32_t value, Compile(sub, at.Key("properties").Key(key)));
      members.push_back({key, value, is_required(key)});
    }
  }
  for (const std::string& key : required) {  // required but not declared: an additional property
    if (std::find(declared.begin(), declared.end(), key) != declared.end()) continue;
    if (!extras)
      return Nothing("required property '" + key + "' is not allowed by additionalProperties", at);
    declared.push_back(key);
    members.push_back({key, extra_value, true});
  }
  Sequence extra;
  if (extras) {
    const Sequence key = {Symbol::Ref(
        declared.empty() ? lex().FreeString() : AddKeyExcluding(b(), Name("key"), declared))};
    extra = MemberSeq(lex(), key, extra_value);
  }
  return ObjectRule(lex(), members, extra);
}

}  // namespace brisk::structured::schema
