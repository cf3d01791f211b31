// Syntax tree of a parsed template. Nodes are immutable after parsing; the interpreter walks
// them directly. Names are resolved to small integer symbols at parse time.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "tokenizer/jinja/value.h"

namespace brisk::jinja {

enum class ExprKind : uint8_t {
  kLiteral,   // literal
  kName,      // name / sym / global_id
  kList,      // args = items
  kTuple,     // args = items
  kDict,      // args = k0, v0, k1, v1, ...
  kGetAttr,   // args[0] . name
  kGetItem,   // args[0] [ args[1] ]
  kSlice,     // args[0] [ args[1] : args[2] : args[3] ] (null when omitted)
  kCall,      // args[0] ( args[1..], kwnames = kwargs )
  kFilter,    // args[0] | name ( args[1..], kwargs ), id = filter id
  kTest,      // args[0] is [not] name ( args[1..] ), id = test id
  kUnary,     // op args[0]
  kBinary,    // args[0] op args[1]
  kCompare,   // args[0] ops[0] args[1] ops[1] args[2] ... (chained)
  kCondExpr,  // args[0] if args[1] else args[2] (args[2] may be null)
};

enum class Op : uint8_t {
  kNone,
  kAdd,
  kSub,
  kMul,
  kDiv,
  kFloorDiv,
  kMod,
  kPow,
  kConcat,  // ~
  kAnd,
  kOr,
  kNot,
  kNeg,
  kPos,
  kEq,
  kNe,
  kLt,
  kLe,
  kGt,
  kGe,
  kIn,
  kNotIn,
};

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
  ExprKind kind;
  int line = 0;
  Op op = Op::kNone;
  bool negate = false;    // kTest: `is not`
  int sym = -1;           // kName: symbol id
  int id = -1;            // kName: builtin global id (-1 if none); kFilter/kTest: builtin id
  int depth = 1;          // height of this subtree (bounded at parse time)
  bool has_call = false;  // the subtree contains a call (which may run a macro)
  std::string name;       // kName, kGetAttr, kFilter, kTest
  Value literal;          // kLiteral
  std::vector<ExprPtr> args;
  std::vector<std::string> kwnames;
  std::vector<ExprPtr> kwargs;
  std::vector<Op> ops;  // kCompare
};

enum class NodeKind : uint8_t {
  kText,         // text
  kOutput,       // {{ expr }}
  kIf,           // branches: (cond, body)...; cond null for else
  kFor,          // targets in expr [if cond] body [else else_body]
  kSet,          // targets = expr, or ns.attr = expr (attr non-empty)
  kSetBlock,     // {% set target %}body{% endset %}
  kMacro,        // name(params) body
  kCallBlock,    // {% call(params) expr %}body{% endcall %}
  kFilterBlock,  // {% filter expr %}body (expr is a filter chain over a placeholder)
  kWith,         // {% with targets = values %}body
  kBreak,
  kContinue,
  kScope,  // body rendered as is ({% generation %})
};

struct Node;
using NodePtr = std::unique_ptr<Node>;
using Body = std::vector<NodePtr>;

struct MacroParam {
  int sym;
  std::string name;
  ExprPtr default_value;  // null when required
};

struct Node {
  NodeKind kind;
  int line = 0;
  std::string text;
  ExprPtr expr;
  ExprPtr cond;
  std::vector<std::pair<ExprPtr, Body>> branches;
  std::vector<int> targets;  // symbols assigned (for/set/with)
  std::vector<std::string> target_names;
  std::string attr;             // kSet: namespace attribute
  std::vector<ExprPtr> values;  // kWith: one per target
  std::string name;             // kMacro name
  int name_sym = -1;
  std::vector<MacroParam> params;  // kMacro, kCallBlock (caller's parameters)
  Body body;
  Body else_body;
};

// A parsed template: the tree plus the symbol table its names were resolved against.
struct Program {
  Body body;
  std::vector<std::string> symbols;                 // symbol id -> name
  std::unordered_map<std::string, int> symbol_ids;  // name -> symbol id
  int loop_sym = -1;                                // `loop`
  int caller_sym = -1;                              // `caller`
};

}  // namespace brisk::jinja
