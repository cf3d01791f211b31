// The engine's state of one submitted request: its sequence (what the scheduler sees), its
// sampler, detokenizer and stop matcher, and its timings. Plain data owned by the engine thread;
// the step phases (engine.cc, batch_sampler.h, output_processor.h) read and update it.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/request.h"
#include "engine/scheduler.h"
#include "engine/stop_matcher.h"
#include "tokenizer/detokenizer.h"

namespace brisk {

struct RequestState {
  uint64_t id = 0;
  GenerationRequest req;
  SeqState seq;
  std::unique_ptr<Sampler> sampler;
  std::unique_ptr<StreamingDetokenizer> detok;  // null without a tokenizer: events carry no text
  std::unique_ptr<StopMatcher> stop;
  // Greedy with nothing that needs the logits themselves: the lm_head can fuse the argmax.
  bool plain_greedy = false;
  double t_submit = 0, t_scheduled = -1, t_first = -1, t_last = -1;
  double deadline = 0;  // 0 = none
  int generated = 0;
  bool finished = false;
  // The whole prompt has been computed once (prompt logprobs delivered, parked siblings free).
  bool prompt_done = false;
  // Of a SubmitAll group: the request whose prompt is the same and computed first; this one waits
  // (parked) until that prompt is done, then takes its KV blocks from the prefix cache. 0: none.
  uint64_t prefill_leader = 0;
  // GenerationRequest::prompt_logprobs: entry i scores prompt token i + 1, filled as chunks run.
  std::vector<TokenEvent> prompt_logprobs;
  std::vector<float> hidden;  // GenerationRequest::return_hidden, once computed
};

// True when sampling with p needs nothing but the argmax of the raw logits.
bool IsPlainGreedy(const SamplingParams& p);

// The token ids r's next token may not be: end-of-generation under ignore_eos or before
// min_tokens, and the request's stop token ids before min_tokens.
void SuppressedTokens(const RequestState& r, std::span<const int32_t> eog_ids,
                      std::vector<int32_t>* ids);

// What the sink is told when r ends at `now` (usage and timings from r's clock readings).
FinishInfo MakeFinishInfo(const RequestState& r, FinishReason reason, std::string message,
                          std::string stop_matched, double now);

}  // namespace brisk
