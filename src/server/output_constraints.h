// Turns a request's StructuredOutput into the engine's TokenConstraint: compiles the schema,
// pattern, grammar or choice list into a grammar (structured/) once per distinct request text
// (a bounded cache shared by all requests, since clients repeat the same schema), and pairs it
// with the model's vocabulary trie (built on first use).
#pragma once

#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <variant>

#include "engine/grammar_constraint.h"
#include "server/api_error.h"
#include "server/structured_request.h"
#include "server/tool_grammar.h"
#include "structured/grammar.h"
#include "util/status.h"

namespace brisk::server {

// The grammar a spec asks for (errors: invalid_argument naming what cannot be enforced).
Result<structured::Grammar> GrammarFor(const StructuredOutput& spec);

class OutputConstraints {
 public:
  static constexpr size_t kMaxCachedGrammars = 256;

  explicit OutputConstraints(const Tokenizer& tokenizer) : tokenizer_(tokenizer) {}

  using MakeResult = std::variant<std::shared_ptr<TokenConstraint>, ApiError>;

  // nullptr for Kind::kNone; a 400 naming the request field when the spec cannot be enforced.
  MakeResult Make(const StructuredOutput& spec);
  // The constraint for a tool_choice ("required", "auto" or a function name) over the
  // request's tools: forced calls, or for "auto" calls completed validly once started.
  MakeResult MakeForTools(const ToolGrammarRequest& r);

  // Counters for /metrics and the benchmark.
  struct Stats {
    size_t compiled = 0, cache_hits = 0, cached = 0, cached_bytes = 0;
  };
  Stats stats() const;

 private:
  using Compiled = std::shared_ptr<const structured::CompiledGrammar>;
  Result<Compiled> Compile(const std::string& key,
                           const std::function<Result<structured::Grammar>()>& grammar);
  std::shared_ptr<const GrammarVocab> Vocab();

  const Tokenizer& tokenizer_;
  mutable std::mutex mu_;
  std::shared_ptr<const GrammarVocab> vocab_;
  // LRU: most recent first.
  std::list<std::pair<std::string, Compiled>> lru_;
  std::unordered_map<std::string, std::list<std::pair<std::string, Compiled>>::iterator> index_;
  Stats stats_;
};

}  // namespace brisk::server
