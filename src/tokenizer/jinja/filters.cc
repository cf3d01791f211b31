// Built-in filters.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iterator>

#include "tokenizer/jinja/builtins_util.h"
#include "tokenizer/jinja/text.h"
#include "util/html_escape.h"

namespace brisk::jinja {

using internal::BoolArg;
using internal::IntArg;
using internal::IterItems;

namespace {

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

Result<Value> Abs(const Value& v, const CallArgs&) {
  if (v.is_float()) return Value::Float(std::fabs(v.f()));
  if (v.is_integral() && v.i() != INT64_MIN) return Value::Int(std::llabs(v.i()));
  return Status::Error(std::string("bad operand type for abs(): '") + v.TypeName() + "'");
}

Result<Value> Attr(const Value& v, const CallArgs& args) {
  const Value* name = args.Get(0, "name");
  if (name == nullptr || !name->is_string()) return Status::Error("expects an attribute name");
  if (v.is_object() && v.obj().is_namespace) {
    const Value* x = v.obj().Find(name->s());
    if (x != nullptr) return *x;
  }
  return Value::Undefined(name->s());
}

Result<Value> Capitalize(const Value& v, const CallArgs&) {
  return Value::Str(text::Capitalize(ToStr(v)));
}

Result<Value> Center(const Value& v, const CallArgs& args) {
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

Result<Value> LengthFilter(const Value& v, const CallArgs&) { return Length(v); }

Result<Value> Default(const Value& v, const CallArgs& args) {
  BRISK_RETURN_IF_ERROR(args.Check("default", 2, {"default_value", "boolean"}));
  const Value* d = args.Get(0, "default_value");
  const bool boolean = BoolArg(args.Get(1, "boolean"), false);
  if (v.is_undefined() || (boolean && !v.Truthy())) return d ? *d : Value::Str("");
  return v;
}

Result<Value> Escape(const Value& v, const CallArgs&) {
  return Value::Str(HtmlEscape(ToStr(v), "&#34;"));  // markupsafe's entity for '"'
}

Result<Value> FirstOrLast(const Value& v, bool first) {
  if (v.is_string() && !v.s().empty()) {
    const std::vector<size_t> off = text::CodePointOffsets(v.s());
    const size_t i = first ? 0 : off.size() - 2;
    return Value::Str(v.s().substr(off[i], off[i + 1] - off[i]));
  }
  BRISK_ASSIGN_OR_RETURN(std::vector<Value> items, IterItems(v));
  if (items.empty()) return Value::Undefined(first ? "first item" : "last item");
  return first ? items.front() : items.back();
}

Result<Value> First(const Value& v, const CallArgs&) { return FirstOrLast(v, true); }
Result<Value> Last(const Value& v, const CallArgs&) { return FirstOrLast(v, false); }

Result<Value> Float(const Value& v, const CallArgs& args) {
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

Result<Value> Format(const Value& v, const CallArgs& args) {
  Value tuple = Value::List(args.pos, true);
  BRISK_ASSIGN_OR_RETURN(std::string s, PercentFormat(ToStr(v), tuple));
  return Value::Str(std::move(s));
}

Result<Value> Int(const Value& v, const CallArgs& args) {
  return ParseIntValue(v, args.Get(0, "default"), IntArg(args.Get(1, "base"), 10));
}

Result<Value> Items(const Value& v, const CallArgs&) {
  if (v.is_undefined()) return Value::List({});
  if (!v.is_object() || v.obj().is_namespace) {
    return Status::Error(std::string("can only get item pairs from a mapping, not '") +
                         v.TypeName() + "'");
  }
  std::vector<Value> pairs;
  for (const auto& [k, x] : v.obj().items) pairs.push_back(Value::List({Value::Str(k), x}, true));
  return Value::List(std::move(pairs));
}

Result<Value> List(const Value& v, const CallArgs&) {
  BRISK_ASSIGN_OR_RETURN(std::vector<Value> items, IterItems(v));
  return Value::List(std::move(items));
}

Result<Value> Lower(const Value& v, const CallArgs&) { return Value::Str(text::Lower(ToStr(v))); }
Result<Value> Upper(const Value& v, const CallArgs&) { return Value::Str(text::Upper(ToStr(v))); }

// Where Jinja's title filter starts a new word: after whitespace, '-' or an opening bracket.
bool IsTitleBreak(uint32_t cp) {
  return text::IsSpace(cp) || cp == '-' || cp == '(' || cp == '{' || cp == '[' || cp == '<';
}

// Jinja's title filter (not str.title): each word is capitalized.
Result<Value> Title(const Value& v, const CallArgs&) {
  const std::string s = ToStr(v);
  std::string out;
  size_t pos = 0;
  while (pos < s.size()) {
    size_t end = pos;
    while (end < s.size()) {
      size_t next = end;
      if (IsTitleBreak(text::Decode(s, &next))) break;
      end = next;
    }
    out += text::Capitalize(std::string_view(s).substr(pos, end - pos));
    pos = end;
    while (pos < s.size()) {
      size_t next = pos;
      if (!IsTitleBreak(text::Decode(s, &next))) break;
      out.append(s, pos, next - pos);
      pos = next;
    }
  }
  return Value::Str(std::move(out));
}

Result<Value> Max(const Value& v, const CallArgs& args) {
  return internal::FilterMinMax(v, args, true);
}
Result<Value> Min(const Value& v, const CallArgs& args) {
  return internal::FilterMinMax(v, args, false);
}
Result<Value> Select(const Value& v, const CallArgs& args) {
  return internal::FilterSelect(v, args, false, true);
}
Result<Value> Reject(const Value& v, const CallArgs& args) {
  return internal::FilterSelect(v, args, false, false);
}
Result<Value> Selectattr(const Value& v, const CallArgs& args) {
  return internal::FilterSelect(v, args, true, true);
}
Result<Value> Rejectattr(const Value& v, const CallArgs& args) {
  return internal::FilterSelect(v, args, true, false);
}

Result<Value> Replace(const Value& v, const CallArgs& args) {
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

Result<Value> Reverse(const Value& v, const CallArgs&) {
  if (v.is_string()) {
    const std::vector<size_t> off = text::CodePointOffsets(v.s());
    std::string out;
    for (size_t i = off.size() - 1; i > 0; --i) out.append(v.s(), off[i - 1], off[i] - off[i - 1]);
    return Value::Str(std::move(out));
  }
  BRISK_ASSIGN_OR_RETURN(std::vector<Value> items, IterItems(v));
  std::reverse(items.begin(), items.end());
  return Value::List(std::move(items));
}

Result<Value> Round(const Value& v, const CallArgs& args) {
  if (!v.is_number()) return Status::Error("expects a number");
  const int64_t precision = IntArg(args.Get(0, "precision"), 0);
  const Value* method = args.Get(1, "method");
  const std::string m = method && method->is_string() ? method->s() : "common";
  if (v.is_integral() && m == "common") return Value::Int(v.i());
  if (m == "common" && precision >= 0) {
    // printf rounds the exact binary value, halves to even, like Python's round().
    char buf[400];
    snprintf(buf, sizeof(buf), "%.*f", static_cast<int>(std::min<int64_t>(precision, 30)), v.f());
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

Result<Value> Safe(const Value& v, const CallArgs&) { return v; }
Result<Value> String(const Value& v, const CallArgs&) { return Value::Str(ToStr(v)); }

Result<Value> Trim(const Value& v, const CallArgs& args) {
  const Value* chars = args.Get(0, "chars");
  const std::string s = ToStr(v);
  const std::string* set = chars && chars->is_string() ? &chars->s() : nullptr;
  return Value::Str(std::string(text::Strip(s, set, true, true)));
}

Result<Value> Wordcount(const Value& v, const CallArgs&) {
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

using FilterFn = Result<Value> (*)(const Value& v, const CallArgs& args);

struct Filter {
  std::string_view name;
  FilterFn apply;
};

// Every supported filter by name; a filter's id is its index here.
constexpr Filter kFilters[] = {
    {"abs", Abs},
    {"attr", Attr},
    {"capitalize", Capitalize},
    {"center", Center},
    {"count", LengthFilter},
    {"d", Default},
    {"default", Default},
    {"dictsort", internal::FilterDictsort},
    {"e", Escape},
    {"escape", Escape},
    {"first", First},
    {"float", Float},
    {"format", Format},
    {"indent", Indent},
    {"int", Int},
    {"items", Items},
    {"join", internal::FilterJoin},
    {"last", Last},
    {"length", LengthFilter},
    {"list", List},
    {"lower", Lower},
    {"map", internal::FilterMap},
    {"max", Max},
    {"min", Min},
    {"reject", Reject},
    {"rejectattr", Rejectattr},
    {"replace", Replace},
    {"reverse", Reverse},
    {"round", Round},
    {"safe", Safe},
    {"select", Select},
    {"selectattr", Selectattr},
    {"sort", internal::FilterSort},
    {"string", String},
    {"sum", internal::FilterSum},
    {"title", Title},
    {"tojson", Tojson},
    {"trim", Trim},
    {"unique", internal::FilterUnique},
    {"upper", Upper},
    {"wordcount", Wordcount},
};

}  // namespace

int FindFilter(std::string_view name) {
  for (size_t i = 0; i < std::size(kFilters); ++i) {
    if (kFilters[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

Result<Value> ApplyFilter(int id, const Value& v, const CallArgs& args) {
  if (id < 0 || static_cast<size_t>(id) >= std::size(kFilters)) {
    return Status::Error("unknown filter");
  }
  return kFilters[id].apply(v, args);
}

}  // namespace brisk::jinja
