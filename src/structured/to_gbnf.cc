// ToGbnf (grammar.h): a Grammar written in llama.cpp's GBNF, spelled so that ParseGbnf (and
// llama.cpp) read back the same language: only the escapes both accept, `-` and `^` in classes
// written as \x escapes so their position can never change their meaning, names made valid.
#include <cstdio>
#include <string>
#include <unordered_set>

#include "structured/grammar.h"

namespace brisk::structured {
namespace {

bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_';
}

// Valid GBNF names, unique, the root called "root" (GBNF's start rule).
std::vector<std::string> GbnfNames(const Grammar& g) {
  std::vector<std::string> names(g.rules.size());
  std::unordered_set<std::string> taken = {"root"};
  for (size_t i = 0; i < g.rules.size(); ++i) {
    if (int32_t(i) == g.root) {
      names[i] = "root";
      continue;
    }
    std::string base;
    for (char c : g.rules[i].name) base += IsNameChar(c) ? c : '-';
    if (base.empty()) base = "rule";
    std::string name = base;
    for (int k = 1; taken.count(name); ++k) name = base + "-" + std::to_string(k);
    taken.insert(name);
    names[i] = std::move(name);
  }
  return names;
}

// One character inside "..." (in_class false) or [...] (in_class true).
void AppendChar(uint32_t c, bool in_class, std::string* out) {
  char buf[16];
  const bool backslashed = c == '\\' || (in_class ? c == ']' || c == '[' : c == '"');
  // In a class '-' and '^' mean something by position; as \x escapes they never do.
  const bool hexed = c < 0x20 || c == 0x7F || (in_class && (c == '-' || c == '^'));
  if (c == '\n' || c == '\r' || c == '\t') {
    *out += c == '\n' ? "\\n" : c == '\r' ? "\\r" : "\\t";
  } else if (backslashed) {
    *out += '\\';
    *out += char(c);
  } else if (hexed) {
    std::snprintf(buf, sizeof buf, "\\x%02X", unsigned(c));
    *out += buf;
  } else if (c >= 0xD800 && c <= 0xDFFF) {  // not encodable: keep the value, as an escape
    std::snprintf(buf, sizeof buf, "\\u%04X", unsigned(c));
    *out += buf;
  } else {
    AppendUtf8(c, out);
  }
}

void AppendSet(const std::vector<CharRange>& chars, std::string* out) {
  if (chars.empty()) {  // only in a grammar Build would refuse
    *out += "[]";
    return;
  }
  if (chars.size() == 1 && chars[0].lo == 0 && chars[0].hi >= kMaxCodePoint) {
    *out += '.';
    return;
  }
  // A set reaching both ends reads better (and shorter) as the complement of its gaps.
  const bool negate = chars.front().lo == 0 && chars.back().hi >= kMaxCodePoint;
  std::vector<CharRange> shown = chars;
  if (negate) {
    shown.clear();
    for (size_t i = 0; i + 1 < chars.size(); ++i)
      shown.push_back({chars[i].hi + 1, chars[i + 1].lo - 1});
  }
  *out += negate ? "[^" : "[";
  for (const CharRange& r : shown) {
    AppendChar(r.lo, true, out);
    if (r.hi == r.lo) continue;
    if (r.hi > r.lo + 1) *out += '-';
    AppendChar(r.hi, true, out);
  }
  *out += ']';
}

bool IsSingleChar(const Symbol& s) {
  return !s.is_rule() && s.chars.size() == 1 && s.chars[0].lo == s.chars[0].hi;
}

void AppendSequence(const Sequence& seq, const std::vector<std::string>& names, std::string* out) {
  if (seq.empty()) {
    *out += "\"\"";
    return;
  }
  for (size_t i = 0; i < seq.size();) {
    if (i > 0) *out += ' ';
    if (seq[i].is_rule()) {
      *out += names[size_t(seq[i].rule)];
      ++i;
    } else if (!IsSingleChar(seq[i])) {
      AppendSet(seq[i].chars, out);
      ++i;
    } else {  // a run of single characters: one literal
      *out += '"';
      for (; i < seq.size() && IsSingleChar(seq[i]); ++i)
        AppendChar(seq[i].chars[0].lo, false, out);
      *out += '"';
    }
  }
}

void AppendRule(const Rule& r, const std::string& name, const std::vector<std::string>& names,
                std::string* out) {
  *out += name + " ::= ";
  for (size_t a = 0; a < r.alternatives.size(); ++a) {
    if (a > 0) *out += " | ";
    AppendSequence(r.alternatives[a], names, out);
  }
  *out += '\n';
}

}  // namespace

std::string ToGbnf(const Grammar& g) {
  std::string out;
  if (g.root < 0 || size_t(g.root) >= g.rules.size()) return out;
  const std::vector<std::string> names = GbnfNames(g);
  AppendRule(g.rules[size_t(g.root)], names[size_t(g.root)], names, &out);
  for (size_t i = 0; i < g.rules.size(); ++i)
    if (int32_t(i) != g.root) AppendRule(g.rules[i], names[i], names, &out);
  return out;
}

}  // namespace brisk::structured
