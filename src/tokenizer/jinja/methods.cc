// Built-in tests, methods of str/dict/list values, global functions and shared helpers.
#include <algorithm>
#include <ctime>
#include <iterator>

#include "tokenizer/jinja/builtins_util.h"
#include "tokenizer/jinja/interpreter.h"
#include "tokenizer/jinja/text.h"

namespace brisk::jinja {

// Python str.format(), in format.cc.
Result<std::string> StrFormat(std::string_view fmt, const CallArgs& args);

const Value* CallArgs::Get(size_t i, std::string_view name) const {
  if (i < pos.size()) return &pos[i];
  for (const auto& [k, v] : kw) {
    if (k == name) return &v;
  }
  return nullptr;
}

Status CallArgs::Check(const char* what, size_t max_pos,
                       std::initializer_list<std::string_view> kws) const {
  if (pos.size() > max_pos) {
    return Status::Error(std::string(what) + " takes at most " + std::to_string(max_pos) +
                         " positional arguments");
  }
  for (const auto& [k, v] : kw) {
    if (std::find(kws.begin(), kws.end(), k) == kws.end()) {
      return Status::Error(std::string(what) + " got an unexpected keyword argument '" +
                           std::string(k) + "'");
    }
  }
  return Status::Ok();
}

namespace internal {

Result<std::vector<Value>> IterItems(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kArray:
      return v.arr().items;
    case Value::Kind::kUndefined:
      return std::vector<Value>{};
    case Value::Kind::kObject: {
      if (v.obj().is_namespace) break;
      std::vector<Value> keys;
      for (const auto& kv : v.obj().items) keys.push_back(Value::Str(kv.first));
      return keys;
    }
    case Value::Kind::kString: {
      std::vector<Value> chars;
      const std::string& s = v.s();
      for (size_t pos = 0; pos < s.size();) {
        const size_t start = pos;
        text::Decode(s, &pos);
        chars.push_back(Value::Str(s.substr(start, pos - start)));
      }
      return chars;
    }
    default:
      break;
  }
  return Status::Error(std::string("'") + v.TypeName() + "' object is not iterable");
}

Value LookupPath(const Value& v, std::string_view path) {
  Value cur = v;
  while (true) {
    const size_t dot = path.find('.');
    const std::string_view part = path.substr(0, dot);
    if (cur.is_object()) {
      const Value* x = cur.obj().Find(part);
      cur = x ? *x : Value::Undefined(std::string(part));
    } else if (cur.is_array() && !part.empty() &&
               std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      const size_t i = std::stoul(std::string(part));
      cur = i < cur.arr().items.size() ? cur.arr().items[i] : Value::Undefined(std::string(part));
    } else {
      return Value::Undefined(std::string(part));
    }
    if (dot == std::string_view::npos) return cur;
    path.remove_prefix(dot + 1);
  }
}

int64_t IntArg(const Value* v, int64_t dflt) { return v && v->is_integral() ? v->i() : dflt; }
bool BoolArg(const Value* v, bool dflt) { return v ? v->Truthy() : dflt; }
Status TooLong() { return Status::Error("string result exceeds the output limit"); }

}  // namespace internal

// ---------------------------------------------------------------- tests

