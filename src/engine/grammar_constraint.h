// Constrained decoding by a grammar (structured/): JSON Schema, regex, GBNF and choice outputs.
// A token is allowed when the grammar accepts its bytes from the request's position; end of
// generation when the bytes so far are a whole sentence. Refusal lists for the sampler's
// fallback come from a walk of the vocabulary trie (structured/token_trie.h), cached per
// grammar position, so a position the request returns to (inside a free string, between array
// items) costs one pass over the logits.
//
// Length budget: with n tokens left, a token is allowed only if the sentence can still be
// finished in n - 1 more tokens, counted as bytes (each byte is a token of a byte-level
// vocabulary, so this is always possible and never wrongly refused for lack of a token), so a
// request cut by max_tokens still returns a whole sentence. When the budget is already too small
// (a schema longer than max_tokens), a token must at least bring the end nearer.
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
  void SetMaxTokens(int max_tokens) override { tokens_left_ = max_tokens; }
  void MaskLogits(float* logits, int n_vocab) const override;
  bool MaskReady() const override;

  // Raw bytes that are one token's (part), for constraints that feed the grammar part of a
  // token (TriggeredGrammarConstraint): allowed as Allows would allow that token.
  bool AllowsBytes(std::string_view bytes) const;
  void AcceptBytes(std::string_view bytes);
  // A token was generated that gave the grammar no bytes (text before a trigger).
  void SpendToken() { --tokens_left_; }
  const Tokenizer& tokenizer() const { return vocab_->tokenizer(); }
  // What this request holds: its matcher's tables and its cached masks.
  size_t memory_bytes() const;

 private:
  struct CachedMask {
    std::vector<uint64_t> allowed;
    int32_t most_bytes_to_end = -1;  // over the allowed tokens: a budget at least this is free
  };
  // Most bytes-to-end a token may leave: one fewer than the tokens left after it, or (budget
  // already short) one fewer than now.
  int32_t BytesToEndLimit() const;
  const std::vector<uint64_t>& Mask() const;

  std::shared_ptr<const GrammarVocab> vocab_;
  structured::Matcher matcher_;
  int64_t tokens_left_ = int64_t{1} << 40;  // no budget until SetMaxTokens
  mutable std::unordered_map<structured::Matcher::Position, CachedMask> masks_;
  mutable std::vector<uint64_t> budget_mask_;  // the mask under a binding budget (not cached)
  mutable std::vector<float> eog_logits_;      // MaskLogits' scratch
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
  void SetMaxTokens(int max_tokens) override { grammar_.SetMaxTokens(max_tokens); }
  void MaskLogits(float* logits, int n_vocab) const override;
  bool MaskReady() const override { return triggered_ && grammar_.MaskReady(); }
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
