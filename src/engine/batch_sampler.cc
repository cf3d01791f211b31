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
      results_[i] = r.req.constraint
                        ? SampleConstrained(*r.sampler, *r.req.constraint, n_vocab_, row,
                                            r.seq.tokens, &scratch.row, scratch.suppress)
                        : r.sampler->Sample(row, r.seq.tokens, scratch.suppress);
    }
  });
  return results_;
}

SampleResult SampleConstrained(Sampler& sampler, TokenConstraint& constraint, int n_vocab,
                               float* row, std::span<const int32_t> context,
                               std::vector<float>* saved, std::span<const int32_t> suppress) {
  SampleResult s;
  if (!constraint.MaskReady()) {
    saved->assign(row, row + n_vocab);
    s = sampler.Sample(row, context, suppress);
    if (s.token >= 0 && constraint.Allows(s.token)) {
      constraint.Accept(s.token);
      return s;
    }
    std::copy(saved->begin(), saved->end(), row);
  }
  constraint.MaskLogits(row, n_vocab);
  s = sampler.Sample(row, context, suppress);
  // With every allowed logit -inf (or none allowed) the sampler still returns some id: refused.
  if (s.token < 0 || !constraint.Allows(s.token)) return SampleResult{};  // token -1
  constraint.Accept(s.token);
  return s;
}

}  // namespace brisk
