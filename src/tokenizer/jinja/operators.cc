// Arithmetic, comparison and membership operators with Python semantics.
#include <cmath>

#include "tokenizer/jinja/interpreter.h"

namespace brisk::jinja {

namespace {

const char* OpSymbol(Op op) {
  switch (op) {
    case Op::kAdd:
      return "+";
    case Op::kSub:
      return "-";
    case Op::kMul:
      return "*";
    case Op::kDiv:
      return "/";
    case Op::kFloorDiv:
      return "//";
    case Op::kMod:
      return "%";
    case Op::kPow:
      return "**";
    case Op::kNeg:
      return "unary -";
    case Op::kPos:
      return "unary +";
    default:
      return "?";
  }
}

double FloorMod(double a, double b) {
  double m = std::fmod(a, b);
  if (m != 0 && ((m < 0) != (b < 0))) m += b;
  return m;
}

Result<Value> Repeat(const Value& seq, int64_t times, size_t max_bytes) {
  if (times < 0) times = 0;
  if (seq.is_string()) {
    const size_t len = seq.s().size();
    if (len != 0 && static_cast<uint64_t>(times) > max_bytes / len) {
      return Status::Error("string repetition exceeds the output limit");
    }
    std::string out;
    out.reserve(len * static_cast<size_t>(times));
    for (int64_t i = 0; i < times; ++i) out += seq.s();
    return Value::Str(std::move(out));
  }
  const auto& items = seq.arr().items;
  if (!items.empty() && static_cast<uint64_t>(times) > (1u << 24) / items.size()) {
    return Status::Error("list repetition too large");
  }
  std::vector<Value> out;
  for (int64_t i = 0; i < times; ++i) out.insert(out.end(), items.begin(), items.end());
  return Value::List(std::move(out), seq.arr().is_tuple);
}

// Python integer arithmetic for + - * // % and ** with a non-negative exponent; overflow is an
// error instead of wrapping.
Result<Value> IntArith(Op op, int64_t a, int64_t b) {
  int64_t res = 0;
  switch (op) {
    case Op::kAdd:
      if (__builtin_add_overflow(a, b, &res)) return Status::Error("integer overflow");
      return Value::Int(res);
    case Op::kSub:
      if (__builtin_sub_overflow(a, b, &res)) return Status::Error("integer overflow");
      return Value::Int(res);
    case Op::kMul:
      if (__builtin_mul_overflow(a, b, &res)) return Status::Error("integer overflow");
      return Value::Int(res);
    case Op::kFloorDiv: {
      if (b == 0) return Status::Error("integer division by zero");
      if (a == INT64_MIN && b == -1) return Status::Error("integer overflow");
      int64_t q = a / b;
      if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
      return Value::Int(q);
    }
    case Op::kMod: {
      if (b == 0) return Status::Error("integer modulo by zero");
      if (b == -1) return Value::Int(0);
      int64_t m = a % b;
      if (m != 0 && ((m < 0) != (b < 0))) m += b;
      return Value::Int(m);
    }
    default: {  // Op::kPow
      int64_t acc = 1;
      for (int64_t i = 0; i < b; ++i) {
        if (__builtin_mul_overflow(acc, a, &acc)) return Status::Error("integer overflow");
        if (acc == 0 || acc == 1) break;
        if (acc == -1) {
          acc = ((b - i - 1) % 2 == 0) ? -1 : 1;
          break;
        }
      }
      return Value::Int(acc);
    }
  }
}

// Python float arithmetic for the binary arithmetic operators.
Result<Value> FloatArith(Op op, double x, double y) {
  switch (op) {
    case Op::kAdd:
      return Value::Float(x + y);
    case Op::kSub:
      return Value::Float(x - y);
    case Op::kMul:
      return Value::Float(x * y);
    case Op::kDiv:
      if (y == 0) return Status::Error("division by zero");
      return Value::Float(x / y);
    case Op::kFloorDiv:
      if (y == 0) return Status::Error("float floor division by zero");
      return Value::Float(std::floor(x / y));
    case Op::kMod:
      if (y == 0) return Status::Error("float modulo by zero");
      return Value::Float(FloorMod(x, y));
    default:  // Op::kPow
      if (x == 0 && y < 0) return Status::Error("zero cannot be raised to a negative power");
      return Value::Float(std::pow(x, y));
  }
}

bool IsArithmetic(Op op) {
  return op == Op::kAdd || op == Op::kSub || op == Op::kMul || op == Op::kDiv ||
         op == Op::kFloorDiv || op == Op::kMod || op == Op::kPow;
}

// An arithmetic operator on two numbers: integers stay integers except for `/` and negative
// powers, as in Python.
Result<Value> NumberArith(Op op, const Value& l, const Value& r) {
  const bool ints = l.is_integral() && r.is_integral();
  if (ints && op != Op::kDiv && !(op == Op::kPow && r.i() < 0)) return IntArith(op, l.i(), r.i());
  return FloatArith(op, l.f(), r.f());
}

}  // namespace

Result<Value> Interpreter::Binary(Op op, Value l, const Value& r, const Expr& site) {
  if (op == Op::kConcat) {
    std::string s = l.is_string() ? std::move(l.s()) : ToStr(l);
    if (s.size() + (r.is_string() ? r.s().size() : 0) > limits_.max_output_bytes) {
      return LineError(site, "string concatenation exceeds the output limit");
    }
    AppendStr(r, &s);
    return Value::Str(std::move(s));
  }
  if (l.is_undefined()) return UndefinedError(l, site);
  if (r.is_undefined()) return UndefinedError(r, site);
  const auto type_error = [&]() {
    return LineError(site, std::string("unsupported operand types for ") + OpSymbol(op) + ": '" +
                               l.TypeName() + "' and '" + r.TypeName() + "'");
  };
  if (l.is_number() && r.is_number()) {
    if (!IsArithmetic(op)) return type_error();
    Result<Value> v = NumberArith(op, l, r);
    if (!v.ok()) return LineError(site, v.message());
    return v;
  }
  switch (op) {
    case Op::kAdd:
      if (l.is_string() && r.is_string()) {
        if (l.s().size() + r.s().size() > limits_.max_output_bytes) {
          return LineError(site, "string concatenation exceeds the output limit");
        }
        l.s() += r.s();
        return l;
      }
      if (l.is_array() && r.is_array() && l.arr().is_tuple == r.arr().is_tuple) {
        std::vector<Value> items = l.arr().items;
        items.insert(items.end(), r.arr().items.begin(), r.arr().items.end());
        return Value::List(std::move(items), l.arr().is_tuple);
      }
      break;
    case Op::kMul:
      if ((l.is_string() || l.is_array()) && r.is_integral()) {
        Result<Value> v = Repeat(l, r.i(), limits_.max_output_bytes);
        if (!v.ok()) return LineError(site, v.message());
        return v;
      }
      if (l.is_integral() && (r.is_string() || r.is_array())) {
        Result<Value> v = Repeat(r, l.i(), limits_.max_output_bytes);
        if (!v.ok()) return LineError(site, v.message());
        return v;
      }
      break;
    case Op::kMod:
      if (l.is_string()) {
        Result<std::string> s = PercentFormat(l.s(), r);
        if (!s.ok()) return LineError(site, s.message());
        return Value::Str(std::move(s).value());
      }
      break;
    default:
      break;
  }
  return type_error();
}

Result<bool> Interpreter::CompareOp(Op op, const Value& l, const Value& r, const Expr& site) {
  switch (op) {
    case Op::kEq:
      return Equals(l, r);
    case Op::kNe:
      return !Equals(l, r);
    case Op::kIn:
    case Op::kNotIn: {
      bool found = false;
      switch (r.kind()) {
        case Value::Kind::kString:
          if (!l.is_string()) {
            return LineError(
                site,
                std::string("'in <string>' requires string as left operand, not ") + l.TypeName());
          }
          found = r.s().find(l.s()) != std::string::npos;
          break;
        case Value::Kind::kArray:
          for (const Value& item : r.arr().items) {
            if (Equals(l, item)) {
              found = true;
              break;
            }
          }
          break;
        case Value::Kind::kObject:
          found = l.is_string() && r.obj().Find(l.s()) != nullptr;
          break;
        case Value::Kind::kUndefined:
          break;
        default:
          return LineError(site,
                           std::string("argument of type '") + r.TypeName() + "' is not iterable");
      }
      return op == Op::kIn ? found : !found;
    }
    default:
      break;
  }
  if (l.is_undefined()) return UndefinedError(l, site);
  if (r.is_undefined()) return UndefinedError(r, site);
  Result<int> c = Compare(l, r);
  if (!c.ok()) return LineError(site, c.message());
  switch (op) {
    case Op::kLt:
      return *c < 0;
    case Op::kLe:
      return *c <= 0;
    case Op::kGt:
      return *c > 0;
    case Op::kGe:
      return *c >= 0;
    default:
      return false;
  }
}

Result<Value> Interpreter::Unary(Op op, const Value& v, const Expr& site) {
  if (op == Op::kNot) return Value::Bool(!v.Truthy());
  if (v.is_undefined()) return UndefinedError(v, site);
  if (!v.is_number()) {
    return LineError(
        site, std::string("bad operand type for ") + OpSymbol(op) + ": '" + v.TypeName() + "'");
  }
  if (op == Op::kPos) return v.is_float() ? v : Value::Int(v.i());
  if (v.is_float()) return Value::Float(-v.f());
  if (v.i() == INT64_MIN) return LineError(site, "integer overflow");
  return Value::Int(-v.i());
}

}  // namespace brisk::jinja
