// Tree-walking renderer for a parsed Program. One Interpreter renders once; it is cheap to
// construct. Statements are in interpreter.cc, expressions in eval.cc, operators in
// operators.cc.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "tokenizer/jinja/ast.h"
#include "tokenizer/jinja/builtins.h"
#include "tokenizer/jinja/chat_template.h"

namespace brisk::jinja {

// A macro, a call block's `caller`, or a global function.
struct Callable {
  enum class Type : uint8_t { kMacro, kCaller, kGlobal };
  Type type;
  const Node* node = nullptr;  // kMacro / kCaller
  int frame = 0;               // defining scope (frame index and serial)
  uint64_t serial = 0;
  Global global = Global::kRange;
};

class Interpreter {
 public:
  Interpreter(const Program& program, const RenderLimits& limits);
  ~Interpreter();

  // Binds a context variable; names the template never mentions are skipped.
  Status Bind(std::string_view name, const nlohmann::ordered_json& value);
  Result<std::string> Run();

 private:
  struct Frame {
    std::vector<std::pair<int, Value>> vars;
    int parent = -1;
    uint64_t serial = 0;
  };
  enum class Flow : uint8_t { kNormal, kBreak, kContinue };

  // --- scopes
  void PushFrame(int parent);
  void PopFrame();
  int Top() const { return static_cast<int>(depth_) - 1; }
  const Value* Lookup(int sym) const;
  void Assign(int sym, Value v);
  Status AssignTargets(const Node& node, const std::vector<int>& syms, Value v);

  // --- statements (interpreter.cc)
  Status ExecBody(const Body& body);
  Status Exec(const Node& node);
  Status ExecFor(const Node& node);
  Status ExecSet(const Node& node);
  Status RenderBodyTo(const Body& body, std::string* out);
  Status Emit(std::string_view s, int line);

  // --- expressions (eval.cc)
  Result<Value> Eval(const Expr& e);
  // Evaluates without copying when the value already lives somewhere stable (a variable, an
  // element reachable from one, a literal): returns a pointer to it, or evaluates into *tmp
  // and returns tmp. The pointer stays valid until a statement runs or a macro is called.
  Result<const Value*> EvalRef(const Expr& e, Value* tmp);
  Result<Value> EvalName(const Expr& e);
  Result<Value> EvalCall(const Expr& e, const Value* caller);
  Status EvalArgs(const Expr& e, size_t first, CallArgs* args);
  Result<Value> Invoke(const Callable& c, const CallArgs& args, const Value* caller,
                       const Expr& site);
  Result<Value> CallMacro(const Callable& c, const CallArgs& args, const Value* caller,
                          const Expr& site);
  Result<Value> MakeNamespace(const CallArgs& args);
  Result<Value> ApplyFilterChain(const Expr& e, Value input, bool whole_chain);
  Result<Value> GetAttr(const Value& obj, const std::string& name, const Expr& site);
  Result<Value> GetItem(const Value& obj, const Value& key, const Expr& site);
  Result<Value> Slice(const Value& obj, const Expr& e);

  // --- operators (operators.cc)
  Result<Value> Binary(Op op, Value l, const Value& r, const Expr& site);
  Result<bool> CompareOp(Op op, const Value& l, const Value& r, const Expr& site);
  Result<Value> Unary(Op op, const Value& v, const Expr& site);

  Status LineError(const Expr& e, const std::string& msg) const;
  Status UndefinedError(const Value& v, const Expr& site) const;

  const Program& program_;
  const RenderLimits limits_;
  std::vector<Frame> frames_;
  size_t depth_ = 0;
  uint64_t next_serial_ = 0;
  std::string* out_ = nullptr;
  Flow flow_ = Flow::kNormal;
  int call_depth_ = 0;
  int64_t iterations_ = 0;
  std::vector<std::shared_ptr<ObjectData>> namespaces_;  // cleared at the end (breaks cycles)
  std::array<Value, 5> globals_;
};

}  // namespace brisk::jinja
