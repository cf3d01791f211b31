#include "engine/grammar_constraint.h"

#include <algorithm>
#include <array>
#include <limits>
#include <string>

#include "tokenizer/tokenizer.h"

namespace brisk {
namespace {

// Per mask byte: what to add to its 8 logits (0 where the bit allows, -inf where it refuses).
constexpr auto kByteMaskAddends = [] {
  std::array<std::array<float, 8>, 256> table{};
  for (int byte = 0; byte < 256; ++byte)
    for (int j = 0; j < 8; ++j)
      table[size_t(byte)][size_t(j)] =
          (byte >> j) & 1 ? 0.0f : -std::numeric_limits<float>::infinity();
  return table;
}();

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

size_t GrammarConstraint::memory_bytes() const {
  size_t bytes = sizeof(*this) + matcher_.memory_bytes() + budget_mask_.capacity() * 8;
  for (const auto& [position, mask] : masks_) bytes += sizeof(mask) + mask.allowed.capacity() * 8;
  return bytes;
}

bool GrammarConstraint::MaskReady() const {
  auto it = masks_.find(matcher_.position());
  return it != masks_.end() && it->second.most_bytes_to_end <= BytesToEndLimit();
}

void GrammarConstraint::MaskLogits(float* logits, int n_vocab) const {
  constexpr float kRefused = -std::numeric_limits<float>::infinity();
  const Tokenizer& tok = vocab_->tokenizer();
  const std::vector<uint64_t>& mask = Mask();
  // End-of-generation tokens have no bytes (never in the mask): kept when a sentence ends here.
  const std::vector<int32_t>& eog = tok.eog_ids();
  eog_logits_.clear();
  for (int32_t t : eog) eog_logits_.push_back(t < n_vocab ? logits[t] : kRefused);
  const int n = std::min(n_vocab, tok.n_vocab());
  const int whole = n & ~63;
  for (int base = 0; base < whole; base += 64) {
    const uint64_t word = mask[size_t(base) >> 6];
    if (word == ~uint64_t{0}) continue;
    if (word == 0) {  // most words at a narrow position: a plain fill
      std::fill(logits + base, logits + base + 64, kRefused);
      continue;
    }
    // Adding 0 keeps an allowed logit exactly; adding -inf refuses (a +inf logit would become
    // NaN, which the sampler counts as -inf too). Eight lanes per mask byte: vectorises.
    for (int b = 0; b < 8; ++b) {
      const std::array<float, 8>& add = kByteMaskAddends[(word >> (8 * b)) & 0xFF];
      float* row = logits + base + 8 * b;
      for (int j = 0; j < 8; ++j) row[j] += add[size_t(j)];
    }
  }
  for (int t = whole; t < n; ++t)
    if (!((mask[size_t(t) >> 6] >> (t & 63)) & 1)) logits[t] = kRefused;
  std::fill(logits + n, logits + n_vocab, kRefused);  // ids past the tokenizer's vocabulary
  if (!matcher_.CanEnd()) return;
  for (size_t i = 0; i < eog.size(); ++i)
    if (eog[i] < n_vocab) logits[eog[i]] = eog_logits_[i];
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

void TriggeredGrammarConstraint::MaskLogits(float* logits, int n_vocab) const {
  if (triggered_) return grammar_.MaskLogits(logits, n_vocab);
  TokenConstraint::MaskLogits(logits, n_vocab);
}

}  // namespace brisk