namespace {

Result<const Value*> OneArg(const CallArgs& args, const char* test) {
  if (args.pos.size() != 1) return Status::Error(std::string(test) + " expects one argument");
  return &args.pos[0];
}

Result<bool> Defined(const Value& v, const CallArgs&) { return !v.is_undefined(); }
Result<bool> Undefined(const Value& v, const CallArgs&) { return v.is_undefined(); }
Result<bool> None(const Value& v, const CallArgs&) { return v.is_none(); }
Result<bool> Boolean(const Value& v, const CallArgs&) { return v.is_bool(); }
Result<bool> False(const Value& v, const CallArgs&) { return v.is_bool() && !v.b(); }
Result<bool> True(const Value& v, const CallArgs&) { return v.is_bool() && v.b(); }
Result<bool> Integer(const Value& v, const CallArgs&) { return v.is_int(); }
Result<bool> Float(const Value& v, const CallArgs&) { return v.is_float(); }
Result<bool> Number(const Value& v, const CallArgs&) { return v.is_number(); }
Result<bool> String(const Value& v, const CallArgs&) { return v.is_string(); }
Result<bool> Mapping(const Value& v, const CallArgs&) {
  return v.is_object() && !v.obj().is_namespace;
}
Result<bool> Iterable(const Value& v, const CallArgs&) {
  return v.is_array() || v.is_string() || v.is_undefined() ||
         (v.is_object() && !v.obj().is_namespace);
}
Result<bool> Callable(const Value& v, const CallArgs&) { return v.is_callable(); }

Result<bool> Sameas(const Value& v, const CallArgs& args) {
  BRISK_ASSIGN_OR_RETURN(const Value* o, OneArg(args, "sameas"));
  if (v.kind() != o->kind()) return false;
  if (v.is_none() || v.is_undefined()) return true;
  if (v.is_bool()) return v.b() == o->b();
  if (v.is_array()) return &v.arr() == &o->arr();
  if (v.is_object()) return &v.obj() == &o->obj();
  return Equals(v, *o);
}

Result<bool> In(const Value& v, const CallArgs& args) {
  BRISK_ASSIGN_OR_RETURN(const Value* o, OneArg(args, "in"));
  if (o->is_string()) return v.is_string() && o->s().find(v.s()) != std::string::npos;
  if (o->is_object()) return v.is_string() && o->obj().Find(v.s()) != nullptr;
  BRISK_ASSIGN_OR_RETURN(std::vector<Value> items, internal::IterItems(*o));
  return std::any_of(items.begin(), items.end(), [&](const Value& x) { return Equals(v, x); });
}

Result<bool> Eq(const Value& v, const CallArgs& args) {
  BRISK_ASSIGN_OR_RETURN(const Value* o, OneArg(args, "eq"));
  return Equals(v, *o);
}
Result<bool> Ne(const Value& v, const CallArgs& args) {
  BRISK_ASSIGN_OR_RETURN(const Value* o, OneArg(args, "eq"));
  return !Equals(v, *o);
}

// An ordering test: `accept` says which signs of Compare(v, arg) pass.
Result<bool> Ordering(const Value& v, const CallArgs& args, bool (*accept)(int)) {
  BRISK_ASSIGN_OR_RETURN(const Value* o, OneArg(args, "comparison"));
  BRISK_ASSIGN_OR_RETURN(int c, Compare(v, *o));
  return accept(c);
}
Result<bool> Lt(const Value& v, const CallArgs& a) {
  return Ordering(v, a, [](int c) { return c < 0; });
}
Result<bool> Le(const Value& v, const CallArgs& a) {
  return Ordering(v, a, [](int c) { return c <= 0; });
}
Result<bool> Gt(const Value& v, const CallArgs& a) {
  return Ordering(v, a, [](int c) { return c > 0; });
}
Result<bool> Ge(const Value& v, const CallArgs& a) {
  return Ordering(v, a, [](int c) { return c >= 0; });
}

Result<bool> Odd(const Value& v, const CallArgs&) {
  if (!v.is_integral()) return Status::Error("expects an integer");
  return v.i() % 2 != 0;
}
Result<bool> Even(const Value& v, const CallArgs&) {
  if (!v.is_integral()) return Status::Error("expects an integer");
  return v.i() % 2 == 0;
}

Result<bool> Divisibleby(const Value& v, const CallArgs& args) {
  BRISK_ASSIGN_OR_RETURN(const Value* o, OneArg(args, "divisibleby"));
  if (!v.is_integral() || !o->is_integral()) return Status::Error("expects integers");
  if (o->i() == 0) return Status::Error("division by zero");
  return o->i() == -1 || v.i() % o->i() == 0;
}

Result<bool> Lower(const Value& v, const CallArgs&) {
  return v.is_string() && text::Lower(v.s()) == v.s();
}
Result<bool> Upper(const Value& v, const CallArgs&) {
  return v.is_string() && text::Upper(v.s()) == v.s();
}

using TestFn = Result<bool> (*)(const Value& v, const CallArgs& args);

struct Test {
  std::string_view name;
  TestFn apply;
};

// Every supported test by name; a test's id is its index here.
constexpr Test kTests[] = {
    {"defined", Defined},
    {"undefined", Undefined},
    {"none", None},
    {"boolean", Boolean},
    {"false", False},
    {"true", True},
    {"integer", Integer},
    {"float", Float},
    {"number", Number},
    {"string", String},
    {"mapping", Mapping},
    {"iterable", Iterable},
    {"sequence", Iterable},
    {"callable", Callable},
    {"sameas", Sameas},
    {"in", In},
    {"eq", Eq},
    {"equalto", Eq},
    {"==", Eq},
    {"ne", Ne},
    {"!=", Ne},
    {"lt", Lt},
    {"lessthan", Lt},
    {"<", Lt},
    {"le", Le},
    {"<=", Le},
    {"gt", Gt},
    {"greaterthan", Gt},
    {">", Gt},
    {"ge", Ge},
    {">=", Ge},
    {"odd", Odd},
    {"even", Even},
    {"divisibleby", Divisibleby},
    {"lower", Lower},
    {"upper", Upper},
};

}  // namespace

