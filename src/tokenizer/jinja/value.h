// Runtime values of the Jinja interpreter. They model the Python objects HF templates see:
// None, bool, int, float, str, list/tuple, dict (insertion-ordered), plus Jinja's Undefined,
// namespace objects, macros and the `loop` object. Containers are shared (reference semantics,
// like Python); only namespaces are ever mutated.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "util/status.h"

namespace brisk::jinja {

// Deepest container nesting accepted (input JSON and values built by templates).
inline constexpr uint32_t kMaxValueDepth = 512;

class Value;
struct ArrayData;
struct ObjectData;
struct Callable;  // defined by the interpreter
struct LoopState;

class Value {
 public:
  enum class Kind : uint8_t {
    kUndefined,
    kNone,
    kBool,
    kInt,
    kFloat,
    kString,
    kArray,
    kObject,
    kCallable,
    kLoop,
  };

  Value() = default;  // Undefined
  static Value Undefined(std::string name = {}) {
    Value v;
    v.s_ = std::move(name);
    return v;
  }
  static Value None() { return Value(Kind::kNone); }
  static Value Bool(bool b) {
    Value v(Kind::kBool);
    v.i_ = b ? 1 : 0;
    return v;
  }
  static Value Int(int64_t i) {
    Value v(Kind::kInt);
    v.i_ = i;
    return v;
  }
  static Value Float(double f) {
    Value v(Kind::kFloat);
    v.f_ = f;
    return v;
  }
  static Value Str(std::string s) {
    Value v(Kind::kString);
    v.s_ = std::move(s);
    return v;
  }
  static Value Str(std::string_view s) { return Str(std::string(s)); }
  static Value Str(const char* s) { return Str(std::string(s)); }
  // Lists and tuples; depth is computed from the items.
  static Value List(std::vector<Value> items, bool is_tuple = false);
  static Value Array(std::shared_ptr<const ArrayData> a);
  static Value Object(std::shared_ptr<ObjectData> o);
  static Value Func(std::shared_ptr<const Callable> c);
  static Value Loop(std::shared_ptr<LoopState> l);

  Kind kind() const { return kind_; }
  bool is_undefined() const { return kind_ == Kind::kUndefined; }
  bool is_none() const { return kind_ == Kind::kNone; }
  bool is_bool() const { return kind_ == Kind::kBool; }
  bool is_int() const { return kind_ == Kind::kInt; }
  bool is_float() const { return kind_ == Kind::kFloat; }
  // int or bool (Python's bool is an int)
  bool is_integral() const { return is_int() || is_bool(); }
  bool is_number() const { return is_int() || is_float() || is_bool(); }
  bool is_string() const { return kind_ == Kind::kString; }
  bool is_array() const { return kind_ == Kind::kArray; }
  bool is_object() const { return kind_ == Kind::kObject; }
  bool is_callable() const { return kind_ == Kind::kCallable; }
  bool is_loop() const { return kind_ == Kind::kLoop; }

  bool b() const { return i_ != 0; }
  int64_t i() const { return i_; }  // also for bool
  double f() const { return is_float() ? f_ : static_cast<double>(i_); }
  const std::string& s() const { return s_; }
  std::string& s() { return s_; }
  const std::string& undefined_name() const { return s_; }
  const ArrayData& arr() const { return *static_cast<const ArrayData*>(p_.get()); }
  std::shared_ptr<const ArrayData> arr_shared() const {
    return std::static_pointer_cast<const ArrayData>(p_);
  }
  // Objects are shared; only namespaces are ever mutated through this.
  ObjectData& obj() const { return *static_cast<ObjectData*>(p_.get()); }
  const Callable& func() const { return *static_cast<const Callable*>(p_.get()); }
  LoopState& loop() const { return *static_cast<LoopState*>(p_.get()); }

  // Container nesting depth (0 for scalars).
  uint32_t depth() const;
  // Python truthiness.
  bool Truthy() const;
  // Python type name for messages ("str", "int", "dict", ...).
  const char* TypeName() const;

 private:
  explicit Value(Kind k) : kind_(k) {}

  // A tagged union kept flat so moves and destruction are cheap: scalars in the union, the
  // string (or an undefined value's name) in s_, containers / callables / loops behind p_.
  Kind kind_ = Kind::kUndefined;
  union {
    int64_t i_ = 0;
    double f_;
  };
  std::string s_;
  std::shared_ptr<void> p_;  // const-ness of arrays/callables is enforced by the accessors
};

struct ArrayData {
  std::vector<Value> items;
  bool is_tuple = false;
  uint32_t depth = 1;
};

// An insertion-ordered string-keyed map (Python dict), or a Jinja namespace().
struct ObjectData {
  std::vector<std::pair<std::string, Value>> items;
  bool is_namespace = false;
  uint32_t depth = 1;

  const Value* Find(std::string_view key) const;
  // Inserts or replaces, keeping the first insertion position (Python semantics).
  void Set(std::string key, Value value);
  // Appends a key known not to be present yet.
  void AppendNew(std::string key, Value value);
  size_t size() const { return items.size(); }

 private:
  struct KeyHash {
    using is_transparent = void;
    size_t operator()(std::string_view k) const { return std::hash<std::string_view>()(k); }
  };
  using Index = std::unordered_map<std::string, size_t, KeyHash, std::equal_to<>>;
  std::unique_ptr<Index> index_;  // built once the map grows large
};

// The `loop` variable of a for loop.
struct LoopState {
  std::shared_ptr<const ArrayData> items;
  int64_t index0 = 0;
  int64_t depth = 1;
};

// Converts input JSON (context variables) to values.
Result<Value> FromJson(const nlohmann::ordered_json& j);

// Python str(): what {{ value }} prints.
std::string ToStr(const Value& v);
void AppendStr(const Value& v, std::string* out);
// Python repr().
void AppendRepr(const Value& v, std::string* out, int depth = 0);
// Python float repr (shortest round-trip: 1.0, 0.1, 1e+16, 1e-05, inf, nan).
std::string FloatRepr(double d);

// Python ==.
bool Equals(const Value& a, const Value& b, int depth = 0);
// Python <, <=, >, >= via a three-way compare; an error for unorderable types.
Result<int> Compare(const Value& a, const Value& b, int depth = 0);

struct JsonOptions {
  bool ensure_ascii = false;
  bool pretty = false;  // json.dumps(indent=...) was given: one item per line
  std::string indent;   // the per-level indentation when pretty
  std::string item_sep = ", ";
  std::string key_sep = ": ";
  bool sort_keys = false;
};
// Python json.dumps(value, ...) with the given options.
Status AppendJson(const Value& v, const JsonOptions& opts, std::string* out);

}  // namespace brisk::jinja
