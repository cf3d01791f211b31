// Expression parsing with Jinja's grammar, loosest binding first: conditional
// `a if c else b`; or; and; not; comparisons (== != < <= > >= in, not in; chained); + -; ~;
// * / // %; **; unary - +; a primary with postfix . [] () followed by filters `|` and tests
// `is` (so `-x|f` is `(-x)|f` and `x|length - 1` is `(x|length) - 1`, as in Jinja).
#include <algorithm>

#include "tokenizer/jinja/builtins.h"
#include "tokenizer/jinja/parser.h"

namespace brisk::jinja {

namespace {

bool IsLiteral(const ExprPtr& e) { return e && e->kind == ExprKind::kLiteral; }

}  // namespace

Status Parser::Finish(Expr* e) {
  int d = 0;
  e->has_call = e->kind == ExprKind::kCall;
  for (const ExprPtr& a : e->args) {
    if (!a) continue;
    d = std::max(d, a->depth);
    e->has_call = e->has_call || a->has_call;
  }
  for (const ExprPtr& a : e->kwargs) {
    d = std::max(d, a->depth);
    e->has_call = e->has_call || a->has_call;
  }
  e->depth = d + 1;
  if (e->depth > kMaxExprDepth) {
    return Error(e->line,
                 "expression nested too deeply (limit " + std::to_string(kMaxExprDepth) + ")");
  }
  return Status::Ok();
}

Result<ExprPtr> Parser::Make(ExprKind kind, int line, std::vector<ExprPtr> args, Op op) {
  auto e = std::make_unique<Expr>();
  e->kind = kind;
  e->line = line;
  e->op = op;
  e->args = std::move(args);
  BRISK_RETURN_IF_ERROR(Finish(e.get()));
  // Fold constant list/tuple literals into a single shared value.
  if ((kind == ExprKind::kList || kind == ExprKind::kTuple) &&
      std::all_of(e->args.begin(), e->args.end(), IsLiteral)) {
    std::vector<Value> items;
    for (const ExprPtr& a : e->args) items.push_back(a->literal);
    e->literal = Value::List(std::move(items), kind == ExprKind::kTuple);
    e->kind = ExprKind::kLiteral;
    e->args.clear();
  }
  return e;
}

Result<ExprPtr> Parser::ParseTuple(bool with_condexpr, bool explicit_parens) {
  const int line = Cur().line;
  std::vector<ExprPtr> args;
  bool is_tuple = false;
  while (true) {
    if (!args.empty()) BRISK_RETURN_IF_ERROR(ExpectOp(","));
    const TokenType t = Cur().type;
    if (t == TokenType::kVarEnd || t == TokenType::kBlockEnd || IsOp(")")) break;
    BRISK_ASSIGN_OR_RETURN(ExprPtr e, ParseExpr(with_condexpr));
    args.push_back(std::move(e));
    if (IsOp(",")) {
      is_tuple = true;
    } else {
      break;
    }
  }
  if (!is_tuple) {
    if (args.size() == 1) return std::move(args[0]);
    if (!explicit_parens) return Unexpected("an expression");
  }
  return Make(ExprKind::kTuple, line, std::move(args));
}

Result<ExprPtr> Parser::ParseExpr(bool with_condexpr) {
  return with_condexpr ? ParseCondExpr() : ParseOr();
}

Result<ExprPtr> Parser::ParseCondExpr() {
  BRISK_ASSIGN_OR_RETURN(ExprPtr value, ParseOr());
  while (IsName("if")) {
    const int line = Cur().line;
    Advance();
    BRISK_ASSIGN_OR_RETURN(ExprPtr cond, ParseOr());
    ExprPtr other;
    if (SkipName("else")) {
      BRISK_ASSIGN_OR_RETURN(other, ParseCondExpr());
    }
    std::vector<ExprPtr> args;
    args.push_back(std::move(value));
    args.push_back(std::move(cond));
    args.push_back(std::move(other));
    BRISK_ASSIGN_OR_RETURN(value, Make(ExprKind::kCondExpr, line, std::move(args)));
  }
  return value;
}

namespace {

Op TokenOp(const Token& t, std::initializer_list<std::pair<std::string_view, Op>> table) {
  if (t.type != TokenType::kOp && t.type != TokenType::kName) return Op::kNone;
  for (const auto& [text, op] : table) {
    if (t.text == text && (t.type == TokenType::kName) == (text[0] >= 'a' && text[0] <= 'z')) {
      return op;
    }
  }
  return Op::kNone;
}

Op OrOp(const Token& t) { return TokenOp(t, {{"or", Op::kOr}}); }
Op AndOp(const Token& t) { return TokenOp(t, {{"and", Op::kAnd}}); }
Op AddOp(const Token& t) { return TokenOp(t, {{"+", Op::kAdd}, {"-", Op::kSub}}); }
Op ConcatOp(const Token& t) { return TokenOp(t, {{"~", Op::kConcat}}); }
Op MulOp(const Token& t) {
  return TokenOp(t, {{"*", Op::kMul}, {"/", Op::kDiv}, {"//", Op::kFloorDiv}, {"%", Op::kMod}});
}
Op PowOp(const Token& t) { return TokenOp(t, {{"**", Op::kPow}}); }

}  // namespace

Result<ExprPtr> Parser::ParseBinary(Result<ExprPtr> (Parser::*next)(), Op (*op_at)(const Token&)) {
  BRISK_ASSIGN_OR_RETURN(ExprPtr left, (this->*next)());
  while (true) {
    const Op op = op_at(Cur());
    if (op == Op::kNone) return left;
    const int line = Cur().line;
    Advance();
    BRISK_ASSIGN_OR_RETURN(ExprPtr right, (this->*next)());
    std::vector<ExprPtr> args;
    args.push_back(std::move(left));
    args.push_back(std::move(right));
    BRISK_ASSIGN_OR_RETURN(left, Make(ExprKind::kBinary, line, std::move(args), op));
  }
}

Result<ExprPtr> Parser::ParseOr() { return ParseBinary(&Parser::ParseAnd, OrOp); }
Result<ExprPtr> Parser::ParseAnd() { return ParseBinary(&Parser::ParseNot, AndOp); }
Result<ExprPtr> Parser::ParseAdd() { return ParseBinary(&Parser::ParseConcat, AddOp); }
Result<ExprPtr> Parser::ParseConcat() { return ParseBinary(&Parser::ParseMul, ConcatOp); }
Result<ExprPtr> Parser::ParseMul() { return ParseBinary(&Parser::ParsePow, MulOp); }
Result<ExprPtr> Parser::ParsePow() { return ParseBinary(&Parser::ParseFilteredUnary, PowOp); }
Result<ExprPtr> Parser::ParseFilteredUnary() { return ParseUnary(true); }

Result<ExprPtr> Parser::ParseNot() {
  if (IsName("not")) {
    const int line = Cur().line;
    Advance();
    ScopedDepth guard(&nest_depth_);
    if (nest_depth_ > kMaxExprDepth) return Error(line, "expression nested too deeply");
    BRISK_ASSIGN_OR_RETURN(ExprPtr operand, ParseNot());
    std::vector<ExprPtr> args;
    args.push_back(std::move(operand));
    return Make(ExprKind::kUnary, line, std::move(args), Op::kNot);
  }
  return ParseCompare();
}

Result<ExprPtr> Parser::ParseCompare() {
  const int line = Cur().line;
  BRISK_ASSIGN_OR_RETURN(ExprPtr first, ParseAdd());
  std::vector<ExprPtr> args;
  std::vector<Op> ops;
  args.push_back(std::move(first));
  while (true) {
    Op op = Op::kNone;
    if (Cur().type == TokenType::kOp) {
      const std::string& t = Cur().text;
      if (t == "==") op = Op::kEq;
      if (t == "!=") op = Op::kNe;
      if (t == "<") op = Op::kLt;
      if (t == "<=") op = Op::kLe;
      if (t == ">") op = Op::kGt;
      if (t == ">=") op = Op::kGe;
      if (op != Op::kNone) Advance();
    } else if (IsName("in")) {
      op = Op::kIn;
      Advance();
    } else if (IsName("not") && Peek().type == TokenType::kName && Peek().text == "in") {
      op = Op::kNotIn;
      Advance();
      Advance();
    }
    if (op == Op::kNone) break;
    BRISK_ASSIGN_OR_RETURN(ExprPtr next, ParseAdd());
    args.push_back(std::move(next));
    ops.push_back(op);
  }
  if (ops.empty()) return std::move(args[0]);
  BRISK_ASSIGN_OR_RETURN(ExprPtr e, Make(ExprKind::kCompare, line, std::move(args)));
  e->ops = std::move(ops);
  return e;
}

Result<ExprPtr> Parser::ParseUnary(bool with_filter) {
  const int line = Cur().line;
  ExprPtr node;
  if (IsOp("-") || IsOp("+")) {
    const Op op = IsOp("-") ? Op::kNeg : Op::kPos;
    Advance();
    ScopedDepth guard(&nest_depth_);
    if (nest_depth_ > kMaxExprDepth) return Error(line, "expression nested too deeply");
    BRISK_ASSIGN_OR_RETURN(ExprPtr operand, ParseUnary(false));
    if (op == Op::kNeg && IsLiteral(operand) && operand->literal.is_int() &&
        operand->literal.i() != INT64_MIN) {
      operand->literal = Value::Int(-operand->literal.i());
      node = std::move(operand);
    } else if (op == Op::kNeg && IsLiteral(operand) && operand->literal.is_float()) {
      operand->literal = Value::Float(-operand->literal.f());
      node = std::move(operand);
    } else {
      std::vector<ExprPtr> args;
      args.push_back(std::move(operand));
      BRISK_ASSIGN_OR_RETURN(node, Make(ExprKind::kUnary, line, std::move(args), op));
    }
  } else {
    BRISK_ASSIGN_OR_RETURN(node, ParsePrimary());
    BRISK_ASSIGN_OR_RETURN(node, ParsePostfix(std::move(node)));
  }
  if (with_filter) return ParseFilterExpr(std::move(node));
  return node;
}

Result<ExprPtr> Parser::ParsePrimary() {
  ScopedDepth guard(&nest_depth_);
  const Token& t = Cur();
  const int line = t.line;
  if (nest_depth_ > kMaxExprDepth) return Error(line, "expression nested too deeply");
  auto lit = [&](Value v) {
    auto e = std::make_unique<Expr>();
    e->kind = ExprKind::kLiteral;
    e->line = line;
    e->literal = std::move(v);
    return e;
  };
  switch (t.type) {
    case TokenType::kName: {
      std::string name = t.text;
      Advance();
      if (name == "true" || name == "True") return lit(Value::Bool(true));
      if (name == "false" || name == "False") return lit(Value::Bool(false));
      if (name == "none" || name == "None") return lit(Value::None());
      auto e = std::make_unique<Expr>();
      e->kind = ExprKind::kName;
      e->line = line;
      e->sym = Intern(name);
      e->id = FindGlobal(name);
      e->name = std::move(name);
      return e;
    }
    case TokenType::kString: {
      std::string s = t.text;
      Advance();
      while (Cur().type == TokenType::kString) {  // adjacent literals concatenate
        s += Cur().text;
        Advance();
      }
      return lit(Value::Str(std::move(s)));
    }
    case TokenType::kInt: {
      const int64_t v = t.int_value;
      Advance();
      return lit(Value::Int(v));
    }
    case TokenType::kFloat: {
      const double v = t.float_value;
      Advance();
      return lit(Value::Float(v));
    }
    case TokenType::kOp:
      if (t.text == "(") {
        Advance();
        BRISK_ASSIGN_OR_RETURN(ExprPtr e, ParseTuple(true, true));
        BRISK_RETURN_IF_ERROR(ExpectOp(")"));
        return e;
      }
      if (t.text == "[") {
        Advance();
        std::vector<ExprPtr> items;
        while (!SkipOp("]")) {
          if (!items.empty()) BRISK_RETURN_IF_ERROR(ExpectOp(","));
          if (SkipOp("]")) break;
          BRISK_ASSIGN_OR_RETURN(ExprPtr item, ParseExpr(true));
          items.push_back(std::move(item));
        }
        return Make(ExprKind::kList, line, std::move(items));
      }
      if (t.text == "{") {
        Advance();
        std::vector<ExprPtr> items;
        while (!SkipOp("}")) {
          if (!items.empty()) BRISK_RETURN_IF_ERROR(ExpectOp(","));
          if (SkipOp("}")) break;
          BRISK_ASSIGN_OR_RETURN(ExprPtr key, ParseExpr(true));
          BRISK_RETURN_IF_ERROR(ExpectOp(":"));
          BRISK_ASSIGN_OR_RETURN(ExprPtr value, ParseExpr(true));
          items.push_back(std::move(key));
          items.push_back(std::move(value));
        }
        return Make(ExprKind::kDict, line, std::move(items));
      }
      break;
    default:
      break;
  }
  return Unexpected("an expression");
}

Result<ExprPtr> Parser::MakeOn(ExprKind kind, int line, ExprPtr operand) {
  std::vector<ExprPtr> args;
  args.push_back(std::move(operand));
  return Make(kind, line, std::move(args));
}

Result<ExprPtr> Parser::ParseCall(ExprPtr callee, int line) {
  BRISK_ASSIGN_OR_RETURN(ExprPtr call, MakeOn(ExprKind::kCall, line, std::move(callee)));
  BRISK_RETURN_IF_ERROR(ParseCallArgs(call.get()));
  return call;
}

Result<ExprPtr> Parser::ParsePostfix(ExprPtr node) {
  while (true) {
    const int line = Cur().line;
    if (SkipOp(".")) {
      std::vector<ExprPtr> args;
      args.push_back(std::move(node));
      if (Cur().type == TokenType::kInt) {  // x.0 is x[0]
        auto idx = std::make_unique<Expr>();
        idx->kind = ExprKind::kLiteral;
        idx->line = line;
        idx->literal = Value::Int(Cur().int_value);
        Advance();
        args.push_back(std::move(idx));
        BRISK_ASSIGN_OR_RETURN(node, Make(ExprKind::kGetItem, line, std::move(args)));
        continue;
      }
      BRISK_ASSIGN_OR_RETURN(std::string name, ExpectName("an attribute name"));
      BRISK_ASSIGN_OR_RETURN(node, Make(ExprKind::kGetAttr, line, std::move(args)));
      node->name = std::move(name);
    } else if (SkipOp("[")) {
      BRISK_ASSIGN_OR_RETURN(node, ParseSubscript(std::move(node)));
    } else if (SkipOp("(")) {
      BRISK_ASSIGN_OR_RETURN(node, ParseCall(std::move(node), line));
    } else {
      return node;
    }
  }
}

Result<ExprPtr> Parser::ParseSubscript(ExprPtr node) {
  // after '['
  const int line = Cur().line;
  ExprPtr parts[3];
  int colons = 0;
  while (true) {
    if (IsOp(":")) {
      if (++colons > 2) return Unexpected("']'");
      Advance();
      continue;
    }
    if (IsOp("]")) break;
    if (parts[colons]) return Unexpected("']'");
    BRISK_ASSIGN_OR_RETURN(parts[colons], ParseExpr(true));
  }
  Advance();  // ]
  std::vector<ExprPtr> args;
  args.push_back(std::move(node));
  if (colons == 0) {
    if (!parts[0]) return Error(line, "empty subscript");
    args.push_back(std::move(parts[0]));
    return Make(ExprKind::kGetItem, line, std::move(args));
  }
  for (ExprPtr& p : parts) args.push_back(std::move(p));
  return Make(ExprKind::kSlice, line, std::move(args));
}

Status Parser::ParseCallArgs(Expr* call) {
  // after '('
  bool first = true;
  while (!SkipOp(")")) {
    if (!first) BRISK_RETURN_IF_ERROR(ExpectOp(","));
    first = false;
    if (SkipOp(")")) break;
    if (IsOp("*") || IsOp("**")) return Error(Cur().line, "unsupported *args/**kwargs in call");
    if (Cur().type == TokenType::kName && Peek().type == TokenType::kOp && Peek().text == "=") {
      call->kwnames.push_back(Cur().text);
      Advance();
      Advance();
      BRISK_ASSIGN_OR_RETURN(ExprPtr v, ParseExpr(true));
      call->kwargs.push_back(std::move(v));
    } else {
      if (!call->kwargs.empty()) {
        return Error(Cur().line, "positional argument follows keyword argument");
      }
      BRISK_ASSIGN_OR_RETURN(ExprPtr v, ParseExpr(true));
      call->args.push_back(std::move(v));
    }
  }
  return Finish(call);
}

Result<ExprPtr> Parser::ParseFilterExpr(ExprPtr node) {
  while (true) {
    if (SkipOp("|")) {
      BRISK_ASSIGN_OR_RETURN(node, ParseFilter(std::move(node)));
    } else if (IsName("is")) {
      Advance();
      BRISK_ASSIGN_OR_RETURN(node, ParseTest(std::move(node)));
    } else if (IsOp("(")) {
      const int line = Cur().line;
      Advance();
      BRISK_ASSIGN_OR_RETURN(node, ParseCall(std::move(node), line));
    } else {
      return node;
    }
  }
}

Result<ExprPtr> Parser::ParseFilter(ExprPtr node) {
  const int line = Cur().line;
  BRISK_ASSIGN_OR_RETURN(std::string name, ExpectName("a filter name"));
  const int id = FindFilter(name);
  if (id < 0) return Error(line, "unsupported filter '" + name + "'");
  BRISK_ASSIGN_OR_RETURN(ExprPtr f, MakeOn(ExprKind::kFilter, line, std::move(node)));
  f->name = std::move(name);
  f->id = id;
  if (SkipOp("(")) BRISK_RETURN_IF_ERROR(ParseCallArgs(f.get()));
  return f;
}

Result<ExprPtr> Parser::ParseTest(ExprPtr node) {
  // after 'is'
  const int line = Cur().line;
  const bool negate = SkipName("not");
  BRISK_ASSIGN_OR_RETURN(std::string name, ExpectName("a test name"));
  const int id = FindTest(name);
  if (id < 0) return Error(line, "unsupported test '" + name + "'");
  BRISK_ASSIGN_OR_RETURN(ExprPtr t, MakeOn(ExprKind::kTest, line, std::move(node)));
  t->name = std::move(name);
  t->id = id;
  t->negate = negate;
  if (SkipOp("(")) {
    BRISK_RETURN_IF_ERROR(ParseCallArgs(t.get()));
  } else {
    const TokenType ty = Cur().type;
    const bool arg_start = ty == TokenType::kName || ty == TokenType::kString ||
                           ty == TokenType::kInt || ty == TokenType::kFloat || IsOp("[") ||
                           IsOp("{");
    if (arg_start && !IsName("else") && !IsName("or") && !IsName("and")) {
      if (IsName("is")) return Error(Cur().line, "tests cannot be chained with 'is'");
      BRISK_ASSIGN_OR_RETURN(ExprPtr arg, ParsePrimary());
      BRISK_ASSIGN_OR_RETURN(arg, ParsePostfix(std::move(arg)));
      t->args.push_back(std::move(arg));
      BRISK_RETURN_IF_ERROR(Finish(t.get()));
    }
  }
  return t;
}

}  // namespace brisk::jinja
