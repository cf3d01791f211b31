// Expression evaluation: names, attributes, subscripts, calls, filters and tests.
#include "tokenizer/jinja/interpreter.h"
#include "tokenizer/jinja/text.h"

namespace brisk::jinja {

Status Interpreter::LineError(const Expr& e, const std::string& msg) const {
  return Status::Error(msg + " at line " + std::to_string(e.line));
}

Status Interpreter::UndefinedError(const Value& v, const Expr& site) const {
  // The name is a variable or key ("'x' is undefined") or a list index ("item [3] ...").
  const std::string& name = v.undefined_name();
  if (name.empty()) return LineError(site, "value is undefined");
  if (name[0] == '[') return LineError(site, "item " + name + " is undefined");
  return LineError(site, "'" + name + "' is undefined");
}

namespace {

// True when evaluating the arguments after args[0] may call a macro (which can change any
// variable, so a borrowed args[0] must be copied first).
bool RestHasCall(const Expr& e) {
  for (size_t i = 1; i < e.args.size(); ++i) {
    if (e.args[i] && e.args[i]->has_call) return true;
  }
  for (const ExprPtr& a : e.kwargs) {
    if (a->has_call) return true;
  }
  return false;
}

// Keeps a borrowed value alive across a later evaluation that may call a macro.
const Value* Pin(const Value* v, Value* tmp, bool needed) {
  if (!needed || v == tmp) return v;
  *tmp = *v;
  return tmp;
}

}  // namespace

Result<const Value*> Interpreter::EvalRef(const Expr& e, Value* tmp) {
  switch (e.kind) {
    case ExprKind::kLiteral:
      return &e.literal;
    case ExprKind::kName:
      if (const Value* v = Lookup(e.sym)) return v;
      break;
    case ExprKind::kGetAttr: {
      Value holder;
      BRISK_ASSIGN_OR_RETURN(const Value* obj, EvalRef(*e.args[0], &holder));
      if (obj->is_object()) {
        const Value* v = obj->obj().Find(e.name);
        if (v == nullptr) {
          *tmp = Value::Undefined(e.name);
        } else if (obj == &holder) {
          *tmp = *v;  // the container is a temporary
        } else {
          return v;
        }
        return tmp;
      }
      BRISK_ASSIGN_OR_RETURN(*tmp, GetAttr(*obj, e.name, e));
      return tmp;
    }
    case ExprKind::kGetItem: {
      Value holder;
      BRISK_ASSIGN_OR_RETURN(const Value* obj, EvalRef(*e.args[0], &holder));
      obj = Pin(obj, &holder, e.args[1]->has_call);
      Value key_holder;
      BRISK_ASSIGN_OR_RETURN(const Value* key, EvalRef(*e.args[1], &key_holder));
      if (obj != &holder) {
        if (obj->is_object() && key->is_string()) {
          if (const Value* v = obj->obj().Find(key->s())) return v;
        } else if (obj->is_array() && key->is_integral()) {
          const auto& items = obj->arr().items;
          const int64_t n = static_cast<int64_t>(items.size());
          const int64_t i = key->i() < 0 ? key->i() + n : key->i();
          if (i >= 0 && i < n) return &items[static_cast<size_t>(i)];
        }
      }
      BRISK_ASSIGN_OR_RETURN(*tmp, GetItem(*obj, *key, e));
      return tmp;
    }
    default:
      break;
  }
  BRISK_ASSIGN_OR_RETURN(*tmp, Eval(e));
  return tmp;
}

Result<Value> Interpreter::Eval(const Expr& e) {
  switch (e.kind) {
    case ExprKind::kLiteral:
      return e.literal;
    case ExprKind::kName:
      return EvalName(e);
    case ExprKind::kList:
    case ExprKind::kTuple: {
      std::vector<Value> items;
      items.reserve(e.args.size());
      for (const ExprPtr& a : e.args) {
        BRISK_ASSIGN_OR_RETURN(Value v, Eval(*a));
        items.push_back(std::move(v));
      }
      return Value::List(std::move(items), e.kind == ExprKind::kTuple);
    }
    case ExprKind::kDict: {
      auto o = std::make_shared<ObjectData>();
      for (size_t i = 0; i + 1 < e.args.size(); i += 2) {
        BRISK_ASSIGN_OR_RETURN(Value k, Eval(*e.args[i]));
        if (!k.is_string()) return LineError(e, "dict keys must be strings");
        BRISK_ASSIGN_OR_RETURN(Value v, Eval(*e.args[i + 1]));
        o->Set(std::move(k.s()), std::move(v));
      }
      return Value::Object(std::move(o));
    }
    case ExprKind::kGetAttr:
    case ExprKind::kGetItem: {
      Value tmp;
      BRISK_ASSIGN_OR_RETURN(const Value* v, EvalRef(e, &tmp));
      if (v == &tmp) return tmp;
      return *v;
    }
    case ExprKind::kSlice: {
      Value holder;
      BRISK_ASSIGN_OR_RETURN(const Value* obj, EvalRef(*e.args[0], &holder));
      obj = Pin(obj, &holder, RestHasCall(e));
      return Slice(*obj, e);
    }
    case ExprKind::kCall:
      return EvalCall(e, nullptr);
    case ExprKind::kFilter: {
      Value holder;
      BRISK_ASSIGN_OR_RETURN(const Value* input, EvalRef(*e.args[0], &holder));
      return ApplyFilterChain(e, *Pin(input, &holder, RestHasCall(e)), false);
    }
    case ExprKind::kTest: {
      Value holder;
      BRISK_ASSIGN_OR_RETURN(const Value* v, EvalRef(*e.args[0], &holder));
      v = Pin(v, &holder, RestHasCall(e));
      CallArgs args;
      BRISK_RETURN_IF_ERROR(EvalArgs(e, 1, &args));
      Result<bool> r = ApplyTest(e.id, *v, args);
      if (!r.ok()) return LineError(e, "test '" + e.name + "': " + r.message());
      return Value::Bool(*r != e.negate);
    }
    case ExprKind::kUnary: {
      Value holder;
      BRISK_ASSIGN_OR_RETURN(const Value* v, EvalRef(*e.args[0], &holder));
      return Unary(e.op, *v, e);
    }
    case ExprKind::kBinary: {
      if (e.op == Op::kAnd || e.op == Op::kOr) {
        Value holder;
        BRISK_ASSIGN_OR_RETURN(const Value* l, EvalRef(*e.args[0], &holder));
        if (l->Truthy() == (e.op == Op::kOr)) return l == &holder ? std::move(holder) : *l;
        return Eval(*e.args[1]);
      }
      BRISK_ASSIGN_OR_RETURN(Value l, Eval(*e.args[0]));
      Value holder;
      BRISK_ASSIGN_OR_RETURN(const Value* r, EvalRef(*e.args[1], &holder));
      return Binary(e.op, std::move(l), *r, e);
    }
    case ExprKind::kCompare: {
      Value lh, rh;
      BRISK_ASSIGN_OR_RETURN(const Value* l, EvalRef(*e.args[0], &lh));
      for (size_t i = 0; i < e.ops.size(); ++i) {
        l = Pin(l, &lh, e.args[i + 1]->has_call);
        BRISK_ASSIGN_OR_RETURN(const Value* r, EvalRef(*e.args[i + 1], &rh));
        BRISK_ASSIGN_OR_RETURN(bool ok, CompareOp(e.ops[i], *l, *r, e));
        if (!ok) return Value::Bool(false);
        if (r == &rh) {
          std::swap(lh, rh);
          l = &lh;
        } else {
          l = r;
        }
      }
      return Value::Bool(true);
    }
    case ExprKind::kCondExpr: {
      Value holder;
      BRISK_ASSIGN_OR_RETURN(const Value* c, EvalRef(*e.args[1], &holder));
      if (c->Truthy()) return Eval(*e.args[0]);
      if (e.args[2]) return Eval(*e.args[2]);
      return Value::Undefined();
    }
  }
  return Value::Undefined();
}

Result<Value> Interpreter::EvalName(const Expr& e) {
  if (const Value* v = Lookup(e.sym)) return *v;
  if (e.id >= 0) {
    Value& g = globals_[static_cast<size_t>(e.id)];
    if (g.is_undefined()) {
      auto c = std::make_shared<Callable>();
      c->type = Callable::Type::kGlobal;
      c->global = static_cast<Global>(e.id);
      g = Value::Func(std::move(c));
    }
    return g;
  }
  return Value::Undefined(e.name);
}

Status Interpreter::EvalArgs(const Expr& e, size_t first, CallArgs* args) {
  args->max_string = limits_.max_output_bytes;
  args->pos.reserve(e.args.size() - first);
  for (size_t i = first; i < e.args.size(); ++i) {
    BRISK_ASSIGN_OR_RETURN(Value v, Eval(*e.args[i]));
    args->pos.push_back(std::move(v));
  }
  for (size_t i = 0; i < e.kwargs.size(); ++i) {
    BRISK_ASSIGN_OR_RETURN(Value v, Eval(*e.kwargs[i]));
    args->kw.emplace_back(e.kwnames[i], std::move(v));
  }
  return Status::Ok();
}

Result<Value> Interpreter::ApplyFilterChain(const Expr& e, Value input, bool whole_chain) {
  // A {% filter %} block passes its body through the whole chain, whose innermost input is a
  // placeholder; an expression `x|f` has already evaluated x (including inner filters).
  if (whole_chain && e.args[0]->kind == ExprKind::kFilter) {
    BRISK_ASSIGN_OR_RETURN(input, ApplyFilterChain(*e.args[0], std::move(input), true));
  }
  CallArgs args;
  BRISK_RETURN_IF_ERROR(EvalArgs(e, 1, &args));
  Result<Value> r = ApplyFilter(e.id, input, args);
  if (!r.ok()) return LineError(e, "filter '" + e.name + "': " + r.message());
  if (r->is_string() && r->s().size() > limits_.max_output_bytes) {
    return LineError(e, "string result exceeds the output limit");
  }
  return r;
}

Result<Value> Interpreter::EvalCall(const Expr& e, const Value* caller) {
  const Expr& callee = *e.args[0];
  if (callee.kind == ExprKind::kGetAttr) {  // method call: obj.name(...)
    Value holder;
    BRISK_ASSIGN_OR_RETURN(const Value* obj, EvalRef(*callee.args[0], &holder));
    obj = Pin(obj, &holder, RestHasCall(e));
    if (obj->is_undefined()) return UndefinedError(*obj, e);
    const Value* member = obj->is_object() ? obj->obj().Find(callee.name) : nullptr;
    if (member != nullptr && member->is_callable()) {
      const Value fn = *member;
      CallArgs args;
      BRISK_RETURN_IF_ERROR(EvalArgs(e, 1, &args));
      return Invoke(fn.func(), args, caller, e);
    }
    CallArgs args;
    BRISK_RETURN_IF_ERROR(EvalArgs(e, 1, &args));
    Result<Value> r = CallMethod(*obj, callee.name, args);
    if (!r.ok()) return LineError(e, r.message());
    if (r->is_string() && r->s().size() > limits_.max_output_bytes) {
      return LineError(e, "string result exceeds the output limit");
    }
    return r;
  }
  BRISK_ASSIGN_OR_RETURN(Value fn, Eval(callee));
  if (fn.is_undefined()) return UndefinedError(fn, e);
  if (!fn.is_callable()) {
    return LineError(e, "'" + std::string(fn.TypeName()) + "' object is not callable");
  }
  CallArgs args;
  BRISK_RETURN_IF_ERROR(EvalArgs(e, 1, &args));
  return Invoke(fn.func(), args, caller, e);
}

Result<Value> Interpreter::Invoke(const Callable& c, const CallArgs& args, const Value* caller,
                                  const Expr& site) {
  switch (c.type) {
    case Callable::Type::kMacro:
    case Callable::Type::kCaller:
      return CallMacro(c, args, caller, site);
    case Callable::Type::kGlobal:
      break;
  }
  switch (c.global) {
    case Global::kRaiseException: {
      // HF raises TemplateError(message): the message is the whole error.
      const Value* msg = args.Get(0, "message");
      return Status::Error(msg ? ToStr(*msg) : std::string("raise_exception called"));
    }
    case Global::kNamespace: {
      Result<Value> ns = MakeNamespace(args);
      if (!ns.ok()) return LineError(site, ns.message());
      return ns;
    }
    default: {
      Result<Value> r = CallGlobal(c.global, args, limits_.max_loop_iterations);
      if (!r.ok()) return LineError(site, r.message());
      return r;
    }
  }
}

Result<Value> Interpreter::MakeNamespace(const CallArgs& args) {
  auto ns = std::make_shared<ObjectData>();
  ns->is_namespace = true;
  for (const Value& p : args.pos) {
    if (!p.is_object() || p.obj().is_namespace) {
      return Status::Error("namespace() positional arguments must be dicts");
    }
    for (const auto& [k, v] : p.obj().items) ns->Set(k, v);
  }
  for (const auto& [k, v] : args.kw) ns->Set(std::string(k), v);
  namespaces_.push_back(ns);
  return Value::Object(std::move(ns));
}

Result<Value> Interpreter::CallMacro(const Callable& c, const CallArgs& args, const Value* caller,
                                     const Expr& site) {
  const Node& def = *c.node;
  if (call_depth_ >= limits_.max_call_depth) {
    return LineError(site, "maximum macro recursion depth (" +
                               std::to_string(limits_.max_call_depth) + ") exceeded");
  }
  const std::string what = c.type == Callable::Type::kMacro ? "macro '" + def.name + "'" : "caller";
  if (args.pos.size() > def.params.size()) {
    return LineError(site, what + " takes " + std::to_string(def.params.size()) +
                               " arguments but " + std::to_string(args.pos.size()) + " were given");
  }
  for (const auto& [k, v] : args.kw) {
    bool known = false;
    for (const MacroParam& p : def.params) known = known || p.name == k;
    if (!known) return LineError(site, what + " has no parameter '" + std::string(k) + "'");
  }
  const bool scope_alive = c.frame <= Top() && frames_[c.frame].serial == c.serial;
  ++call_depth_;
  PushFrame(scope_alive ? c.frame : 0);
  Status st;
  for (size_t i = 0; i < def.params.size() && st.ok(); ++i) {
    const MacroParam& p = def.params[i];
    if (i < args.pos.size()) {
      Assign(p.sym, args.pos[i]);
      continue;
    }
    const Value* kw = args.Get(SIZE_MAX, p.name);
    if (kw != nullptr) {
      Assign(p.sym, *kw);
    } else if (p.default_value) {
      Result<Value> d = Eval(*p.default_value);
      if (!d.ok()) {
        st = d.status();
      } else {
        Assign(p.sym, std::move(d).value());
      }
    } else {
      Assign(p.sym, Value::Undefined(p.name));
    }
  }
  if (caller != nullptr) Assign(program_.caller_sym, *caller);
  std::string out;
  if (st.ok()) st = RenderBodyTo(def.body, &out);
  PopFrame();
  --call_depth_;
  BRISK_RETURN_IF_ERROR(st);
  return Value::Str(std::move(out));
}

Result<Value> Interpreter::GetAttr(const Value& obj, const std::string& name, const Expr& site) {
  switch (obj.kind()) {
    case Value::Kind::kObject: {
      const Value* v = obj.obj().Find(name);
      return v ? *v : Value::Undefined(name);
    }
    case Value::Kind::kUndefined:
      return UndefinedError(obj, site);
    case Value::Kind::kLoop: {
      const LoopState& l = obj.loop();
      const auto n = static_cast<int64_t>(l.items->items.size());
      const int64_t i = l.index0;
      if (name == "index") return Value::Int(i + 1);
      if (name == "index0") return Value::Int(i);
      if (name == "first") return Value::Bool(i == 0);
      if (name == "last") return Value::Bool(i == n - 1);
      if (name == "length") return Value::Int(n);
      if (name == "revindex") return Value::Int(n - i);
      if (name == "revindex0") return Value::Int(n - i - 1);
      if (name == "depth") return Value::Int(l.depth);
      if (name == "depth0") return Value::Int(l.depth - 1);
      if (name == "previtem") {
        return i > 0 ? l.items->items[i - 1] : Value::Undefined("loop.previtem");
      }
      if (name == "nextitem") {
        return i + 1 < n ? l.items->items[i + 1] : Value::Undefined("loop.nextitem");
      }
      return Value::Undefined("loop." + name);
    }
    default:
      return Value::Undefined(name);
  }
}

Result<Value> Interpreter::GetItem(const Value& obj, const Value& key, const Expr& site) {
  switch (obj.kind()) {
    case Value::Kind::kObject: {
      if (!key.is_string()) return Value::Undefined();
      const Value* v = obj.obj().Find(key.s());
      return v ? *v : Value::Undefined(key.s());
    }
    case Value::Kind::kArray: {
      if (!key.is_integral()) return Value::Undefined();
      const auto& items = obj.arr().items;
      int64_t i = key.i();
      if (i < 0) i += static_cast<int64_t>(items.size());
      if (i < 0 || i >= static_cast<int64_t>(items.size())) {
        return Value::Undefined("[" + std::to_string(key.i()) + "]");
      }
      return items[static_cast<size_t>(i)];
    }
    case Value::Kind::kString: {
      if (!key.is_integral()) return Value::Undefined();
      const std::string& s = obj.s();
      int64_t i = key.i();
      if (text::IsAscii(s)) {
        if (i < 0) i += static_cast<int64_t>(s.size());
        if (i < 0 || i >= static_cast<int64_t>(s.size())) return Value::Undefined();
        return Value::Str(s.substr(static_cast<size_t>(i), 1));
      }
      const std::vector<size_t> off = text::CodePointOffsets(s);
      const auto n = static_cast<int64_t>(off.size()) - 1;
      if (i < 0) i += n;
      if (i < 0 || i >= n) return Value::Undefined();
      return Value::Str(s.substr(off[i], off[i + 1] - off[i]));
    }
    case Value::Kind::kLoop:
      if (key.is_string()) return GetAttr(obj, key.s(), site);
      return Value::Undefined();
    case Value::Kind::kUndefined:
      return UndefinedError(obj, site);
    default:
      return Value::Undefined();
  }
}

Result<Value> Interpreter::Slice(const Value& obj, const Expr& e) {
  int64_t bounds[3] = {0, 0, 1};
  bool given[3] = {false, false, false};
  for (int k = 0; k < 3; ++k) {
    if (!e.args[k + 1]) continue;
    BRISK_ASSIGN_OR_RETURN(Value v, Eval(*e.args[k + 1]));
    if (v.is_none() || v.is_undefined()) continue;
    if (!v.is_integral()) return LineError(e, "slice indices must be integers or None");
    bounds[k] = v.i();
    given[k] = true;
  }
  const int64_t step = bounds[2];
  if (step == 0) return LineError(e, "slice step cannot be zero");
  if (obj.is_undefined()) return UndefinedError(obj, e);
  if (!obj.is_array() && !obj.is_string()) {
    return LineError(e, "'" + std::string(obj.TypeName()) + "' object is not subscriptable");
  }
  const bool ascii = obj.is_string() && text::IsAscii(obj.s());
  std::vector<size_t> off;
  if (obj.is_string() && !ascii) off = text::CodePointOffsets(obj.s());
  const int64_t n = obj.is_array() ? static_cast<int64_t>(obj.arr().items.size())
                                   : (ascii ? static_cast<int64_t>(obj.s().size())
                                            : static_cast<int64_t>(off.size()) - 1);
  // Python's slice index adjustment.
  auto adjust = [&](int k, int64_t dflt) {
    if (!given[k]) return dflt;
    int64_t v = bounds[k];
    if (v < 0) {
      v += n;
      if (v < 0) v = step < 0 ? -1 : 0;
    } else if (v >= n) {
      v = step < 0 ? n - 1 : n;
    }
    return v;
  };
  const int64_t start = adjust(0, step < 0 ? n - 1 : 0);
  const int64_t stop = adjust(1, step < 0 ? -1 : n);
  std::vector<int64_t> idx;
  for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) idx.push_back(i);
  if (obj.is_array()) {
    std::vector<Value> items;
    items.reserve(idx.size());
    for (int64_t i : idx) items.push_back(obj.arr().items[static_cast<size_t>(i)]);
    return Value::List(std::move(items), obj.arr().is_tuple);
  }
  const std::string& s = obj.s();
  std::string out;
  out.reserve(idx.size());
  for (int64_t i : idx) {
    if (ascii) {
      out.push_back(s[static_cast<size_t>(i)]);
    } else {
      out.append(s, off[i], off[i + 1] - off[i]);
    }
  }
  return Value::Str(std::move(out));
}

}  // namespace brisk::jinja
