// The "sample" phase of an engine step: one SampleResult per sampled row of a batch, by the route
// each request needs. Plain-greedy rows come from the lm_head's fused argmax (SuppressedSpans
// gives it the ids each row may not take); other rows are sampled in parallel over the compute
// pool, rows under a TokenConstraint too (SampleConstrained; token -1 when it allows none).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/request_state.h"
#include "runtime/thread_pool.h"

namespace brisk {

// One constrained draw: a plain draw if the constraint allows it, else a draw from the row with
// every refused token masked (masked at once when the constraint has its mask at hand). Accepts
// the token into the constraint; token -1 when none is allowed. `row` (n_vocab logits) is
// scratch, `saved` keeps a copy for the second draw, `suppress`: ids the request may not take.
SampleResult SampleConstrained(Sampler& sampler, TokenConstraint& constraint, int n_vocab,
                               float* row, std::span<const int32_t> context,
                               std::vector<float>* saved, std::span<const int32_t> suppress);

class BatchSampler {
 public:
  BatchSampler(int n_vocab, std::vector<int32_t> eog_ids);

  std::span<const int32_t> eog_ids() const { return eog_ids_; }

  // SuppressedTokens for each request, as MatmulArgmax's exclusion lists (empty if none has any);
  // valid until the next call.
  std::span<const std::span<const int32_t>> SuppressedSpans(std::span<RequestState* const> sampled);

  // Samples row i of `logits` (n_vocab floats each, used as scratch) for sampled[i]. The result
  // is valid until the next call.
  std::span<const SampleResult> Sample(ThreadPool& pool, std::span<RequestState* const> sampled,
                                       float* logits);

 private:
  struct ThreadScratch {
    std::vector<int32_t> suppress;
    std::vector<float> row;  // a logits row kept for resampling under a constraint
  };
  const int n_vocab_;
  const std::vector<int32_t> eog_ids_;
  std::vector<SampleResult> results_;
  std::vector<std::vector<int32_t>> suppressed_ids_;  // SuppressedSpans' storage
  std::vector<std::span<const int32_t>> suppressed_spans_;
  std::vector<ThreadScratch> scratch_;  // one per pool thread
};

}  // namespace brisk
