// The JSON Schema compiler's entry points and its dispatch: a schema is a $ref (a rule shared by
// every use, so recursion is a rule reference), a union (anyOf / oneOf), something to flatten
// first (allOf, or a combinator beside other keywords), or a flat schema of one or more types.
#include "structured/json_schema.h"

#include <algorithm>
#include <cctype>
#include <string>
#include <utility>
#include <vector>

#include "structured/schema_compiler.h"

namespace brisk::structured {
namespace schema {
namespace {

// Nesting of the schema document itself. Every schema level is at least one JSON level, and
// refusing deeper documents up front bounds what nlohmann's recursive copy and compare may meet.
constexpr int kMaxDocumentDepth = 4 * kMaxJsonSchemaDepth;

bool IsCombinator(const std::string& key) {
  return key == "$ref" || key == "allOf" || key == "anyOf" || key == "oneOf";
}

// Keywords that constrain instances (not annotations, not definitions, not the combinators).
bool HasOwnConstraints(const Json& s, const At& at) {
  for (const auto& [key, v] : s.items()) {
    if (IsCombinator(key) || IsAnnotation(key) || key == "$defs" || key == "definitions") continue;
    if (key == "$id" && at.ptr.empty()) continue;
    return true;
  }
  return false;
}

std::string Sanitised(std::string_view name) {
  std::string out;
  for (char c : name) out += std::isalnum(uint8_t(c)) ? c : '-';
  return out.empty() ? out : out + "-";
}

}  // namespace

At At::Key(std::string_view key) const {
  std::string p = ptr + "/";
  for (char c : key)
    p += c == '~' ? std::string("~0") : c == '/' ? std::string("~1") : std::string(1, c);
  return At{std::move(p), depth + 1};
}

At At::Index(size_t i) const { return At{ptr + "/" + std::to_string(i), depth + 1}; }

std::string At::Text() const { return ptr.empty() ? "the schema root" : ptr; }

SchemaCompiler::SchemaCompiler(GrammarBuilder& b, const Json& root,
                               const JsonSchemaOptions& options, std::string_view name)
    : b_(b), root_(root), options_(options), lex_(b, options, Sanitised(name)) {}

Status SchemaCompiler::Error(std::string message) const {
  return Status::InvalidArgument(std::move(message), options_.field);
}

Status SchemaCompiler::Unsupported(std::string_view keyword, const At& at) const {
  return Error("unsupported JSON Schema keyword '" + std::string(keyword) + "' at " + at.Text());
}

Status SchemaCompiler::Nothing(std::string_view why, const At& at) const {
  return Error("the JSON Schema at " + at.Text() + " matches no value: " + std::string(why));
}

Status SchemaCompiler::WithField(const Status& s) const { return Error(s.message()); }

Result<int32_t> SchemaCompiler::Compile(const Json& s, const At& at) {
  if (at.depth > kMaxJsonSchemaDepth)
    return Error("the JSON Schema nests deeper than " + std::to_string(kMaxJsonSchemaDepth) +
                 " levels at " + at.Text());
  if (s.is_boolean()) {
    if (s.get<bool>()) return lex_.AnyValue();
    return Nothing("the schema is false", at);
  }
  if (!s.is_object())
    return Error("a JSON Schema must be an object or a boolean, found " + CompactJson(s) + " at " +
                 at.Text());
  BRISK_RETURN_IF_ERROR(CheckKeywords(*this, s, at));
  const int combinators = int(s.contains("$ref")) + int(s.contains("anyOf")) +
                          int(s.contains("oneOf")) + int(s.contains("allOf"));
  if (s.contains("allOf") || (combinators > 0 && (combinators > 1 || HasOwnConstraints(s, at)))) {
    BRISK_ASSIGN_OR_RETURN(std::vector<Json> alts, Flatten(s, at));
    return CompileAlternatives(alts, at);
  }
  if (auto ref = s.find("$ref"); ref != s.end()) return CompileRef(*ref, at);
  if (auto any = s.find("anyOf"); any != s.end()) return CompileUnion(*any, at.Key("anyOf"));
  if (auto one = s.find("oneOf"); one != s.end()) return CompileUnion(*one, at.Key("oneOf"));
  return CompileFlat(s, at);
}

Result<std::pair<const Json*, std::string>> SchemaCompiler::Resolve(const Json& ref,
                                                                    const At& at) const {
  if (!ref.is_string()) return Error("'$ref' must be a string at " + at.Text());
  const std::string& text = ref.get_ref<const std::string&>();
  if (text.empty() || text[0] != '#')
    return Error("unsupported JSON Schema keyword '$ref' to another document ('" + text +
                 "'; only \"#...\" references within the schema) at " + at.Text());
  std::string pointer;  // the fragment, percent-decoded (RFC 3986)
  for (size_t i = 1; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() && std::isxdigit(uint8_t(text[i + 1])) &&
        std::isxdigit(uint8_t(text[i + 2]))) {
      pointer += char(std::stoi(text.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      pointer += text[i];
    }
  }
  if (!pointer.empty() && pointer[0] != '/')
    return Error("unsupported JSON Schema keyword '$ref' to an anchor ('" + text + "') at " +
                 at.Text());
  const Json* node = &root_;
  At where;
  for (size_t pos = 0; pos < pointer.size();) {
    const size_t next = std::min(pointer.find('/', pos + 1), pointer.size());
    std::string token;
    for (size_t i = pos + 1; i < next; ++i) {
      if (pointer[i] == '~' && i + 1 < next && (pointer[i + 1] == '0' || pointer[i + 1] == '1')) {
        token += pointer[++i] == '0' ? '~' : '/';
      } else {
        token += pointer[i];
      }
    }
    pos = next;
    const Json* child = nullptr;
    if (node->is_object()) {
      auto it = node->find(token);
      if (it != node->end()) child = &*it;
    } else if (node->is_array() && !token.empty() &&
               token.find_first_not_of("0123456789") == std::string::npos && token.size() < 10 &&
               std::stoul(token) < node->size()) {
      child = &(*node)[std::stoul(token)];
    }
    if (!child) return Error("'$ref' '" + text + "' names no part of the schema at " + at.Text());
    node = child;
    where = where.Key(token);
  }
  return std::make_pair(node, where.ptr);
}

Result<int32_t> SchemaCompiler::CompileRef(const Json& ref, const At& at) {
  BRISK_ASSIGN_OR_RETURN(auto target, Resolve(ref, at));
  auto [it, fresh] = ref_rules_.try_emplace(target.second, -1);
  if (!fresh) return it->second;
  const int32_t rule = b_.NewRule(Name("ref"));
  it->second = rule;
  BRISK_ASSIGN_OR_RETURN(int32_t body, Compile(*target.first, At{target.second, at.depth + 1}));
  if (body == rule)
    return Error("'$ref' at " + at.Text() + " refers to itself without any JSON text between");
  b_.Define(rule, {{Symbol::Ref(body)}});
  return rule;
}

Result<int32_t> SchemaCompiler::CompileUnion(const Json& branches, const At& at) {
  if (!branches.is_array() || branches.empty())
    return Error("'anyOf' / 'oneOf' must be a non-empty array at " + at.Text());
  std::vector<Sequence> alts;
  for (size_t i = 0; i < branches.size(); ++i) {
    const Json& branch = branches[i];
    if (branch.is_boolean() && !branch.get<bool>()) continue;  // matches nothing: no alternative
    BRISK_ASSIGN_OR_RETURN(int32_t r, Compile(branch, at.Index(i)));
    alts.push_back({Symbol::Ref(r)});
  }
  if (alts.empty()) return Nothing("every branch is false", at);
  if (alts.size() == 1) return alts[0][0].rule;
  return b_.AddRule(Name("any-of"), std::move(alts));
}

Result<int32_t> SchemaCompiler::CompileAlternatives(const std::vector<Json>& alts, const At& at) {
  std::vector<Sequence> seqs;
  for (const Json& alt : alts) {
    BRISK_ASSIGN_OR_RETURN(int32_t r, CompileFlat(alt, at));
    seqs.push_back({Symbol::Ref(r)});
  }
  if (seqs.empty()) return Nothing("its allOf / anyOf / oneOf parts contradict each other", at);
  if (seqs.size() == 1) return seqs[0][0].rule;
  return b_.AddRule(Name("all-of"), std::move(seqs));
}

Result<int32_t> SchemaCompiler::CompileFlat(const Json& s, const At& at) {
  BRISK_ASSIGN_OR_RETURN(TypeSet types, SchemaTypes(*this, s, at));
  if (s.contains("enum") || s.contains("const")) return CompileLiterals(s, at, types);
  std::vector<Sequence> alts;
  if (types & kNull) alts.push_back(GrammarBuilder::Literal("null"));
  if (types & kBoolean) {
    alts.push_back(GrammarBuilder::Literal("true"));
    alts.push_back(GrammarBuilder::Literal("false"));
  }
  auto add = [&](Result<int32_t> r) -> Status {
    if (!r.ok()) return r.status();
    alts.push_back({Symbol::Ref(*r)});
    return Status::Ok();
  };
  if (types & kObject) BRISK_RETURN_IF_ERROR(add(CompileObject(s, at)));
  if (types & kArray) BRISK_RETURN_IF_ERROR(add(CompileArray(s, at)));
  if (types & kString) BRISK_RETURN_IF_ERROR(add(CompileString(s, at)));
  if (types & (kNumber | kInteger))
    BRISK_RETURN_IF_ERROR(add(CompileNumeric(s, at, !(types & kNumber))));
  if (alts.size() == 1 && alts[0].size() == 1 && alts[0][0].is_rule()) return alts[0][0].rule;
  return b_.AddRule(Name("value"), std::move(alts));
}

}  // namespace schema

Result<int32_t> AddJsonSchema(GrammarBuilder& b, const nlohmann::ordered_json& schema,
                              std::string_view name, const JsonSchemaOptions& options) {
  if (schema::DeeperThan(schema, schema::kMaxDocumentDepth))
    return Status::InvalidArgument("the JSON Schema document nests deeper than " +
                                       std::to_string(schema::kMaxDocumentDepth) + " levels",
                                   options.field);
  // nlohmann throws on misuse; nothing it throws may leave this layer.
  try {
    schema::SchemaCompiler c(b, schema, options, name);
    return c.Compile(schema, schema::At{});
  } catch (const nlohmann::ordered_json::exception& e) {
    return Status::InvalidArgument(std::string("JSON Schema: ") + e.what(), options.field);
  }
}

Result<Grammar> CompileJsonSchema(const nlohmann::ordered_json& schema,
                                  const JsonSchemaOptions& options) {
  GrammarBuilder b;
  BRISK_ASSIGN_OR_RETURN(int32_t root, AddJsonSchema(b, schema, "", options));
  Result<Grammar> g = std::move(b).Build(root);
  if (!g.ok())
    return Status::InvalidArgument("the JSON Schema cannot be enforced: " + g.message(),
                                   options.field);
  return g;
}

int32_t AddAnyJsonValue(GrammarBuilder& b, const JsonSchemaOptions& options) {
  schema::JsonLexicon lex(b, options, "");
  return lex.AnyValue();
}

}  // namespace brisk::structured
