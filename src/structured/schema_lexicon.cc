// The lexical rules of JSON (RFC 8259) shared by every schema: whitespace, string characters,
// numbers, and "any value". Each is made on first use, once per compilation.
#include <algorithm>
#include <string>
#include <utility>

#include "structured/schema_compiler.h"

namespace brisk::structured::schema {
namespace {

Symbol Ch(char c) { return Symbol::Char(uint32_t(uint8_t(c))); }
Symbol Range(char lo, char hi) { return Symbol::Set({{uint32_t(lo), uint32_t(hi)}}); }
Symbol Digit() { return Range('0', '9'); }
Symbol Hex() { return Symbol::Set({{'0', '9'}, {'a', 'f'}, {'A', 'F'}}); }

// Repeat on bounds we chose ourselves cannot fail.
int32_t MustRepeat(GrammarBuilder& b, std::string_view name, Sequence item, int min, int max) {
  Result<int32_t> r = b.Repeat(name, std::move(item), min, max);
  BRISK_CHECK(r.ok());
  return *r;
}

}  // namespace

JsonLexicon::JsonLexicon(GrammarBuilder& b, const JsonSchemaOptions& options, std::string prefix)
    : b_(b), options_(options), prefix_(std::move(prefix)) {}

// One space, or one line break and an indentation: what compact and pretty-printed JSON use
// between tokens, and bounded so a model cannot loop on whitespace.
void JsonLexicon::Ws(Sequence* s) {
  if (!options_.any_whitespace) return;
  if (ws_ < 0) {
    const int indent = std::clamp(options_.max_indent, 0, 64);
    const int32_t pad =
        MustRepeat(b_, Name("indent"), {Symbol::Set({{' ', ' '}, {'\t', '\t'}})}, 0, indent);
    ws_ = b_.AddRule(Name("ws"), {{}, {Ch(' ')}, {Ch('\n'), Symbol::Ref(pad)}});
  }
  s->push_back(Symbol::Ref(ws_));
}

// Raw characters except '"', '\' and controls; the two-character escapes; \uXXXX outside the
// surrogates; and a surrogate pair as one character (so length counts code points, as JSON
// Schema does).
int32_t JsonLexicon::StringChar() {
  if (char_ >= 0) return char_;
  const Symbol raw = Symbol::NotSet({{0, 0x1F}, {'"', '"'}, {'\\', '\\'}});
  const Symbol short_escape = Symbol::Set({{'"', '"'},
                                           {'\\', '\\'},
                                           {'/', '/'},
                                           {'b', 'b'},
                                           {'f', 'f'},
                                           {'n', 'n'},
                                           {'r', 'r'},
                                           {'t', 't'}});
  const Symbol d = Symbol::Set({{'d', 'd'}, {'D', 'D'}});
  const Symbol not_d = Symbol::Set({{'0', '9'}, {'a', 'c'}, {'A', 'C'}, {'e', 'f'}, {'E', 'F'}});
  const Symbol high = Symbol::Set({{'8', '9'}, {'a', 'b'}, {'A', 'B'}});
  const Symbol low = Symbol::Set({{'c', 'f'}, {'C', 'F'}});
  char_ = b_.AddRule(Name("char"), {{raw},
                                    {Ch('\\'), short_escape},
                                    {Ch('\\'), Ch('u'), not_d, Hex(), Hex(), Hex()},
                                    {Ch('\\'), Ch('u'), d, Range('0', '7'), Hex(), Hex()},
                                    {Ch('\\'), Ch('u'), d, high, Hex(), Hex(), Ch('\\'), Ch('u'), d,
                                     low, Hex(), Hex()}});
  return char_;
}

int32_t JsonLexicon::FreeString() {
  if (string_ >= 0) return string_;
  const int32_t body = MustRepeat(b_, Name("chars"), {Symbol::Ref(StringChar())}, 0, -1);
  string_ = b_.AddRule(Name("string"), {{Ch('"'), Symbol::Ref(body), Ch('"')}});
  return string_;
}

int32_t JsonLexicon::Integer() {
  if (integer_ >= 0) return integer_;
  const int32_t tail = MustRepeat(b_, Name("digits"), {Digit()}, 0, kMaxIntDigits - 1);
  const int32_t magnitude =
      b_.AddRule(Name("natural"), {{Ch('0')}, {Range('1', '9'), Symbol::Ref(tail)}});
  integer_ =
      b_.AddRule(Name("integer"), {{Symbol::Ref(magnitude)}, {Ch('-'), Symbol::Ref(magnitude)}});
  return integer_;
}

int32_t JsonLexicon::Number() {
  if (number_ >= 0) return number_;
  const int32_t frac_digits = MustRepeat(b_, Name("frac"), {Digit()}, 1, kMaxFracDigits);
  const int32_t frac = b_.AddRule(Name("fraction"), {{}, {Ch('.'), Symbol::Ref(frac_digits)}});
  const int32_t exp_digits = MustRepeat(b_, Name("exp"), {Digit()}, 1, kMaxExpDigits);
  const int32_t sign = b_.AddRule(Name("sign"), {{}, {Symbol::Set({{'+', '+'}, {'-', '-'}})}});
  const int32_t exp = b_.AddRule(
      Name("exponent"),
      {{}, {Symbol::Set({{'e', 'e'}, {'E', 'E'}}), Symbol::Ref(sign), Symbol::Ref(exp_digits)}});
  number_ =
      b_.AddRule(Name("number"), {{Symbol::Ref(Integer()), Symbol::Ref(frac), Symbol::Ref(exp)}});
  return number_;
}

int32_t JsonLexicon::AnyValue() {
  if (value_ >= 0) return value_;
  value_ = b_.NewRule(Name("value"));
  const int32_t object = AnyObject(value_), array = AnyArray(value_);
  b_.Define(value_, {{Symbol::Ref(object)},
                     {Symbol::Ref(array)},
                     {Symbol::Ref(FreeString())},
                     {Symbol::Ref(Number())},
                     GrammarBuilder::Literal("true"),
                     GrammarBuilder::Literal("false"),
                     GrammarBuilder::Literal("null")});
  return value_;
}

int32_t JsonLexicon::AnyObject(int32_t value) {
  Sequence member;
  Ws(&member);
  member.push_back(Symbol::Ref(FreeString()));
  Ws(&member);
  member.push_back(Ch(':'));
  Ws(&member);
  member.push_back(Symbol::Ref(value));
  Ws(&member);
  Sequence more = {Ch(',')};
  more.insert(more.end(), member.begin(), member.end());
  const int32_t rest = MustRepeat(b_, Name("members"), more, 0, -1);
  Sequence empty = {Ch('{')};
  Ws(&empty);
  empty.push_back(Ch('}'));
  Sequence full = {Ch('{')};
  full.insert(full.end(), member.begin(), member.end());
  full.push_back(Symbol::Ref(rest));
  full.push_back(Ch('}'));
  return b_.AddRule(Name("object"), {std::move(empty), std::move(full)});
}

int32_t JsonLexicon::AnyArray(int32_t value) {
  Sequence element;
  Ws(&element);
  element.push_back(Symbol::Ref(value));
  Ws(&element);
  Sequence more = {Ch(',')};
  more.insert(more.end(), element.begin(), element.end());
  const int32_t rest = MustRepeat(b_, Name("elements"), more, 0, -1);
  Sequence empty = {Ch('[')};
  Ws(&empty);
  empty.push_back(Ch(']'));
  Sequence full = {Ch('[')};
  full.insert(full.end(), element.begin(), element.end());
  full.push_back(Symbol::Ref(rest));
  full.push_back(Ch(']'));
  return b_.AddRule(Name("array"), {std::move(empty), std::move(full)});
}

}  // namespace brisk::structured::schema
