#include "tokenizer/jinja/value.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "tokenizer/jinja/text.h"

namespace brisk::jinja {

namespace {
constexpr size_t kIndexThreshold = 16;
constexpr int kMaxRecursion = static_cast<int>(kMaxValueDepth) + 64;
}  // namespace

Value Value::List(std::vector<Value> items, bool is_tuple) {
  auto a = std::make_shared<ArrayData>();
  uint32_t d = 0;
  for (const Value& v : items) d = std::max(d, v.depth());
  a->depth = d + 1;
  a->items = std::move(items);
  a->is_tuple = is_tuple;
  return Array(std::move(a));
}

Value Value::Array(std::shared_ptr<const ArrayData> a) {
  Value v(Kind::kArray);
  v.p_ = std::const_pointer_cast<ArrayData>(std::move(a));
  return v;
}

Value Value::Object(std::shared_ptr<ObjectData> o) {
  Value v(Kind::kObject);
  v.p_ = std::move(o);
  return v;
}

Value Value::Func(std::shared_ptr<const Callable> c) {
  Value v(Kind::kCallable);
  v.p_ = std::const_pointer_cast<Callable>(std::move(c));
  return v;
}

Value Value::Loop(std::shared_ptr<LoopState> l) {
  Value v(Kind::kLoop);
  v.p_ = std::move(l);
  return v;
}

uint32_t Value::depth() const {
  switch (kind()) {
    case Kind::kArray:
      return arr().depth;
    case Kind::kObject:
      return obj().depth;
    default:
      return 0;
  }
}

bool Value::Truthy() const {
  switch (kind()) {
    case Kind::kUndefined:
    case Kind::kNone:
      return false;
    case Kind::kBool:
      return b();
    case Kind::kInt:
      return i() != 0;
    case Kind::kFloat:
      return f() != 0.0;
    case Kind::kString:
      return !s().empty();
    case Kind::kArray:
      return !arr().items.empty();
    case Kind::kObject:
      return obj().is_namespace || obj().size() > 0;
    case Kind::kCallable:
    case Kind::kLoop:
      return true;
  }
  return false;
}

const char* Value::TypeName() const {
  switch (kind()) {
    case Kind::kUndefined:
      return "Undefined";
    case Kind::kNone:
      return "NoneType";
    case Kind::kBool:
      return "bool";
    case Kind::kInt:
      return "int";
    case Kind::kFloat:
      return "float";
    case Kind::kString:
      return "str";
    case Kind::kArray:
      return arr().is_tuple ? "tuple" : "list";
    case Kind::kObject:
      return obj().is_namespace ? "Namespace" : "dict";
    case Kind::kCallable:
      return "function";
    case Kind::kLoop:
      return "LoopContext";
  }
  return "?";
}

const Value* ObjectData::Find(std::string_view key) const {
  if (index_) {
    auto it = index_->find(key);
    return it == index_->end() ? nullptr : &items[it->second].second;
  }
  for (const auto& [k, v] : items) {
    if (k == key) return &v;
  }
  return nullptr;
}

void ObjectData::Set(std::string key, Value value) {
  if (const Value* old = Find(key)) {
    depth = std::max(depth, value.depth() + 1);
    *const_cast<Value*>(old) = std::move(value);
    return;
  }
  AppendNew(std::move(key), std::move(value));
}

void ObjectData::AppendNew(std::string key, Value value) {
  depth = std::max(depth, value.depth() + 1);
  if (index_) index_->emplace(key, items.size());
  items.emplace_back(std::move(key), std::move(value));
  if (!index_ && items.size() > kIndexThreshold) {
    index_ = std::make_unique<Index>();
    for (size_t i = 0; i < items.size(); ++i) index_->emplace(items[i].first, i);
  }
}

namespace {

Result<Value> FromJsonImpl(const nlohmann::ordered_json& j, uint32_t depth) {
  using T = nlohmann::ordered_json::value_t;
  switch (j.type()) {
    case T::null:
      return Value::None();
    case T::boolean:
      return Value::Bool(j.get<bool>());
    case T::number_integer:
      return Value::Int(j.get<int64_t>());
    case T::number_unsigned: {
      const auto u = j.get<uint64_t>();
      if (u <= static_cast<uint64_t>(INT64_MAX)) return Value::Int(static_cast<int64_t>(u));
      return Value::Float(static_cast<double>(u));
    }
    case T::number_float:
      return Value::Float(j.get<double>());
    case T::string:
      return Value::Str(j.get_ref<const std::string&>());
    case T::array: {
      if (depth >= kMaxValueDepth) return Status::Error("input JSON nested too deeply");
      std::vector<Value> items;
      items.reserve(j.size());
      for (const auto& e : j) {
        BRISK_ASSIGN_OR_RETURN(Value v, FromJsonImpl(e, depth + 1));
        items.push_back(std::move(v));
      }
      return Value::List(std::move(items));
    }
    case T::object: {
      if (depth >= kMaxValueDepth) return Status::Error("input JSON nested too deeply");
      auto o = std::make_shared<ObjectData>();
      o->items.reserve(j.size());
      for (const auto& [k, e] : j.items()) {
        BRISK_ASSIGN_OR_RETURN(Value v, FromJsonImpl(e, depth + 1));
        o->AppendNew(k, std::move(v));  // JSON object keys are unique
      }
      return Value::Object(std::move(o));
    }
    case T::binary:
      return Status::Error("binary JSON values are not supported");
    case T::discarded:
      break;
  }
  return Value::Undefined();
}

}  // namespace

Result<Value> FromJson(const nlohmann::ordered_json& j) { return FromJsonImpl(j, 0); }

std::string FloatRepr(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d < 0 ? "-inf" : "inf";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), d, std::chars_format::scientific);
  std::string_view sci(buf, res.ptr - buf);  // e.g. "-1.2345e-05"
  std::string out;
  if (!sci.empty() && sci[0] == '-') {
    out.push_back('-');
    sci.remove_prefix(1);
  }
  const size_t e = sci.find('e');
  std::string digits;
  for (char c : sci.substr(0, e)) {
    if (c != '.') digits.push_back(c);
  }
  int exp = 0;
  std::from_chars(sci.data() + e + 1 + (sci[e + 1] == '+' ? 1 : 0), sci.data() + sci.size(), exp);
  const int decpt = exp + 1;  // position of the decimal point relative to the digits
  const int n = static_cast<int>(digits.size());
  if (decpt > -4 && decpt <= 16) {
    if (decpt <= 0) {
      out += "0.";
      out.append(static_cast<size_t>(-decpt), '0');
      out += digits;
    } else if (decpt >= n) {
      out += digits;
      out.append(static_cast<size_t>(decpt - n), '0');
      out += ".0";
    } else {
      out += digits.substr(0, decpt);
      out.push_back('.');
      out += digits.substr(decpt);
    }
    return out;
  }
  out.push_back(digits[0]);
  if (n > 1) {
    out.push_back('.');
    out += digits.substr(1);
  }
  out.push_back('e');
  out.push_back(exp < 0 ? '-' : '+');
  const int ae = exp < 0 ? -exp : exp;
  if (ae < 10) out.push_back('0');
  out += std::to_string(ae);
  return out;
}

