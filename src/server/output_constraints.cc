#include "server/output_constraints.h"

#include "structured/gbnf.h"
#include "structured/json_schema.h"
#include "structured/matcher.h"
#include "structured/regex.h"

namespace brisk::server {
namespace {

using Kind = StructuredOutput::Kind;

Result<structured::Grammar> ChoiceGrammar(const std::vector<std::string>& choices) {
  structured::GrammarBuilder b;
  const int32_t root = b.NewRule("root");
  std::vector<structured::Sequence> alternatives;
  for (const std::string& c : choices)
    alternatives.push_back(structured::GrammarBuilder::Literal(c));
  b.Define(root, std::move(alternatives));
  return std::move(b).Build(root);
}

// The cache key: the kind and everything that changes the language.
std::string CacheKey(const StructuredOutput& spec) {
  std::string key = std::to_string(int(spec.kind)) + (spec.strict ? "s" : "-") + "\x1f";
  switch (spec.kind) {
    case Kind::kJsonSchema:
      return key + spec.schema.dump();
    case Kind::kChoice:
      for (const std::string& c : spec.choices) key += std::to_string(c.size()) + ":" + c;
      return key;
    default:
      return key + spec.text;
  }
}

}  // namespace

Result<structured::Grammar> GrammarFor(const StructuredOutput& spec) {
  switch (spec.kind) {
    case Kind::kJsonSchema: {
      structured::JsonSchemaOptions options;
      options.strict = spec.strict;
      return structured::CompileJsonSchema(spec.schema, options);
    }
    case Kind::kJsonObject: {
      // Any object; as the model pleases on layout (bounded whitespace), as OpenAI's mode.
      structured::JsonSchemaOptions options;
      options.any_whitespace = true;
      return structured::CompileJsonSchema(nlohmann::ordered_json{{"type", "object"}}, options);
    }
    case Kind::kRegex:
      return structured::CompileRegex(spec.text);
    case Kind::kGrammar:
      return structured::ParseGbnf(spec.text);
    case Kind::kChoice:
      return ChoiceGrammar(spec.choices);
    default:
      return Status::Internal("no grammar for this kind of structured output");
  }
}

std::shared_ptr<const GrammarVocab> OutputConstraints::Vocab() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!vocab_) vocab_ = std::make_shared<const GrammarVocab>(tokenizer_);
  return vocab_;
}

Result<OutputConstraints::Compiled> OutputConstraints::Compile(
    const std::string& key, const std::function<Result<structured::Grammar>()>& make_grammar) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = index_.find(key); it != index_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second);
      ++stats_.cache_hits;
      return it->second->second;
    }
  }
  // Compiled outside the lock: a large schema must not stall other requests' lookups.
  Result<structured::Grammar> grammar = make_grammar();
  if (!grammar.ok()) return grammar.status();
  Result<Compiled> compiled = structured::CompileGrammar(*grammar);
  if (!compiled.ok()) return compiled.status();
  std::lock_guard<std::mutex> lock(mu_);
  ++stats_.compiled;
  if (index_.count(key)) return *compiled;  // another request compiled it meanwhile
  lru_.emplace_front(key, *compiled);
  index_[key] = lru_.begin();
  stats_.cached_bytes += structured::CompiledGrammarBytes(**compiled);
  while (lru_.size() > kMaxCachedGrammars) {
    stats_.cached_bytes -= structured::CompiledGrammarBytes(*lru_.back().second);
    index_.erase(lru_.back().first);
    lru_.pop_back();
  }
  return *compiled;
}

OutputConstraints::MakeResult OutputConstraints::Make(const StructuredOutput& spec) {
  if (spec.kind == Kind::kNone) return std::shared_ptr<TokenConstraint>();
  Result<Compiled> compiled = Compile(CacheKey(spec), [&] { return GrammarFor(spec); });
  if (!compiled.ok()) {
    return ToApiError(Status::InvalidArgument(spec.field + ": " + compiled.message(), spec.field));
  }
  return std::shared_ptr<TokenConstraint>(
      std::make_shared<GrammarConstraint>(Vocab(), std::move(compiled).value()));
}

OutputConstraints::MakeResult OutputConstraints::MakeForTools(const ToolGrammarRequest& r) {
  const std::string key = std::string("tools\x1f") + r.choice + (r.parallel ? "p" : "1") +
                          (r.after_trigger ? "t" : "-") + r.tools->dump();
  Result<Compiled> compiled = Compile(key, [&] { return ToolCallGrammar(r); });
  if (!compiled.ok()) {
    const std::string field = compiled.field().empty() ? "tools" : compiled.field();
    return ToApiError(Status::InvalidArgument(compiled.message(), field));
  }
  if (r.after_trigger) {
    return std::shared_ptr<TokenConstraint>(std::make_shared<TriggeredGrammarConstraint>(
        Vocab(), std::move(compiled).value(), kToolCallTrigger));
  }
  return std::shared_ptr<TokenConstraint>(
      std::make_shared<GrammarConstraint>(Vocab(), std::move(compiled).value()));
}

OutputConstraints::Stats OutputConstraints::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  Stats s = stats_;
  s.cached = lru_.size();
  return s;
}

}  // namespace brisk::server
