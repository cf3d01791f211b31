#include "engine/request_state.h"

#include <algorithm>

namespace brisk {

bool IsPlainGreedy(const SamplingParams& p) {
  return p.temperature == 0.0f && p.repetition_penalty == 1.0f && p.presence_penalty == 0.0f &&
         p.frequency_penalty == 0.0f && p.logit_bias.empty() && !p.logprobs && p.top_logprobs == 0;
}

void SuppressedTokens(const RequestState& r, std::span<const int32_t> eog_ids,
                      std::vector<int32_t>* ids) {
  ids->clear();
  const bool before_min = r.generated < r.req.min_tokens;
  if (r.req.ignore_eos || before_min) ids->assign(eog_ids.begin(), eog_ids.end());
  if (before_min) ids->insert(ids->end(), r.req.stop_token_ids.begin(), r.req.stop_token_ids.end());
}

FinishInfo MakeFinishInfo(const RequestState& r, FinishReason reason, std::string message,
                          std::string stop_matched, double now) {
  FinishInfo f;
  f.reason = reason;
  f.message = std::move(message);
  f.stop_matched = std::move(stop_matched);
  f.usage.prompt_tokens = r.seq.num_prompt;
  f.usage.completion_tokens = r.generated;
  f.usage.cached_tokens = std::min(r.seq.num_cached, r.seq.num_prompt);
  RequestTimings& t = f.timings;
  const bool scheduled = r.t_scheduled >= 0, emitted = r.t_first >= 0;
  t.queued_s = (scheduled ? r.t_scheduled : now) - r.t_submit;
  t.ttft_s = emitted ? r.t_first - r.t_submit : 0;
  t.e2e_s = now - r.t_submit;
  t.prefill_s = emitted && scheduled ? r.t_first - r.t_scheduled : 0;
  t.decode_s = emitted ? r.t_last - r.t_first : 0;
  t.preemptions = r.seq.num_preemptions;
  f.hidden = r.hidden;
  return f;
}

}  // namespace brisk
