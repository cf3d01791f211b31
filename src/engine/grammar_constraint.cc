#include "engine/grammar_constraint.h"

#include <string>

#include "tokenizer/tokenizer.h"

namespace brisk {
namespace {

std::vector<std::string> GrammarTokenBytes(const Tokenizer& tokenizer) {
  std::vector<std::string> bytes(size_t(tokenizer.n_vocab()));
  for (int32_t t = 0; t < tokenizer.n_vocab(); ++t)
    if (!tokenizer.IsEog(t)) bytes[size_t(t)] = std::string(tokenizer.PieceBytes(t, false));
  return bytes;
}

}  // namespace

GrammarVocab::GrammarVocab(const Tokenizer& tokenizer)
    : tokenizer_(tokenizer), trie_(GrammarTokenBytes(tokenizer)) {}

GrammarConstraint::GrammarConstraint(std::shared_ptr<const GrammarVocab> vocab,
                                     std::shared_ptr<const structured::CompiledGrammar> grammar)
    : vocab_(std::move(vocab)), matcher_(std::move(grammar)) {}

bool GrammarConstraint::Allows(int32_t token) const {
  const Tokenizer& tok = vocab_->tokenizer();
  if (token < 0 || token >= tok.n_vocab()) return false;
  if (tok.IsEog(token)) return matcher_.CanEnd();
  const std::string_view bytes = tok.PieceBytes(token, /*show_special=*/false);
  return !bytes.empty() && matcher_.CanAccept(bytes);
}

void GrammarConstraint::Accept(int32_t token) {
  const Tokenizer& tok = vocab_->tokenizer();
  if (!tok.IsEog(token)) matcher_.Accept(tok.PieceBytes(token, false));
}

const std::vector<uint64_t>& GrammarConstraint::Mask() const {
  const structured::Matcher::Position p = matcher_.position();
  if (auto it = masks_.find(p); it != masks_.end()) return it->second;
  if (masks_.size() >= kMaxCachedMasks) masks_.clear();
  std::vector<uint64_t>& mask = masks_[p];
  vocab_->trie().Allowed(matcher_, &mask);
  return mask;
}

void GrammarConstraint::AppendRefused(int n_vocab, std::vector<int32_t>* refused) const {
  const Tokenizer& tok = vocab_->tokenizer();
  const std::vector<uint64_t>& mask = Mask();
  const bool can_end = matcher_.CanEnd();
  for (int32_t t = 0; t < n_vocab; ++t) {
    const bool allowed =
        t < tok.n_vocab() && (tok.IsEog(t) ? can_end : (mask[size_t(t) >> 6] >> (t & 63)) & 1);
    if (!allowed) refused->push_back(t);
  }
}

}  // namespace brisk
