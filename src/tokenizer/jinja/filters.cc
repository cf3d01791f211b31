// Built-in filters.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "tokenizer/jinja/builtins_util.h"
#include "tokenizer/jinja/text.h"

namespace brisk::jinja {

using internal::BoolArg;
using internal::IntArg;
using internal::IterItems;

namespace {

enum class F : int {
  kAbs,
  kAttr,
  kCapitalize,
  kCenter,
  kCount,
  kDefault,
  kDictsort,
  kEscape,
  kFirst,
  kFloat,
  kFormat,
  kIndent,
  kInt,
  kItems,
  kJoin,
  kLast,
  kLength,
  kList,
  kLower,
  kMap,
  kMax,
  kMin,
  kReject,
  kRejectattr,
  kReplace,
  kReverse,
  kRound,
  kSafe,
  kSelect,
  kSelectattr,
  kSort,
  kString,
  kSum,
  kTitle,
  kTojson,
  kTrim,
  kUnique,
  kUpper,
  kWordcount,
};

struct FilterName {
  std::string_view name;
  F id;
};

constexpr FilterName kFilters[] = {
    {"abs", F::kAbs},
    {"attr", F::kAttr},
    {"capitalize", F::kCapitalize},
    {"center", F::kCenter},
    {"count", F::kCount},
    {"d", F::kDefault},
    {"default", F::kDefault},
    {"dictsort", F::kDictsort},
    {"e", F::kEscape},
    {"escape", F::kEscape},
    {"first", F::kFirst},
    {"float", F::kFloat},
    {"format", F::kFormat},
    {"indent", F::kIndent},
    {"int", F::kInt},
    {"items", F::kItems},
    {"join", F::kJoin},
    {"last", F::kLast},
    {"length", F::kLength},
    {"list", F::kList},
    {"lower", F::kLower},
    {"map", F::kMap},
    {"max", F::kMax},
    {"min", F::kMin},
    {"reject", F::kReject},
    {"rejectattr", F::kRejectattr},
    {"replace", F::kReplace},
    {"reverse", F::kReverse},
    {"round", F::kRound},
    {"safe", F::kSafe},
    {"select", F::kSelect},
    {"selectattr", F::kSelectattr},
    {"sort", F::kSort},
    {"string", F::kString},
    {"sum", F::kSum},
    {"title", F::kTitle},
    {"tojson", F::kTojson},
    {"trim", F::kTrim},
    {"unique", F::kUnique},
    {"upper", F::kUpper},
    {"wordcount", F::kWordcount},
};

Result<Value> Length(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kString:
      return Value::Int(static_cast<int64_t>(text::Length(v.s())));
    case Value::Kind::kArray:
      return Value::Int(static_cast<int64_t>(v.arr().items.size()));
    case Value::Kind::kObject:
      if (v.obj().is_namespace) break;
      return Value::Int(static_cast<int64_t>(v.obj().size()));
    case Value::Kind::kUndefined:
      return Value::Int(0);
    default:
      break;
  }
  return Status::Error(std::string("object of type '") + v.TypeName() + "' has no len()");
}

Result<Value> ParseIntValue(const Value& v, const Value* dflt, int64_t base) {
  const Value fallback = dflt ? *dflt : Value::Int(0);
  if (v.is_integral()) return Value::Int(v.i());
  if (v.is_float()) {
    if (!std::isfinite(v.f()) || std::fabs(v.f()) >= 9.2e18) return fallback;
    return Value::Int(static_cast<int64_t>(v.f()));
  }
  if (!v.is_string()) return fallback;
  std::string s;
  for (char c : text::Strip(v.s(), nullptr, true, true)) {
    if (c != '_') s.push_back(c);
  }
  bool neg = false;
  std::string_view d = s;
  if (!d.empty() && (d[0] == '+' || d[0] == '-')) {
    neg = d[0] == '-';
    d.remove_prefix(1);
  }
  if ((base == 16 || base == 0) && d.size() > 2 && d[0] == '0' && (d[1] == 'x' || d[1] == 'X')) {
    d.remove_prefix(2);
    base = 16;
  } else if ((base == 8 || base == 0) && d.size() > 2 && d[0] == '0' &&
             (d[1] == 'o' || d[1] == 'O')) {
    d.remove_prefix(2);
    base = 8;
  } else if ((base == 2 || base == 0) && d.size() > 2 && d[0] == '0' &&
             (d[1] == 'b' || d[1] == 'B')) {
    d.remove_prefix(2);
    base = 2;
  }
  if (base == 0) base = 10;
  int64_t out = 0;
  if (base >= 2 && base <= 36 && !d.empty()) {
    auto r = std::from_chars(d.data(), d.data() + d.size(), out, static_cast<int>(base));
    if (r.ec == std::errc() && r.ptr == d.data() + d.size()) return Value::Int(neg ? -out : out);
  }
  // Jinja falls back to int(float(value)).
  char* end = nullptr;
  const double f = std::strtod(s.c_str(), &end);
  if (!s.empty() && end == s.c_str() + s.size() && std::isfinite(f) && std::fabs(f) < 9.2e18) {
    return Value::Int(static_cast<int64_t>(f));
  }
  return fallback;
}

Result<Value> Tojson(const Value& v, const CallArgs& args) {
  BRISK_RETURN_IF_ERROR(
      args.Check("tojson", 4, {"ensure_ascii", "indent", "separators", "sort_keys"}));
  JsonOptions opts;
  opts.ensure_ascii = BoolArg(args.Get(0, "ensure_ascii"), false);
  const Value* indent = args.Get(1, "indent");
  if (indent != nullptr && !indent->is_none()) {
    opts.pretty = true;
    if (indent->is_string()) {
      opts.indent = indent->s();
    } else if (indent->is_integral()) {
      opts.indent.assign(static_cast<size_t>(std::clamp<int64_t>(indent->i(), 0, 64)), ' ');
    } else {
      return Status::Error("indent must be an integer or a string");
    }
    opts.item_sep = ",";
  }
  const Value* seps = args.Get(2, "separators");
  if (seps != nullptr && !seps->is_none()) {
    if (!seps->is_array() || seps->arr().items.size() != 2 || !seps->arr().items[0].is_string() ||
        !seps->arr().items[1].is_string()) {
      return Status::Error("separators must be a pair of strings");
    }
    opts.item_sep = seps->arr().items[0].s();
    opts.key_sep = seps->arr().items[1].s();
  }
  opts.sort_keys = BoolArg(args.Get(3, "sort_keys"), false);
  std::string out;
  BRISK_RETURN_IF_ERROR(AppendJson(v, opts, &out));
  return Value::Str(std::move(out));
}

Result<Value> Indent(const Value& v, const CallArgs& args) {
  BRISK_RETURN_IF_ERROR(args.Check("indent", 3, {"width", "first", "blank"}));
  const Value* w = args.Get(0, "width");
  std::string pad =
      (w && w->is_string())
          ? w->s()
          : std::string(static_cast<size_t>(std::clamp<int64_t>(IntArg(w, 4), 0, 256)), ' ');
  const bool first = BoolArg(args.Get(1, "first"), false);
  const bool blank = BoolArg(args.Get(2, "blank"), false);
  const std::string s = ToStr(v) + "\n";
  const std::vector<std::string_view> lines = text::SplitLines(s);
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i > 0) {
      out.push_back('\n');
      if (blank || !lines[i].empty()) out += pad;
    }
    out.append(lines[i]);
  }
  if (first) out.insert(0, pad);
  if (out.size() > args.max_string) return internal::TooLong();
  return Value::Str(std::move(out));
}

}  // namespace