int FindTest(std::string_view name) {
  for (size_t i = 0; i < std::size(kTests); ++i) {
    if (kTests[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

Result<bool> ApplyTest(int id, const Value& v, const CallArgs& args) {
  if (id < 0 || static_cast<size_t>(id) >= std::size(kTests)) return Status::Error("unknown test");
  return kTests[id].apply(v, args);
}

// ---------------------------------------------------------------- methods

namespace {

// The string argument at position `i` or keyword `kw`; nullptr when absent or not a string.
const std::string* StrArg(const CallArgs& args, size_t i, std::string_view kw) {
  const Value* v = args.Get(i, kw);
  return v && v->is_string() ? &v->s() : nullptr;
}

// str.startswith / str.endswith with a string or a tuple of candidates.
Result<Value> StartsOrEndsWith(const std::string& s, std::string_view name, const CallArgs& args) {
  const Value* p = args.Get(0, "prefix");
  if (p == nullptr) return Status::Error(std::string(name) + "() takes at least 1 argument");
  std::vector<std::string> cands;
  if (p->is_string()) {
    cands.push_back(p->s());
  } else if (p->is_array()) {
    for (const Value& x : p->arr().items) {
      if (!x.is_string()) return Status::Error(std::string(name) + "() expects strings");
      cands.push_back(x.s());
    }
  } else {
    return Status::Error(std::string(name) + "() expects a string or a tuple of strings");
  }
  const bool starts = name == "startswith";
  for (const std::string& c : cands) {
    if (starts ? s.starts_with(c) : s.ends_with(c)) return Value::Bool(true);
  }
  return Value::Bool(false);
}

Result<Value> SplitMethod(const std::string& s, std::string_view name, const CallArgs& args) {
  const std::string* sep = StrArg(args, 0, "sep");
  if (sep != nullptr && sep->empty()) return Status::Error("empty separator");
  const int64_t maxsplit = internal::IntArg(args.Get(1, "maxsplit"), -1);
  std::vector<Value> parts;
  for (std::string& p : text::Split(s, sep, maxsplit, name == "rsplit")) {
    parts.push_back(Value::Str(std::move(p)));
  }
  return Value::List(std::move(parts));
}

Result<Value> ReplaceMethod(const std::string& s, const CallArgs& args) {
  const std::string* from = StrArg(args, 0, "old");
  const std::string* to = StrArg(args, 1, "new");
  if (from == nullptr || to == nullptr) return Status::Error("replace() expects two strings");
  if (to->size() > from->size() && (to->size() - from->size()) * (s.size() + 1) > args.max_string) {
    return internal::TooLong();
  }
  return Value::Str(text::Replace(s, *from, *to, internal::IntArg(args.Get(2, "count"), -1)));
}

// str.find / rfind / index / count; positions are in code points, as in Python.
Result<Value> FindMethod(const std::string& s, std::string_view name, const CallArgs& args) {
  const std::string* sub = StrArg(args, 0, "sub");
  if (sub == nullptr) return Status::Error(std::string(name) + "() expects a string");
  if (name == "count") {
    if (sub->empty()) return Value::Int(static_cast<int64_t>(text::Length(s)) + 1);
    int64_t n = 0;
    for (size_t p = s.find(*sub); p != std::string::npos; p = s.find(*sub, p + sub->size())) ++n;
    return Value::Int(n);
  }
  const size_t p = name == "rfind" ? s.rfind(*sub) : s.find(*sub);
  if (p == std::string::npos) {
    if (name == "index") return Status::Error("substring not found");
    return Value::Int(-1);
  }
  return Value::Int(static_cast<int64_t>(text::CodePointIndex(s, p)));
}

Result<Value> JoinMethod(const std::string& s, const CallArgs& args) {
  const Value* items = args.Get(0, "iterable");
  if (items == nullptr) return Status::Error("join() expects an iterable");
  BRISK_ASSIGN_OR_RETURN(std::vector<Value> parts, internal::IterItems(*items));
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (!parts[i].is_string()) return Status::Error("join() expects strings");
    if (i > 0) out += s;
    out += parts[i].s();
    if (out.size() > args.max_string) return internal::TooLong();
  }
  return Value::Str(std::move(out));
}

// The character-class predicates: isdigit, isalpha, isalnum, isspace, islower, isupper.
Result<Value> CharClassMethod(const std::string& s, std::string_view name) {
  auto all_of = [&](auto pred) {
    if (s.empty()) return Value::Bool(false);
    return Value::Bool(std::all_of(s.begin(), s.end(),
                                   [&](char c) { return pred(static_cast<unsigned char>(c)); }));
  };
  if (name == "isdigit") return all_of([](unsigned char c) { return std::isdigit(c) != 0; });
  if (name == "isalpha") return all_of([](unsigned char c) { return std::isalpha(c) != 0; });
  if (name == "isalnum") return all_of([](unsigned char c) { return std::isalnum(c) != 0; });
  if (name == "isspace") return all_of([](unsigned char c) { return text::IsSpace(c); });
  if (name == "islower") {
    return Value::Bool(text::Lower(s) == s && text::Upper(s) != s);
  }
  if (name == "isupper") {
    return Value::Bool(text::Upper(s) == s && text::Lower(s) != s);
  }
  return Status::Error("unsupported method '" + std::string(name) + "' of str");
}

Result<Value> StringMethod(const std::string& s, std::string_view name, const CallArgs& args) {
  if (name == "startswith" || name == "endswith") return StartsOrEndsWith(s, name, args);
  if (name == "strip" || name == "lstrip" || name == "rstrip") {
    const std::string* chars = StrArg(args, 0, "chars");
    return Value::Str(std::string(text::Strip(s, chars, name != "rstrip", name != "lstrip")));
  }
  if (name == "split" || name == "rsplit") return SplitMethod(s, name, args);
  if (name == "splitlines") {
    std::vector<Value> parts;
    for (std::string_view l : text::SplitLines(s)) parts.push_back(Value::Str(l));
    return Value::List(std::move(parts));
  }
  if (name == "upper") return Value::Str(text::Upper(s));
  if (name == "lower") return Value::Str(text::Lower(s));
  if (name == "title") return Value::Str(text::Title(s));
  if (name == "capitalize") return Value::Str(text::Capitalize(s));
  if (name == "replace") return ReplaceMethod(s, args);
  if (name == "find" || name == "rfind" || name == "index" || name == "count") {
    return FindMethod(s, name, args);
  }
  if (name == "join") return JoinMethod(s, args);
  if (name == "format") {
    BRISK_ASSIGN_OR_RETURN(std::string out, StrFormat(s, args));
    return Value::Str(std::move(out));
  }
  return CharClassMethod(s, name);
}

Result<Value> DictMethod(const ObjectData& o, std::string_view name, const CallArgs& args) {
  if (name == "items") {
    std::vector<Value> pairs;
    pairs.reserve(o.size());
    for (const auto& [k, v] : o.items) pairs.push_back(Value::List({Value::Str(k), v}, true));
    return Value::List(std::move(pairs));
  }
  if (name == "keys") {
    std::vector<Value> keys;
    for (const auto& kv : o.items) keys.push_back(Value::Str(kv.first));
    return Value::List(std::move(keys));
  }
  if (name == "values") {
    std::vector<Value> values;
    for (const auto& kv : o.items) values.push_back(kv.second);
    return Value::List(std::move(values));
  }
  if (name == "get") {
    const Value* key = args.Get(0, "key");
    if (key == nullptr) return Status::Error("get() expects a key");
    const Value* v = key->is_string() ? o.Find(key->s()) : nullptr;
    if (v != nullptr) return *v;
    const Value* d = args.Get(1, "default");
    return d ? *d : Value::None();
  }
  return Status::Error("unsupported method '" + std::string(name) + "' of dict");
}

}  // namespace

Result<Value> CallMethod(const Value& obj, std::string_view name, const CallArgs& args) {
  switch (obj.kind()) {
    case Value::Kind::kString:
      return StringMethod(obj.s(), name, args);
    case Value::Kind::kObject:
      if (!obj.obj().is_namespace) return DictMethod(obj.obj(), name, args);
      break;
    case Value::Kind::kArray:
      if (name == "index" || name == "count") {
        const Value* x = args.Get(0, "value");
        if (x == nullptr) return Status::Error(std::string(name) + "() expects a value");
        const auto& items = obj.arr().items;
        int64_t n = 0;
        for (size_t i = 0; i < items.size(); ++i) {
          if (!Equals(items[i], *x)) continue;
          if (name == "index") return Value::Int(static_cast<int64_t>(i));
          ++n;
        }
        if (name == "index") return Status::Error("value is not in list");
        return Value::Int(n);
      }
      break;
    case Value::Kind::kLoop:
      if (name == "cycle") {
        if (args.pos.empty()) return Status::Error("cycle() expects at least one argument");
        const int64_t i = obj.loop().index0 % static_cast<int64_t>(args.pos.size());
        return args.pos[static_cast<size_t>(i)];
      }
      break;
    default:
      break;
  }
  return Status::Error("unsupported method '" + std::string(name) + "' of " + obj.TypeName());
}

// ---------------------------------------------------------------- globals

int FindGlobal(std::string_view name) {
  if (name == "range") return static_cast<int>(Global::kRange);
  if (name == "namespace") return static_cast<int>(Global::kNamespace);
  if (name == "raise_exception") return static_cast<int>(Global::kRaiseException);
  if (name == "dict") return static_cast<int>(Global::kDict);
  if (name == "strftime_now") return static_cast<int>(Global::kStrftimeNow);
  return -1;
}

Result<Value> CallGlobal(Global g, const CallArgs& args, int64_t max_items) {
  switch (g) {
    case Global::kRange: {
      if (args.pos.empty() || args.pos.size() > 3 || !args.kw.empty()) {
        return Status::Error("range() expects 1 to 3 integer arguments");
      }
      for (const Value& a : args.pos) {
        if (!a.is_integral()) return Status::Error("range() expects integers");
      }
      int64_t start = 0, stop = 0, step = 1;
      if (args.pos.size() == 1) {
        stop = args.pos[0].i();
      } else {
        start = args.pos[0].i();
        stop = args.pos[1].i();
        if (args.pos.size() == 3) step = args.pos[2].i();
      }
      if (step == 0) return Status::Error("range() step must not be zero");
      // Number of items, computed in 128 bits so extreme bounds cannot overflow.
      const __int128 span =
          step > 0 ? static_cast<__int128>(stop) - start : static_cast<__int128>(start) - stop;
      const __int128 mag = step > 0 ? step : -static_cast<__int128>(step);
      const __int128 count = span <= 0 ? 0 : (span + mag - 1) / mag;
      if (count > max_items) return Status::Error("range() exceeds the loop iteration limit");
      std::vector<Value> items;
      items.reserve(static_cast<size_t>(count));
      for (__int128 k = 0; k < count; ++k) {
        items.push_back(Value::Int(static_cast<int64_t>(start + k * step)));
      }
      return Value::List(std::move(items));
    }
    case Global::kDict: {
      auto o = std::make_shared<ObjectData>();
      for (const Value& p : args.pos) {
        if (!p.is_object() || p.obj().is_namespace) return Status::Error("dict() expects a dict");
        for (const auto& [k, v] : p.obj().items) o->Set(k, v);
      }
      for (const auto& [k, v] : args.kw) o->Set(std::string(k), v);
      return Value::Object(std::move(o));
    }
    case Global::kStrftimeNow: {
      const Value* fmt = args.Get(0, "format");
      if (fmt == nullptr || !fmt->is_string())
        return Status::Error("strftime_now() expects a format");
      const std::time_t now = std::time(nullptr);
      std::tm tm{};
      localtime_r(&now, &tm);
      char buf[256];
      const size_t n = std::strftime(buf, sizeof(buf), fmt->s().c_str(), &tm);
      return Value::Str(std::string(buf, n));
    }
    default:
      break;
  }
  return Status::Error("unsupported function");
}

}  // namespace brisk::jinja