void AppendStr(const Value& v, std::string* out) {
  switch (v.kind()) {
    case Value::Kind::kUndefined:
      return;
    case Value::Kind::kNone:
      out->append("None");
      return;
    case Value::Kind::kBool:
      out->append(v.b() ? "True" : "False");
      return;
    case Value::Kind::kInt: {
      char buf[24];
      auto r = std::to_chars(buf, buf + sizeof(buf), v.i());
      out->append(buf, r.ptr);
      return;
    }
    case Value::Kind::kFloat:
      out->append(FloatRepr(v.f()));
      return;
    case Value::Kind::kString:
      out->append(v.s());
      return;
    default:
      AppendRepr(v, out);
  }
}

std::string ToStr(const Value& v) {
  if (v.is_string()) return v.s();
  std::string out;
  AppendStr(v, &out);
  return out;
}

namespace {

// Python's str.isprintable() for the characters repr() must escape (an approximation that
// covers controls, separators and common format characters).
bool ReprPrintable(uint32_t cp) {
  if (cp < 0x20 || cp == 0x7F) return false;
  if (cp >= 0x80 && cp <= 0xA0) return false;
  if (cp == 0xAD || cp == 0x1680 || cp == 0x3000 || cp == 0xFEFF) return false;
  if (cp >= 0x2000 && cp <= 0x200F) return false;
  if (cp >= 0x2028 && cp <= 0x202F) return false;
  if (cp >= 0x205F && cp <= 0x206F) return false;
  if (cp >= 0xD800 && cp <= 0xDFFF) return false;
  return true;
}

void AppendStringRepr(std::string_view s, std::string* out) {
  const bool has_single = s.find('\'') != std::string_view::npos;
  const bool has_double = s.find('"') != std::string_view::npos;
  const char quote = (has_single && !has_double) ? '"' : '\'';
  out->push_back(quote);
  for (size_t pos = 0; pos < s.size();) {
    const size_t start = pos;
    const uint32_t cp = text::Decode(s, &pos);
    char buf[16];
    if (cp == '\\') {
      out->append("\\\\");
    } else if (cp == static_cast<uint32_t>(quote)) {
      out->push_back('\\');
      out->push_back(quote);
    } else if (cp == '\n') {
      out->append("\\n");
    } else if (cp == '\r') {
      out->append("\\r");
    } else if (cp == '\t') {
      out->append("\\t");
    } else if (!ReprPrintable(cp)) {
      if (cp <= 0xFF) {
        snprintf(buf, sizeof(buf), "\\x%02x", cp);
      } else if (cp <= 0xFFFF) {
        snprintf(buf, sizeof(buf), "\\u%04x", cp);
      } else {
        snprintf(buf, sizeof(buf), "\\U%08x", cp);
      }
      out->append(buf);
    } else {
      out->append(s.substr(start, pos - start));
    }
  }
  out->push_back(quote);
}

}  // namespace

