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

std::span<const SampleResult> BatchSampler::Sample(ThreadPool& pool,
                                                   std::span<RequestState* const> sampled,
                                                   float* logits) {
  results_.assign(sampled.size(), SampleResult{});
  SampleUnconstrained(pool, sampled, logits);
  // Constrained requests resample against their own state: in order, on this thread.
  for (size_t i = 0; i < sampled.size(); ++i)
    if (sampled[i]->req.constraint)
      results_[i] = SampleConstrained(*sampled[i], &logits[i * size_t(n_vocab_)]);
  return results_;
}

// In parallel over the compute pool, which is idle between steps: a top-p row costs ~0.4 ms
// (sampler_bench), so a 16-sequence step spent ~6 ms sampling on one core while the other waited.
// Each request's sampler (its RNG and scratch) is used by one thread, and rows are claimed one at
// a time, so the tokens do not depend on which thread drew them.
void BatchSampler::SampleUnconstrained(ThreadPool& pool, std::span<RequestState* const> sampled,
                                       float* logits) {
  thread_suppress_.resize(size_t(pool.size()));
  std::atomic<size_t> next{0};
  pool.Run([&](int thread, int) {
    std::vector<int32_t>& suppress = thread_suppress_[size_t(thread)];
    for (size_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < sampled.size();) {
      RequestState& r = *sampled[i];
      if (r.req.constraint) continue;
      SuppressedTokens(r, eog_ids_, &suppress);
      results_[i] = r.sampler->Sample(&logits[i * size_t(n_vocab_)], r.seq.tokens, suppress);
    }
  });
}

// Samples, and while the constraint refuses the token, samples again without it (the row is the
// sampler's scratch, so each try starts from a saved copy). After a few refusals every token the
// constraint refuses is masked at once. Token -1 when no token is allowed at all.
SampleResult BatchSampler::SampleConstrained(RequestState& r, float* row) {
  constexpr int kRetries = 8;
  const TokenConstraint& c = *r.req.constraint;
  std::vector<int32_t>& suppress = constrained_suppress_;
  SuppressedTokens(r, eog_ids_, &suppress);
  constrained_row_.assign(row, row + n_vocab_);
  SampleResult s = r.sampler->Sample(row, r.seq.tokens, suppress);
  for (int attempt = 0; s.token >= 0 && !c.Allows(s.token); ++attempt) {
    if (attempt == kRetries) {
      for (int32_t t = 0; t < n_vocab_; ++t)
        if (!c.Allows(t)) suppress.push_back(t);
    } else if (attempt > kRetries) {
      s.token = -1;
      break;
    } else {
      suppress.push_back(s.token);
    }
    std::copy(constrained_row_.begin(), constrained_row_.end(), row);
    s = r.sampler->Sample(row, r.seq.tokens, suppress);
  }
  if (s.token < 0 || !c.Allows(s.token)) return SampleResult{};  // token -1
  r.req.constraint->Accept(s.token);
  return s;
}

}  // namespace brisk
