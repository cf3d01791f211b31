// The "sample" phase of an engine step: one SampleResult per sampled row of a batch, by the route
// each request needs. Plain-greedy rows come from the lm_head's fused argmax (SuppressedSpans
// gives it the ids each row may not take); other rows are sampled in parallel over the compute
// pool; rows under a TokenConstraint are resampled (on the same pool) until the constraint
// accepts the token (token -1 when it accepts none).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/request_state.h"
#include "runtime/thread_pool.h"

namespace brisk {

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
  SampleResult SampleConstrained(RequestState& r, float* row, ThreadScratch* scratch) const;

  const int n_vocab_;
  const std::vector<int32_t> eog_ids_;
  std::vector<SampleResult> results_;
  std::vector<std::vector<int32_t>> suppressed_ids_;  // SuppressedSpans' storage
  std::vector<std::span<const int32_t>> suppressed_spans_;
  std::vector<ThreadScratch> scratch_;  // one per pool thread
};

}  // namespace brisk
