#include "engine/batch_sampler.h"

#include <algorithm>
#include <atomic>

namespace brisk {

BatchSampler::BatchSampler(int n_vocab, std::vector<int32_t> eog_ids)
    : n_vocab_(n_vocab), eog_ids_(std::move(eog_ids)) {}

std::span<const std::span<const int32_t>> BatchSampler::SuppressedSpans(
    std::span<RequestState* const> sampled) {
  if (suppressed_ids_.size() < sampled.size()) suppressed_ids_.resize(sampled.size());
  suppressed_spans_.clear();
  bool any = false;
  for (size_t i = 0; i < sampled.size(); ++i) {
    SuppressedTokens(*sampled[i], eog_ids_, &suppressed_ids_[i]);
    suppressed_spans_.emplace_back(suppressed_ids_[i]);
    any = any || !suppressed_ids_[i].empty();
  }
  if (!any) return {};
  return suppressed_spans_;
}

// In parallel over the compute pool, which is idle between steps: a top-p row costs ~0.4 ms
// (sampler_bench), so a 16-sequence step spent ~6 ms sampling on one core while the other waited;
// a constrained row may also walk its grammar's token trie. Each request's sampler (its RNG and
// scratch) and constraint are used by one thread, and rows are claimed one at a time, so the
// tokens do not depend on which thread drew them.
std::span<const SampleResult> BatchSampler::Sample(ThreadPool& pool,
                                                   std::span<RequestState* const> sampled,
                                                   float* logits) {
  results_.assign(sampled.size(), SampleResult{});
  scratch_.resize(size_t(pool.size()));
  std::atomic<size_t> next{0};
  pool.Run([&](int thread, int) {
    ThreadScratch& scratch = scratch_[size_t(thread)];
    for (size_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < sampled.size();) {
      RequestState& r = *sampled[i];
      float* row = &logits[i * size_t(n_vocab_)];
      SuppressedTokens(r, eog_ids_, &scratch.suppress);
      results_[i] = r.req.constraint ? SampleConstrained(r, row, &scratch)
                                     : r.sampler->Sample(row, r.seq.tokens, scratch.suppress);
    }
  });
  return results_;
}

// Samples, and while the constraint refuses the token, samples again without it (the row is the
// sampler's scratch, so each try starts from a saved copy). After a few refusals every token the
// constraint refuses is masked at once. Token -1 when no token is allowed at all.
SampleResult BatchSampler::SampleConstrained(RequestState& r, float* row,
                                             ThreadScratch* scratch) const {
  constexpr int kRetries = 8;
  const TokenConstraint& c = *r.req.constraint;
  std::vector<int32_t>& suppress = scratch->suppress;
  scratch->row.assign(row, row + n_vocab_);
  SampleResult s = r.sampler->Sample(row, r.seq.tokens, suppress);
  for (int attempt = 0; s.token >= 0 && !c.Allows(s.token); ++attempt) {
    if (attempt == kRetries) {
      c.AppendRefused(n_vocab_, &suppress);
    } else if (attempt > kRetries) {
      s.token = -1;
      break;
    } else {
      suppress.push_back(s.token);
    }
    std::copy(scratch->row.begin(), scratch->row.end(), row);
    s = r.sampler->Sample(row, r.seq.tokens, suppress);
  }
  if (s.token < 0 || !c.Allows(s.token)) return SampleResult{};  // token -1
  r.req.constraint->Accept(s.token);
  return s;
}

}  // namespace brisk
