#include "engine/grammar_constraint.h"

#include <algorithm>
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

int32_t GrammarConstraint::BytesToEndLimit() const {
  const int64_t by_budget = tokens_left_ - 1;
  const int64_t by_progress = int64_t(matcher_.BytesToEnd()) - 1;
  return int32_t(
      std::min<int64_t>(std::max(by_budget, by_progress), structured::Matcher::kNoBytesToEnd));
}

bool GrammarConstraint::AllowsBytes(std::string_view bytes) const {
  const structured::Matcher::Position p = matcher_.After(bytes);
  return p != structured::Matcher::kDead && matcher_.PositionBytesToEnd(p) <= BytesToEndLimit();
}

void GrammarConstraint::AcceptBytes(std::string_view bytes) {
  matcher_.Accept(bytes);
  --tokens_left_;
}

bool GrammarConstraint::Allows(int32_t token) const {
  const Tokenizer& tok = vocab_->tokenizer();
  if (token < 0 || token >= tok.n_vocab()) return false;
  if (tok.IsEog(token)) return matcher_.CanEnd();
  const std::string_view bytes = tok.PieceBytes(token, /*show_special=*/false);
  return !bytes.empty() && AllowsBytes(bytes);
}

void GrammarConstraint::Accept(int32_t token) {
  const Tokenizer& tok = vocab_->tokenizer();
  if (tok.IsEog(token)) return SpendToken();
  AcceptBytes(tok.PieceBytes(token, false));
}

// The position's mask, cached, when the budget refuses none of its tokens; otherwise the mask
// under the budget, computed afresh (only the last steps before the limit get here).
const std::vector<uint64_t>& GrammarConstraint::Mask() const {
  const structured::Matcher::Position p = matcher_.position();
  const int32_t limit = BytesToEndLimit();
  auto it = masks_.find(p);
  if (it == masks_.end()) {
    if (masks_.size() >= kMaxCachedMasks) masks_.clear();
    it = masks_.emplace(p, CachedMask{}).first;
    it->second.most_bytes_to_end = vocab_->trie().Allowed(matcher_, &it->second.allowed);
  }
  if (it->second.most_bytes_to_end <= limit) return it->second.allowed;
  vocab_->trie().Allowed(matcher_, &budget_mask_, limit);
  return budget_mask_;
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

TriggeredGrammarConstraint::TriggeredGrammarConstraint(
    std::shared_ptr<const GrammarVocab> vocab,
    std::shared_ptr<const structured::CompiledGrammar> grammar, std::string trigger)
    : trigger_(std::move(trigger)), grammar_(std::move(vocab), std::move(grammar)) {}

size_t TriggeredGrammarConstraint::GrammarStart(std::string_view bytes, std::string* joined) const {
  *joined = tail_;
  joined->append(bytes);
  const size_t at = joined->find(trigger_);
  return at == std::string::npos ? at : at + trigger_.size();
}

bool TriggeredGrammarConstraint::Allows(int32_t token) const {
  if (triggered_) return grammar_.Allows(token);
  const Tokenizer& tok = grammar_.tokenizer();
  if (token < 0 || token >= tok.n_vocab()) return false;
  if (tok.IsEog(token)) return true;
  std::string joined;
  const size_t start = GrammarStart(tok.PieceBytes(token, false), &joined);
  return start == std::string::npos || grammar_.AllowsBytes(std::string_view(joined).substr(start));
}

void TriggeredGrammarConstraint::Accept(int32_t token) {
  if (triggered_) return grammar_.Accept(token);
  const Tokenizer& tok = grammar_.tokenizer();
  if (tok.IsEog(token)) return;
  std::string joined;
  const size_t start = GrammarStart(tok.PieceBytes(token, false), &joined);
  if (start == std::string::npos) {
    const size_t keep = std::min(joined.size(), trigger_.size() - 1);
    tail_ = joined.substr(joined.size() - keep);
    return grammar_.SpendToken();
  }
  triggered_ = true;
  grammar_.AcceptBytes(std::string_view(joined).substr(start));
}

void TriggeredGrammarConstraint::AppendRefused(int n_vocab, std::vector<int32_t>* refused) const {
  if (triggered_) return grammar_.AppendRefused(n_vocab, refused);
  TokenConstraint::AppendRefused(n_vocab, refused);
}

}  // namespace brisk
