// Statement execution and scopes.
#include "tokenizer/jinja/interpreter.h"

#include "tokenizer/jinja/text.h"

namespace brisk::jinja {

Interpreter::Interpreter(const Program& program, const RenderLimits& limits)
    : program_(program), limits_(limits) {
  frames_.reserve(16);
  PushFrame(-1);  // the template's top-level scope
}

Interpreter::~Interpreter() {
  // Namespaces are the only mutable values; emptying them breaks any reference cycle a
  // template built through them (`{% set ns.self = ns %}`).
  for (auto& ns : namespaces_) ns->items.clear();
}

Status Interpreter::Bind(std::string_view name, const nlohmann::ordered_json& value) {
  auto it = program_.symbol_ids.find(std::string(name));
  if (it == program_.symbol_ids.end()) return Status::Ok();
  BRISK_ASSIGN_OR_RETURN(Value v, FromJson(value));
  Assign(it->second, std::move(v));
  return Status::Ok();
}

Result<std::string> Interpreter::Run() {
  std::string out;
  out_ = &out;
  BRISK_RETURN_IF_ERROR(ExecBody(program_.body));
  return out;
}

void Interpreter::PushFrame(int parent) {
  if (depth_ == frames_.size()) frames_.emplace_back();
  Frame& f = frames_[depth_++];
  f.vars.clear();
  f.parent = parent;
  f.serial = ++next_serial_;
}

void Interpreter::PopFrame() {
  Frame& f = frames_[--depth_];
  f.vars.clear();
  f.serial = 0;
}

const Value* Interpreter::Lookup(int sym) const {
  for (int f = Top(); f >= 0; f = frames_[f].parent) {
    for (const auto& [s, v] : frames_[f].vars) {
      if (s == sym) return &v;
    }
  }
  return nullptr;
}

void Interpreter::Assign(int sym, Value v) {
  auto& vars = frames_[Top()].vars;
  for (auto& [s, old] : vars) {
    if (s == sym) {
      old = std::move(v);
      return;
    }
  }
  vars.emplace_back(sym, std::move(v));
}

Status Interpreter::AssignTargets(const Node& node, const std::vector<int>& syms, Value v) {
  if (syms.size() == 1) {
    Assign(syms[0], std::move(v));
    return Status::Ok();
  }
  if (!v.is_array()) {
    return Status::Error("cannot unpack a value of type '" + std::string(v.TypeName()) + "' into " +
                         std::to_string(syms.size()) + " variables at line " +
                         std::to_string(node.line));
  }
  const auto& items = v.arr().items;
  if (items.size() != syms.size()) {
    return Status::Error("cannot unpack " + std::to_string(items.size()) + " values into " +
                         std::to_string(syms.size()) + " variables at line " +
                         std::to_string(node.line));
  }
  for (size_t i = 0; i < syms.size(); ++i) Assign(syms[i], items[i]);
  return Status::Ok();
}

Status Interpreter::Emit(std::string_view s, int line) {
  if (out_->size() + s.size() > limits_.max_output_bytes) {
    return Status::Error("template output exceeds the limit of " +
                         std::to_string(limits_.max_output_bytes) + " bytes at line " +
                         std::to_string(line));
  }
  out_->append(s);
  return Status::Ok();
}

Status Interpreter::ExecBody(const Body& body) {
  for (const NodePtr& n : body) {
    BRISK_RETURN_IF_ERROR(Exec(*n));
    if (flow_ != Flow::kNormal) break;
  }
  return Status::Ok();
}

Status Interpreter::RenderBodyTo(const Body& body, std::string* out) {
  std::string* saved = out_;
  out_ = out;
  Status st = ExecBody(body);
  out_ = saved;
  return st;
}

Status Interpreter::Exec(const Node& node) {
  switch (node.kind) {
    case NodeKind::kText:
      return Emit(node.text, node.line);
    case NodeKind::kOutput: {
      Value holder;
      BRISK_ASSIGN_OR_RETURN(const Value* v, EvalRef(*node.expr, &holder));
      if (v->is_string()) return Emit(v->s(), node.line);
      return Emit(ToStr(*v), node.line);
    }
    case NodeKind::kIf:
      for (const auto& [cond, body] : node.branches) {
        if (cond) {
          Value holder;
          BRISK_ASSIGN_OR_RETURN(const Value* c, EvalRef(*cond, &holder));
          if (!c->Truthy()) continue;
        }
        return ExecBody(body);
      }
      return Status::Ok();
    case NodeKind::kFor:
      return ExecFor(node);
    case NodeKind::kSet:
      return ExecSet(node);
    case NodeKind::kSetBlock: {
      std::string captured;
      BRISK_RETURN_IF_ERROR(RenderBodyTo(node.body, &captured));
      Assign(node.targets[0], Value::Str(std::move(captured)));
      return Status::Ok();
    }
    case NodeKind::kMacro: {
      auto c = std::make_shared<Callable>();
      c->type = Callable::Type::kMacro;
      c->node = &node;
      c->frame = Top();
      c->serial = frames_[Top()].serial;
      Assign(node.name_sym, Value::Func(std::move(c)));
      return Status::Ok();
    }
    case NodeKind::kCallBlock: {
      auto c = std::make_shared<Callable>();
      c->type = Callable::Type::kCaller;
      c->node = &node;
      c->frame = Top();
      c->serial = frames_[Top()].serial;
      const Value caller = Value::Func(std::move(c));
      BRISK_ASSIGN_OR_RETURN(Value v, EvalCall(*node.expr, &caller));
      if (v.is_string()) return Emit(v.s(), node.line);
      return Emit(ToStr(v), node.line);
    }
    case NodeKind::kFilterBlock: {
      std::string captured;
      BRISK_RETURN_IF_ERROR(RenderBodyTo(node.body, &captured));
      BRISK_ASSIGN_OR_RETURN(Value v,
                             ApplyFilterChain(*node.expr, Value::Str(std::move(captured)), true));
      return Emit(ToStr(v), node.line);
    }
    case NodeKind::kWith: {
      std::vector<Value> values;
      for (const ExprPtr& e : node.values) {
        BRISK_ASSIGN_OR_RETURN(Value v, Eval(*e));
        values.push_back(std::move(v));
      }
      PushFrame(Top());
      for (size_t i = 0; i < values.size(); ++i) Assign(node.targets[i], std::move(values[i]));
      Status st = ExecBody(node.body);
      PopFrame();
      return st;
    }
    case NodeKind::kBreak:
      flow_ = Flow::kBreak;
      return Status::Ok();
    case NodeKind::kContinue:
      flow_ = Flow::kContinue;
      return Status::Ok();
    case NodeKind::kScope:
      return ExecBody(node.body);
  }
  return Status::Ok();
}

namespace {

// The items a for loop walks: lists/tuples as they are, dict keys, string characters.
Result<std::shared_ptr<const ArrayData>> Iterable(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kArray:
      return v.arr_shared();
    case Value::Kind::kUndefined:
      return std::make_shared<const ArrayData>();
    case Value::Kind::kObject: {
      if (v.obj().is_namespace) break;
      auto a = std::make_shared<ArrayData>();
      for (const auto& kv : v.obj().items) a->items.push_back(Value::Str(kv.first));
      return std::shared_ptr<const ArrayData>(std::move(a));
    }
    case Value::Kind::kString: {
      auto a = std::make_shared<ArrayData>();
      const std::string& s = v.s();
      for (size_t pos = 0; pos < s.size();) {
        const size_t start = pos;
        text::Decode(s, &pos);
        a->items.push_back(Value::Str(s.substr(start, pos - start)));
      }
      return std::shared_ptr<const ArrayData>(std::move(a));
    }
    default:
      break;
  }
  return Status::Error("'" + std::string(v.TypeName()) + "' object is not iterable");
}

}  // namespace

