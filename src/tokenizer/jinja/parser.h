// Recursive-descent parser: tokens -> Program. Statements live in parser.cc, expressions in
// parse_expr.cc.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/jinja/ast.h"
#include "tokenizer/jinja/lexer.h"

namespace brisk::jinja {

// Parses template source into a program. Errors name the construct and the line.
Result<Program> ParseTemplate(std::string_view source);

// Bounds that keep parsing and rendering recursion shallow.
inline constexpr int kMaxExprDepth = 200;   // height of one expression tree
inline constexpr int kMaxBlockDepth = 100;  // nested statements

// Increments a nesting counter for the lifetime of a parse function.
struct ScopedDepth {
  explicit ScopedDepth(int* d) : d_(d) { ++*d_; }
  ~ScopedDepth() { --*d_; }
  ScopedDepth(const ScopedDepth&) = delete;
  ScopedDepth& operator=(const ScopedDepth&) = delete;
  int* d_;
};

class Parser {
 public:
  Parser(std::vector<Token> tokens, Program* program);
  Status Run();

 private:
  // --- statements (parser.cc)
  // Parses nodes until a block tag whose name is in `ends` (consumed up to and including the
  // name; *found receives it) or, with no ends, until the end of the template.
  Status ParseBody(Body* body, std::initializer_list<std::string_view> ends, std::string* found,
                   std::string_view opener, int opener_line);
  Status ParseStatement(Body* body);
  Status ParseIf(Body* body, int line);
  Status ParseFor(Body* body, int line);
  Status ParseSet(Body* body, int line);
  Status ParseMacro(Body* body, int line);
  Status ParseCallBlock(Body* body, int line);
  Status ParseFilterBlock(Body* body, int line);
  Status ParseWith(Body* body, int line);
  Status ParseParams(std::vector<MacroParam>* params);
  Status ParseTargets(Node* node);

  // --- expressions (parse_expr.cc)
  Result<ExprPtr> ParseTuple(bool with_condexpr, bool explicit_parens = false);
  Result<ExprPtr> ParseExpr(bool with_condexpr = true);
  Result<ExprPtr> ParseCondExpr();
  Result<ExprPtr> ParseOr();
  Result<ExprPtr> ParseAnd();
  Result<ExprPtr> ParseNot();
  Result<ExprPtr> ParseCompare();
  Result<ExprPtr> ParseAdd();
  Result<ExprPtr> ParseConcat();
  Result<ExprPtr> ParseMul();
  Result<ExprPtr> ParsePow();
  Result<ExprPtr> ParseUnary(bool with_filter);
  Result<ExprPtr> ParseFilteredUnary();
  // One left-associative binary level: operands from `next`, operators recognised by `op_at`.
  Result<ExprPtr> ParseBinary(Result<ExprPtr> (Parser::*next)(), Op (*op_at)(const Token&));
  Result<ExprPtr> ParsePrimary();
  Result<ExprPtr> ParsePostfix(ExprPtr node);
  Result<ExprPtr> ParseFilterExpr(ExprPtr node);
  Result<ExprPtr> ParseSubscript(ExprPtr node);
  Result<ExprPtr> ParseFilter(ExprPtr node);
  Result<ExprPtr> ParseTest(ExprPtr node);
  Result<ExprPtr> ParseCall(ExprPtr callee, int line);  // after '(': callee(args...)
  Status ParseCallArgs(Expr* call);                     // after '(' up to and including ')'
  Result<ExprPtr> Make(ExprKind kind, int line, std::vector<ExprPtr> args, Op op = Op::kNone);
  // A node of `kind` whose only argument is `operand` (a call's callee, a filter's input, ...).
  Result<ExprPtr> MakeOn(ExprKind kind, int line, ExprPtr operand);
  Status Finish(Expr* e);  // computes depth, enforces kMaxExprDepth

  // --- tokens
  const Token& Cur() const { return tokens_[pos_]; }
  const Token& Peek(size_t k = 1) const;
  void Advance() {
    if (pos_ + 1 < tokens_.size()) ++pos_;
  }
  bool IsOp(std::string_view op) const;
  bool IsName(std::string_view name) const;
  bool SkipOp(std::string_view op);
  bool SkipName(std::string_view name);
  Status ExpectOp(std::string_view op);
  Status ExpectBlockEnd(std::string_view tag);
  Result<std::string> ExpectName(std::string_view what);
  Status Unexpected(std::string_view expected) const;
  Status Error(int line, const std::string& msg) const;
  std::string Describe(const Token& t) const;
  int Intern(const std::string& name);

  std::vector<Token> tokens_;
  size_t pos_ = 0;
  Program* program_;
  int loop_depth_ = 0;   // for break/continue
  int block_depth_ = 0;  // nesting guard for statements
  int nest_depth_ = 0;   // nesting guard for parenthesised expressions
};

}  // namespace brisk::jinja