void AppendRepr(const Value& v, std::string* out, int depth) {
  if (depth > kMaxRecursion) {
    out->append("...");
    return;
  }
  switch (v.kind()) {
    case Value::Kind::kUndefined:
      out->append("Undefined");
      return;
    case Value::Kind::kString:
      AppendStringRepr(v.s(), out);
      return;
    case Value::Kind::kArray: {
      const ArrayData& a = v.arr();
      out->push_back(a.is_tuple ? '(' : '[');
      for (size_t i = 0; i < a.items.size(); ++i) {
        if (i > 0) out->append(", ");
        AppendRepr(a.items[i], out, depth + 1);
      }
      if (a.is_tuple && a.items.size() == 1) out->push_back(',');
      out->push_back(a.is_tuple ? ')' : ']');
      return;
    }
    case Value::Kind::kObject: {
      const ObjectData& o = v.obj();
      if (o.is_namespace) out->append("<Namespace ");
      out->push_back('{');
      bool first = true;
      for (const auto& [k, e] : o.items) {
        if (!first) out->append(", ");
        first = false;
        AppendStringRepr(k, out);
        out->append(": ");
        AppendRepr(e, out, depth + 1);
      }
      out->push_back('}');
      if (o.is_namespace) out->push_back('>');
      return;
    }
    case Value::Kind::kCallable:
      out->append("<function>");
      return;
    case Value::Kind::kLoop:
      out->append("<LoopContext>");
      return;
    default:
      AppendStr(v, out);
  }
}

bool Equals(const Value& a, const Value& b, int depth) {
  using K = Value::Kind;
  if (depth > kMaxRecursion) return false;
  if (a.is_number() && b.is_number()) {
    if (a.is_integral() && b.is_integral()) return a.i() == b.i();
    return a.f() == b.f();
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case K::kUndefined:
    case K::kNone:
      return true;
    case K::kString:
      return a.s() == b.s();
    case K::kArray: {
      const ArrayData& x = a.arr();
      const ArrayData& y = b.arr();
      if (&x == &y) return true;
      if (x.is_tuple != y.is_tuple || x.items.size() != y.items.size()) return false;
      for (size_t i = 0; i < x.items.size(); ++i) {
        if (!Equals(x.items[i], y.items[i], depth + 1)) return false;
      }
      return true;
    }
    case K::kObject: {
      const ObjectData& x = a.obj();
      const ObjectData& y = b.obj();
      if (&x == &y) return true;
      if (x.is_namespace || y.is_namespace || x.size() != y.size()) return false;
      for (const auto& [k, v] : x.items) {
        const Value* w = y.Find(k);
        if (w == nullptr || !Equals(v, *w, depth + 1)) return false;
      }
      return true;
    }
    case K::kCallable:
      return &a.func() == &b.func();
    case K::kLoop:
      return &a.loop() == &b.loop();
    default:
      return false;
  }
}

Result<int> Compare(const Value& a, const Value& b, int depth) {
  if (depth > kMaxRecursion) return Status::Error("comparison nested too deeply");
  if (a.is_number() && b.is_number()) {
    if (a.is_integral() && b.is_integral()) return a.i() < b.i() ? -1 : (a.i() > b.i() ? 1 : 0);
    return a.f() < b.f() ? -1 : (a.f() > b.f() ? 1 : 0);
  }
  if (a.is_string() && b.is_string()) {
    const int c = a.s().compare(b.s());
    return c < 0 ? -1 : (c > 0 ? 1 : 0);
  }
  if (a.is_array() && b.is_array() && a.arr().is_tuple == b.arr().is_tuple) {
    const auto& x = a.arr().items;
    const auto& y = b.arr().items;
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (Equals(x[i], y[i], depth + 1)) continue;
      return Compare(x[i], y[i], depth + 1);
    }
    return x.size() < y.size() ? -1 : (x.size() > y.size() ? 1 : 0);
  }
  return Status::Error(std::string("ordering not supported between instances of '") + a.TypeName() +
                       "' and '" + b.TypeName() + "'");
}

}  // namespace brisk::jinja