int FindFilter(std::string_view name) {
  for (const FilterName& f : kFilters) {
    if (f.name == name) return static_cast<int>(f.id);
  }
  return -1;
}

Result<Value> ApplyFilter(int id, const Value& v, const CallArgs& args) {
  switch (static_cast<F>(id)) {
    case F::kAbs:
      if (v.is_float()) return Value::Float(std::fabs(v.f()));
      if (v.is_integral() && v.i() != INT64_MIN) return Value::Int(std::llabs(v.i()));
      return Status::Error(std::string("bad operand type for abs(): '") + v.TypeName() + "'");
    case F::kAttr: {
      const Value* name = args.Get(0, "name");
      if (name == nullptr || !name->is_string()) return Status::Error("expects an attribute name");
      if (v.is_object() && v.obj().is_namespace) {
        const Value* x = v.obj().Find(name->s());
        if (x != nullptr) return *x;
      }
      return Value::Undefined(name->s());
    }
    case F::kCapitalize:
      return Value::Str(text::Capitalize(ToStr(v)));
    case F::kCenter: {
      // Python str.center; CPython puts left = pad / 2 + (pad & width & 1) spaces first.
      const std::string str = ToStr(v);
      const int64_t width = std::min<int64_t>(IntArg(args.Get(0, "width"), 80), 1 << 20);
      const auto len = static_cast<int64_t>(text::Length(str));
      if (width <= len) return Value::Str(str);
      const int64_t pad = width - len;
      const int64_t left = pad / 2 + (pad & width & 1);
      return Value::Str(std::string(static_cast<size_t>(left), ' ') + str +
                        std::string(static_cast<size_t>(pad - left), ' '));
    }
    case F::kCount:
    case F::kLength:
      return Length(v);
    case F::kDefault: {
      BRISK_RETURN_IF_ERROR(args.Check("default", 2, {"default_value", "boolean"}));
      const Value* d = args.Get(0, "default_value");
      const bool boolean = BoolArg(args.Get(1, "boolean"), false);
      if (v.is_undefined() || (boolean && !v.Truthy())) return d ? *d : Value::Str("");
      return v;
    }
    case F::kEscape: {
      std::string out;
      for (char c : ToStr(v)) {
        switch (c) {
          case '&':
            out += "&amp;";
            break;
          case '<':
            out += "&lt;";
            break;
          case '>':
            out += "&gt;";
            break;
          case '"':
            out += "&#34;";
            break;
          case '\'':
            out += "&#39;";
            break;
          default:
            out.push_back(c);
        }
      }
      return Value::Str(std::move(out));
    }
    case F::kFirst:
    case F::kLast: {
      const bool first = static_cast<F>(id) == F::kFirst;
      if (v.is_string() && !v.s().empty()) {
        const std::vector<size_t> off = text::CodePointOffsets(v.s());
        const size_t i = first ? 0 : off.size() - 2;
        return Value::Str(v.s().substr(off[i], off[i + 1] - off[i]));
      }
      BRISK_ASSIGN_OR_RETURN(std::vector<Value> items, IterItems(v));
      if (items.empty()) return Value::Undefined(first ? "first item" : "last item");
      return first ? items.front() : items.back();
    }
    case F::kFloat: {
      const Value* d = args.Get(0, "default");
      if (v.is_number()) return Value::Float(v.f());
      if (v.is_string()) {
        const std::string s(text::Strip(v.s(), nullptr, true, true));
        char* end = nullptr;
        const double f = std::strtod(s.c_str(), &end);
        if (!s.empty() && end == s.c_str() + s.size()) return Value::Float(f);
      }
      return d ? *d : Value::Float(0.0);
    }
    case F::kFormat: {
      Value tuple = Value::List(args.pos, true);
      BRISK_ASSIGN_OR_RETURN(std::string s, PercentFormat(ToStr(v), tuple));
      return Value::Str(std::move(s));
    }
    case F::kIndent:
      return Indent(v, args);
    case F::kInt:
      return ParseIntValue(v, args.Get(0, "default"), IntArg(args.Get(1, "base"), 10));
    case F::kItems: {
      if (v.is_undefined()) return Value::List({});
      if (!v.is_object() || v.obj().is_namespace) {
        return Status::Error(std::string("can only get item pairs from a mapping, not '") +
                             v.TypeName() + "'");
      }
      std::vector<Value> pairs;
      for (const auto& [k, x] : v.obj().items)
        pairs.push_back(Value::List({Value::Str(k), x}, true));
      return Value::List(std::move(pairs));
    }
    case F::kList: {
      BRISK_ASSIGN_OR_RETURN(std::vector<Value> items, IterItems(v));
      return Value::List(std::move(items));
    }
    case F::kLower:
      return Value::Str(text::Lower(ToStr(v)));
    case F::kUpper:
      return Value::Str(text::Upper(ToStr(v)));
    case F::kTitle: {
      // Jinja's title filter (not str.title): words start after whitespace, '-', or an
      // opening bracket; each word is capitalized.
      const std::string s = ToStr(v);
      std::string out;
      size_t pos = 0;
      while (pos < s.size()) {
        size_t end = pos;
        while (end < s.size()) {
          size_t next = end;
          const uint32_t cp = text::Decode(s, &next);
          if (text::IsSpace(cp) || cp == '-' || cp == '(' || cp == '{' || cp == '[' || cp == '<') {
            break;
          }
          end = next;
        }
        out += text::Capitalize(std::string_view(s).substr(pos, end - pos));
        pos = end;
        while (pos < s.size()) {
          size_t next = pos;
          const uint32_t cp = text::Decode(s, &next);
          if (!(text::IsSpace(cp) || cp == '-' || cp == '(' || cp == '{' || cp == '[' ||
                cp == '<')) {
            break;
          }
          out.append(s, pos, next - pos);
          pos = next;
        }
      }
      return Value::Str(std::move(out));
    }
    case F::kMap:
      return internal::FilterMap(v, args);
    case F::kMax:
    case F::kMin:
      return internal::FilterMinMax(v, args, static_cast<F>(id) == F::kMax);
    case F::kSelect:
      return internal::FilterSelect(v, args, false, true);
    case F::kReject:
      return internal::FilterSelect(v, args, false, false);
    case F::kSelectattr:
      return internal::FilterSelect(v, args, true, true);
    case F::kRejectattr:
      return internal::FilterSelect(v, args, true, false);
    case F::kDictsort:
      return internal::FilterDictsort(v, args);
    case F::kJoin:
      return internal::FilterJoin(v, args);
    case F::kSort:
      return internal::FilterSort(v, args);
    case F::kSum:
      return internal::FilterSum(v, args);
    case F::kUnique:
      return internal::FilterUnique(v, args);
    case F::kReplace: {
      BRISK_RETURN_IF_ERROR(args.Check("replace", 3, {"old", "new", "count"}));
      const Value* from = args.Get(0, "old");
      const Value* to = args.Get(1, "new");
      if (from == nullptr || to == nullptr) return Status::Error("expects old and new strings");
      const std::string s = ToStr(v);
      const std::string f = ToStr(*from);
      const std::string t = ToStr(*to);
      if (t.size() > f.size() && (t.size() - f.size()) * (s.size() + 1) > args.max_string) {
        return internal::TooLong();
      }
      const Value* count = args.Get(2, "count");
      return Value::Str(text::Replace(s, f, t, count && !count->is_none() ? count->i() : -1));
    }
    case F::kReverse: {
      if (v.is_string()) {
        const std::vector<size_t> off = text::CodePointOffsets(v.s());
        std::string out;
        for (size_t i = off.size() - 1; i > 0; --i)
          out.append(v.s(), off[i - 1], off[i] - off[i - 1]);
        return Value::Str(std::move(out));
      }
      BRISK_ASSIGN_OR_RETURN(std::vector<Value> items, IterItems(v));
      std::reverse(items.begin(), items.end());
      return Value::List(std::move(items));
    }
    case F::kRound: {
      if (!v.is_number()) return Status::Error("expects a number");
      const int64_t precision = IntArg(args.Get(0, "precision"), 0);
      const Value* method = args.Get(1, "method");
      const std::string m = method && method->is_string() ? method->s() : "common";
      if (v.is_integral() && m == "common") return Value::Int(v.i());
      if (m == "common" && precision >= 0) {
        // printf rounds the exact binary value, halves to even, like Python's round().
        char buf[400];
        snprintf(buf, sizeof(buf), "%.*f", static_cast<int>(std::min<int64_t>(precision, 30)),
                 v.f());
        return Value::Float(std::strtod(buf, nullptr));
      }
      const double scale = std::pow(10.0, static_cast<double>(precision));
      const double x = v.f() * scale;
      double r;
      if (m == "floor") {
        r = std::floor(x);
      } else if (m == "ceil") {
        r = std::ceil(x);
      } else if (m == "common") {
        r = std::nearbyint(x);  // Python rounds halves to even
      } else {
        return Status::Error("method must be common, ceil or floor");
      }
      return Value::Float(r / scale);
    }
    case F::kSafe:
      return v;
    case F::kString:
      return Value::Str(ToStr(v));
    case F::kTojson:
      return Tojson(v, args);
    case F::kTrim: {
      const Value* chars = args.Get(0, "chars");
      const std::string s = ToStr(v);
      const std::string* set = chars && chars->is_string() ? &chars->s() : nullptr;
      return Value::Str(std::string(text::Strip(s, set, true, true)));
    }
    case F::kWordcount: {
      const std::string s = ToStr(v);
      int64_t words = 0;
      bool in_word = false;
      for (char c : s) {
        const auto u = static_cast<unsigned char>(c);
        const bool w = std::isalnum(u) || c == '_' || u >= 0x80;
        if (w && !in_word) ++words;
        in_word = w;
      }
      return Value::Int(words);
    }
  }
  return Status::Error("unknown filter");
}

}  // namespace brisk::jinja
