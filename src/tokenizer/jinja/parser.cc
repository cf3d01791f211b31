// Statement parsing and token helpers.
#include "tokenizer/jinja/parser.h"

#include <algorithm>

#include "tokenizer/jinja/builtins.h"

namespace brisk::jinja {

namespace {

constexpr std::string_view kEndTags[] = {"elif",    "else",     "endif",        "endfor",
                                         "endset",  "endmacro", "endcall",      "endfilter",
                                         "endwith", "endraw",   "endgeneration"};

}  // namespace

Result<Program> ParseTemplate(std::string_view source) {
  BRISK_ASSIGN_OR_RETURN(std::vector<Token> tokens, Lex(source));
  Program program;
  Parser parser(std::move(tokens), &program);
  BRISK_RETURN_IF_ERROR(parser.Run());
  return program;
}

Parser::Parser(std::vector<Token> tokens, Program* program)
    : tokens_(std::move(tokens)), program_(program) {
  program_->loop_sym = Intern("loop");
  program_->caller_sym = Intern("caller");
}

Status Parser::Run() {
  std::string found;
  return ParseBody(&program_->body, {}, &found, "", 0);
}

int Parser::Intern(const std::string& name) {
  auto [it, inserted] =
      program_->symbol_ids.emplace(name, static_cast<int>(program_->symbols.size()));
  if (inserted) program_->symbols.push_back(name);
  return it->second;
}

const Token& Parser::Peek(size_t k) const {
  return tokens_[std::min(pos_ + k, tokens_.size() - 1)];
}

bool Parser::IsOp(std::string_view op) const {
  return Cur().type == TokenType::kOp && Cur().text == op;
}

bool Parser::IsName(std::string_view name) const {
  return Cur().type == TokenType::kName && Cur().text == name;
}

bool Parser::SkipOp(std::string_view op) {
  if (!IsOp(op)) return false;
  Advance();
  return true;
}

bool Parser::SkipName(std::string_view name) {
  if (!IsName(name)) return false;
  Advance();
  return true;
}

std::string Parser::Describe(const Token& t) const {
  switch (t.type) {
    case TokenType::kText:
      return "template text";
    case TokenType::kVarBegin:
      return "'{{'";
    case TokenType::kVarEnd:
      return "'}}'";
    case TokenType::kBlockBegin:
      return "'{%'";
    case TokenType::kBlockEnd:
      return "'%}'";
    case TokenType::kString:
      return "a string literal";
    case TokenType::kEnd:
      return "end of template";
    default:
      return "'" + t.text + "'";
  }
}

Status Parser::Error(int line, const std::string& msg) const {
  return Status::Error(msg + " at line " + std::to_string(line));
}

Status Parser::Unexpected(std::string_view expected) const {
  return Error(Cur().line, "expected " + std::string(expected) + " but found " + Describe(Cur()));
}

Status Parser::ExpectOp(std::string_view op) {
  if (SkipOp(op)) return Status::Ok();
  return Unexpected("'" + std::string(op) + "'");
}

Status Parser::ExpectBlockEnd(std::string_view tag) {
  if (Cur().type == TokenType::kBlockEnd) {
    Advance();
    return Status::Ok();
  }
  return Error(Cur().line,
               "expected '%}' to end '" + std::string(tag) + "' but found " + Describe(Cur()));
}

Result<std::string> Parser::ExpectName(std::string_view what) {
  if (Cur().type != TokenType::kName) return Unexpected(what);
  std::string name = Cur().text;
  Advance();
  return name;
}

Status Parser::ParseBody(Body* body, std::initializer_list<std::string_view> ends,
                         std::string* found, std::string_view opener, int opener_line) {
  ScopedDepth guard(&block_depth_);
  if (block_depth_ > kMaxBlockDepth) {
    return Error(Cur().line,
                 "blocks nested too deeply (limit " + std::to_string(kMaxBlockDepth) + ")");
  }
  while (true) {
    const Token& t = Cur();
    switch (t.type) {
      case TokenType::kText: {
        auto node = std::make_unique<Node>();
        node->kind = NodeKind::kText;
        node->line = t.line;
        node->text = t.text;
        body->push_back(std::move(node));
        Advance();
        break;
      }
      case TokenType::kVarBegin: {
        const int line = t.line;
        Advance();
        BRISK_ASSIGN_OR_RETURN(ExprPtr e, ParseTuple(true));
        if (Cur().type != TokenType::kVarEnd) return Unexpected("'}}'");
        Advance();
        auto node = std::make_unique<Node>();
        node->kind = NodeKind::kOutput;
        node->line = line;
        node->expr = std::move(e);
        body->push_back(std::move(node));
        break;
      }
      case TokenType::kBlockBegin: {
        const Token& name = Peek();
        if (name.type != TokenType::kName) {
          return Error(name.line, "expected a tag name but found " + Describe(name));
        }
        if (std::find(ends.begin(), ends.end(), name.text) != ends.end()) {
          *found = name.text;
          Advance();
          Advance();
          return Status::Ok();
        }
        BRISK_RETURN_IF_ERROR(ParseStatement(body));
        break;
      }
      case TokenType::kEnd:
        if (ends.size() == 0) return Status::Ok();
        return Error(opener_line, "unclosed '" + std::string(opener) + "' block: expected '" +
                                      std::string(*(ends.end() - 1)) +
                                      "' before the end of the template");
      default:
        return Error(t.line, "unexpected " + Describe(t));
    }
  }
}

Status Parser::ParseStatement(Body* body) {
  Advance();  // {%
  const std::string tag = Cur().text;
  const int line = Cur().line;
  Advance();
  if (tag == "if") return ParseIf(body, line);
  if (tag == "for") return ParseFor(body, line);
  if (tag == "set") return ParseSet(body, line);
  if (tag == "macro") return ParseMacro(body, line);
  if (tag == "call") return ParseCallBlock(body, line);
  if (tag == "filter") return ParseFilterBlock(body, line);
  if (tag == "with") return ParseWith(body, line);
  if (tag == "break" || tag == "continue") {
    if (loop_depth_ == 0) return Error(line, "'" + tag + "' outside of a for loop");
    BRISK_RETURN_IF_ERROR(ExpectBlockEnd(tag));
    auto node = std::make_unique<Node>();
    node->kind = tag == "break" ? NodeKind::kBreak : NodeKind::kContinue;
    node->line = line;
    body->push_back(std::move(node));
    return Status::Ok();
  }
  if (tag == "generation") {
    BRISK_RETURN_IF_ERROR(ExpectBlockEnd(tag));
    auto node = std::make_unique<Node>();
    node->kind = NodeKind::kScope;
    node->line = line;
    std::string found;
    BRISK_RETURN_IF_ERROR(ParseBody(&node->body, {"endgeneration"}, &found, tag, line));
    BRISK_RETURN_IF_ERROR(ExpectBlockEnd(found));
    body->push_back(std::move(node));
    return Status::Ok();
  }
  if (std::find(std::begin(kEndTags), std::end(kEndTags), tag) != std::end(kEndTags)) {
    return Error(line, "unexpected '" + tag + "'");
  }
  return Error(line, "unsupported tag '" + tag + "'");
}

Status Parser::ParseIf(Body* body, int line) {
  auto node = std::make_unique<Node>();
  node->kind = NodeKind::kIf;
  node->line = line;
  std::string found = "elif";
  while (found == "elif") {
    BRISK_ASSIGN_OR_RETURN(ExprPtr cond, ParseTuple(false));
    BRISK_RETURN_IF_ERROR(ExpectBlockEnd(node->branches.empty() ? "if" : "elif"));
    Body branch;
    BRISK_RETURN_IF_ERROR(ParseBody(&branch, {"elif", "else", "endif"}, &found, "if", line));
    node->branches.emplace_back(std::move(cond), std::move(branch));
  }
  if (found == "else") {
    BRISK_RETURN_IF_ERROR(ExpectBlockEnd("else"));
    Body branch;
    BRISK_RETURN_IF_ERROR(ParseBody(&branch, {"endif"}, &found, "if", line));
    node->branches.emplace_back(nullptr, std::move(branch));
  }
  BRISK_RETURN_IF_ERROR(ExpectBlockEnd(found));
  body->push_back(std::move(node));
  return Status::Ok();
}

Status Parser::ParseTargets(Node* node) {
  const bool paren = SkipOp("(");
  do {
    if (paren && IsOp(")")) break;
    BRISK_ASSIGN_OR_RETURN(std::string name, ExpectName("a variable name"));
    node->targets.push_back(Intern(name));
    node->target_names.push_back(std::move(name));
  } while (SkipOp(","));
  if (paren) BRISK_RETURN_IF_ERROR(ExpectOp(")"));
  return Status::Ok();
}

Status Parser::ParseFor(Body* body, int line) {
  auto node = std::make_unique<Node>();
  node->kind = NodeKind::kFor;
  node->line = line;
  BRISK_RETURN_IF_ERROR(ParseTargets(node.get()));
  if (!SkipName("in")) return Unexpected("'in'");
  BRISK_ASSIGN_OR_RETURN(node->expr, ParseTuple(false));
  if (SkipName("if")) {
    BRISK_ASSIGN_OR_RETURN(node->cond, ParseExpr(true));
  }
  if (IsName("recursive")) return Error(Cur().line, "unsupported recursive for loop");
  BRISK_RETURN_IF_ERROR(ExpectBlockEnd("for"));
  std::string found;
  ++loop_depth_;
  Status st = ParseBody(&node->body, {"else", "endfor"}, &found, "for", line);
  --loop_depth_;
  BRISK_RETURN_IF_ERROR(st);
  if (found == "else") {
    BRISK_RETURN_IF_ERROR(ExpectBlockEnd("else"));
    BRISK_RETURN_IF_ERROR(ParseBody(&node->else_body, {"endfor"}, &found, "for", line));
  }
  BRISK_RETURN_IF_ERROR(ExpectBlockEnd(found));
  body->push_back(std::move(node));
  return Status::Ok();
}

Status Parser::ParseSet(Body* body, int line) {
  auto node = std::make_unique<Node>();
  node->kind = NodeKind::kSet;
  node->line = line;
  BRISK_ASSIGN_OR_RETURN(std::string name, ExpectName("a variable name"));
  node->targets.push_back(Intern(name));
  node->target_names.push_back(name);
  if (SkipOp(".")) {
    BRISK_ASSIGN_OR_RETURN(node->attr, ExpectName("an attribute name"));
  } else {
    while (SkipOp(",")) {
      BRISK_ASSIGN_OR_RETURN(std::string more, ExpectName("a variable name"));
      node->targets.push_back(Intern(more));
      node->target_names.push_back(std::move(more));
    }
  }
  if (SkipOp("=")) {
    BRISK_ASSIGN_OR_RETURN(node->expr, ParseTuple(true));
    BRISK_RETURN_IF_ERROR(ExpectBlockEnd("set"));
    body->push_back(std::move(node));
    return Status::Ok();
  }
  if (Cur().type == TokenType::kBlockEnd && node->targets.size() == 1 && node->attr.empty()) {
    Advance();
    node->kind = NodeKind::kSetBlock;
    std::string found;
    BRISK_RETURN_IF_ERROR(ParseBody(&node->body, {"endset"}, &found, "set", line));
    BRISK_RETURN_IF_ERROR(ExpectBlockEnd(found));
    body->push_back(std::move(node));
    return Status::Ok();
  }
  if (IsOp("|")) return Error(Cur().line, "unsupported filtered block set");
  return Unexpected("'='");
}

Status Parser::ParseParams(std::vector<MacroParam>* params) {
  // after '('
  while (!SkipOp(")")) {
    if (!params->empty()) BRISK_RETURN_IF_ERROR(ExpectOp(","));
    if (SkipOp(")")) break;  // trailing comma
    BRISK_ASSIGN_OR_RETURN(std::string name, ExpectName("a parameter name"));
    MacroParam p{Intern(name), name, nullptr};
    if (SkipOp("=")) {
      BRISK_ASSIGN_OR_RETURN(p.default_value, ParseExpr(true));
    }
    params->push_back(std::move(p));
  }
  return Status::Ok();
}

Status Parser::ParseMacro(Body* body, int line) {
  auto node = std::make_unique<Node>();
  node->kind = NodeKind::kMacro;
  node->line = line;
  BRISK_ASSIGN_OR_RETURN(node->name, ExpectName("a macro name"));
  node->name_sym = Intern(node->name);
  BRISK_RETURN_IF_ERROR(ExpectOp("("));
  BRISK_RETURN_IF_ERROR(ParseParams(&node->params));
  BRISK_RETURN_IF_ERROR(ExpectBlockEnd("macro"));
  std::string found;
  const int saved = loop_depth_;
  loop_depth_ = 0;
  Status st = ParseBody(&node->body, {"endmacro"}, &found, "macro", line);
  loop_depth_ = saved;
  BRISK_RETURN_IF_ERROR(st);
  if (Cur().type == TokenType::kName && Cur().text == node->name) Advance();
  BRISK_RETURN_IF_ERROR(ExpectBlockEnd(found));
  body->push_back(std::move(node));
  return Status::Ok();
}

Status Parser::ParseCallBlock(Body* body, int line) {
  auto node = std::make_unique<Node>();
  node->kind = NodeKind::kCallBlock;
  node->line = line;
  if (SkipOp("(")) BRISK_RETURN_IF_ERROR(ParseParams(&node->params));
  BRISK_ASSIGN_OR_RETURN(node->expr, ParseExpr(true));
  if (node->expr->kind != ExprKind::kCall) return Error(line, "'call' block expects a macro call");
  BRISK_RETURN_IF_ERROR(ExpectBlockEnd("call"));
  std::string found;
  const int saved = loop_depth_;
  loop_depth_ = 0;
  Status st = ParseBody(&node->body, {"endcall"}, &found, "call", line);
  loop_depth_ = saved;
  BRISK_RETURN_IF_ERROR(st);
  BRISK_RETURN_IF_ERROR(ExpectBlockEnd(found));
  body->push_back(std::move(node));
  return Status::Ok();
}

Status Parser::ParseFilterBlock(Body* body, int line) {
  auto node = std::make_unique<Node>();
  node->kind = NodeKind::kFilterBlock;
  node->line = line;
  auto placeholder = std::make_unique<Expr>();
  placeholder->kind = ExprKind::kLiteral;
  placeholder->line = line;
  BRISK_ASSIGN_OR_RETURN(ExprPtr chain, ParseFilter(std::move(placeholder)));
  while (SkipOp("|")) {
    BRISK_ASSIGN_OR_RETURN(chain, ParseFilter(std::move(chain)));
  }
  node->expr = std::move(chain);
  BRISK_RETURN_IF_ERROR(ExpectBlockEnd("filter"));
  std::string found;
  BRISK_RETURN_IF_ERROR(ParseBody(&node->body, {"endfilter"}, &found, "filter", line));
  BRISK_RETURN_IF_ERROR(ExpectBlockEnd(found));
  body->push_back(std::move(node));
  return Status::Ok();
}

Status Parser::ParseWith(Body* body, int line) {
  auto node = std::make_unique<Node>();
  node->kind = NodeKind::kWith;
  node->line = line;
  while (Cur().type != TokenType::kBlockEnd) {
    BRISK_ASSIGN_OR_RETURN(std::string name, ExpectName("a variable name"));
    BRISK_RETURN_IF_ERROR(ExpectOp("="));
    BRISK_ASSIGN_OR_RETURN(ExprPtr value, ParseExpr(true));
    node->targets.push_back(Intern(name));
    node->target_names.push_back(std::move(name));
    node->values.push_back(std::move(value));
    if (!SkipOp(",")) break;
  }
  BRISK_RETURN_IF_ERROR(ExpectBlockEnd("with"));
  std::string found;
  BRISK_RETURN_IF_ERROR(ParseBody(&node->body, {"endwith"}, &found, "with", line));
  BRISK_RETURN_IF_ERROR(ExpectBlockEnd(found));
  body->push_back(std::move(node));
  return Status::Ok();
}

}  // namespace brisk::jinja
