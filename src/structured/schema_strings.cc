// string schemas: free strings, length bounds, patterns and formats. Length counts code points
// (what JSON Schema and ajv count), each escape being the one character it stands for.
#include <string>
#include <vector>

#include "structured/regex.h"
#include "structured/schema_compiler.h"

namespace brisk::structured::schema {
namespace {

bool IsStringFormat(const std::string& f) {
  return !(f == "int32" || f == "int64" || f == "float" || f == "double");
}

Sequence Quoted(int32_t body) { return {Symbol::Char('"'), Symbol::Ref(body), Symbol::Char('"')}; }

}  // namespace

Result<int32_t> SchemaCompiler::CompileString(const Json& s, const At& at) {
  auto pattern = s.find("pattern"), format = s.find("format");
  std::string fmt;
  if (format != s.end() && format->is_string() && IsStringFormat(format->get<std::string>()))
    fmt = format->get<std::string>();
  // A pattern or format is a language of its own; intersecting it with a length bound (or with
  // each other) is beyond a grammar of this form, so the combination is refused.
  if (pattern != s.end() || !fmt.empty()) {
    const char* shaped = pattern != s.end() ? "pattern" : "format";
    std::vector<const char*> others = {"minLength", "maxLength"};
    if (pattern != s.end() && !fmt.empty()) others.push_back("format");
    for (const char* key : others) {
      if (s.contains(key))
        return Error("unsupported JSON Schema keyword '" + std::string(key) + "' beside '" +
                     shaped + "' at " + at.Text());
    }
  }
  if (!fmt.empty()) return CompileFormat(fmt);
  if (pattern != s.end()) {
    if (!pattern->is_string()) return Error("'pattern' must be a string at " + at.Text());
    Result<int32_t> body = AddRegex(b(), pattern->get<std::string>(), Name("pattern"),
                                    RegexOptions{.anchored = false, .json_escape = true});
    if (!body.ok())
      return Error("unsupported JSON Schema keyword 'pattern' value at " + at.Text() + ": " +
                   body.message());
    return b().AddRule(Name("string"), {Quoted(*body)});
  }
  BRISK_ASSIGN_OR_RETURN(int64_t min, CountKeyword(*this, s, "minLength", at, 0));
  BRISK_ASSIGN_OR_RETURN(int64_t max, CountKeyword(*this, s, "maxLength", at, -1));
  if (max >= 0 && min > max) return Nothing("'minLength' is above 'maxLength'", at);
  if (min == 0 && max < 0) return lex().FreeString();
  Result<int32_t> body =
      RepeatRange(b(), Name("chars"), {Symbol::Ref(lex().StringChar())}, min, max);
  if (!body.ok()) return WithField(body.status().WithContext("string length at " + at.Text()));
  return b().AddRule(Name("string"), {Quoted(*body)});
}

}  // namespace brisk::structured::schema