Status Interpreter::ExecFor(const Node& node) {
  BRISK_ASSIGN_OR_RETURN(Value seq, Eval(*node.expr));
  auto items_or = Iterable(seq);
  if (!items_or.ok()) return LineError(*node.expr, items_or.message());
  std::shared_ptr<const ArrayData> items = std::move(items_or).value();

  const auto too_many = [&]() {
    return Status::Error("for loops exceed the limit of " +
                         std::to_string(limits_.max_loop_iterations) + " iterations at line " +
                         std::to_string(node.line));
  };
  PushFrame(Top());
  if (node.cond) {  // `for x in xs if cond`: loop.* describe the filtered sequence
    auto kept = std::make_shared<ArrayData>();
    for (const Value& item : items->items) {
      if (++iterations_ > limits_.max_loop_iterations) {
        PopFrame();
        return too_many();
      }
      frames_[Top()].vars.clear();
      Status st = AssignTargets(node, node.targets, item);
      Result<Value> c = st.ok() ? Eval(*node.cond) : Result<Value>(st);
      if (!c.ok()) {
        PopFrame();
        return c.status();
      }
      if (c->Truthy()) kept->items.push_back(item);
    }
    items = std::move(kept);
  }
  Status st;
  if (!items->items.empty()) {
    auto state = std::make_shared<LoopState>();
    state->items = items;
    const Value loop = Value::Loop(state);
    for (size_t i = 0; i < items->items.size(); ++i) {
      if (++iterations_ > limits_.max_loop_iterations) {
        st = too_many();
        break;
      }
      frames_[Top()].vars.clear();
      state->index0 = static_cast<int64_t>(i);
      st = AssignTargets(node, node.targets, items->items[i]);
      if (!st.ok()) break;
      Assign(program_.loop_sym, loop);
      st = ExecBody(node.body);
      if (!st.ok()) break;
      if (flow_ == Flow::kBreak) {
        flow_ = Flow::kNormal;
        break;
      }
      flow_ = Flow::kNormal;
    }
  } else {
    frames_[Top()].vars.clear();
    st = ExecBody(node.else_body);
  }
  PopFrame();
  return st;
}

Status Interpreter::ExecSet(const Node& node) {
  BRISK_ASSIGN_OR_RETURN(Value v, Eval(*node.expr));
  if (node.attr.empty()) return AssignTargets(node, node.targets, std::move(v));
  const Value* target = Lookup(node.targets[0]);
  if (target == nullptr || !target->is_object() || !target->obj().is_namespace) {
    return Status::Error("cannot assign attribute '" + node.attr + "' of '" + node.target_names[0] +
                         "': only namespace() objects support it at line " +
                         std::to_string(node.line));
  }
  if (v.depth() + 1 > kMaxValueDepth) {
    return Status::Error("value nested too deeply (limit " + std::to_string(kMaxValueDepth) +
                         ") at line " + std::to_string(node.line));
  }
  ObjectData& ns = target->obj();
  ns.Set(node.attr, std::move(v));
  return Status::Ok();
}

}  // namespace brisk::jinja
