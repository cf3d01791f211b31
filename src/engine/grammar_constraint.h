// Constrained decoding by a grammar (structured/): JSON Schema, regex, GBNF and choice outputs.
// A token is allowed when the grammar accepts its bytes from the request's position; end of
// generation when the bytes so far are a whole sentence. Refusal lists for the sampler's
// fallback come from a walk of the vocabulary trie (structured/token_trie.h), cached per
// grammar position, so a position the request returns to (inside a free string, between array
// items) costs a copy.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/token_constraint.h"
#include "structured/matcher.h"
#include "structured/token_trie.h"

namespace brisk {

class Tokenizer;

// What every grammar constraint of one model shares: its tokenizer and the trie of its tokens'
// bytes (built once: ~0.1 s and ~10 MB for Qwen's 151k tokens).
class GrammarVocab {
 public:
  explicit GrammarVocab(const Tokenizer& tokenizer);
  const Tokenizer& tokenizer() const { return tokenizer_; }
  const structured::TokenTrie& trie() const { return trie_; }

 private:
  const Tokenizer& tokenizer_;
  structured::TokenTrie trie_;
};

class GrammarConstraint : public TokenConstraint {
 public:
  // Masks cached per request (each n_vocab bits): bounds the memory one request can hold.
  static constexpr size_t kMaxCachedMasks = 64;

  GrammarConstraint(std::shared_ptr<const GrammarVocab> vocab,
                    std::shared_ptr<const structured::CompiledGrammar> grammar);

  bool Allows(int32_t token) const override;
  void Accept(int32_t token) override;
  void AppendRefused(int n_vocab, std::vector<int32_t>* refused) const override;

  // Raw bytes, for constraints that feed the grammar part of a token (TriggeredGrammarConstraint).
  bool CanAcceptBytes(std::string_view bytes) const { return matcher_.CanAccept(bytes); }
  void AcceptBytes(std::string_view bytes) { matcher_.Accept(bytes); }
  const Tokenizer& tokenizer() const { return vocab_->tokenizer(); }

 private:
  const std::vector<uint64_t>& Mask() const;

  std::shared_ptr<const GrammarVocab> vocab_;
  structured::Matcher matcher_;
  mutable std::unordered_map<structured::Matcher::Position, std::vector<uint64_t>> masks_;
};

// Free text until the output contains `trigger`, then the grammar from the byte after it: for
// tool_choice "auto", where the model may answer in prose but a call it starts ("<tool_call>")
// must be completed validly. The trigger may arrive inside a token or across tokens.
class TriggeredGrammarConstraint : public TokenConstraint {
 public:
  TriggeredGrammarConstraint(std::shared_ptr<const GrammarVocab> vocab,
                             std::shared_ptr<const structured::CompiledGrammar> grammar,
                             std::string trigger);

  bool Allows(int32_t token) const override;
  void Accept(int32_t token) override;
  void AppendRefused(int n_vocab, std::vector<int32_t>* refused) const override;
  bool triggered() const { return triggered_; }

 private:
  // Where the grammar's text starts in tail_ + bytes (npos: the trigger is not complete).
  size_t GrammarStart(std::string_view bytes, std::string* joined) const;

  const std::string trigger_;
  GrammarConstraint grammar_;
  bool triggered_ = false;
  std::string tail_;  // the last trigger.size() - 1 bytes of output while not triggered
};

}  // namespace brisk
