// What crosses the engine boundary: a generation request, the events it produces and how it ended
// (DESIGN §5). Plain structs; the sink is the request's only way back to its submitter.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/sampler.h"
#include "engine/token_constraint.h"

namespace brisk {

enum class FinishReason { kStop, kLength, kCancelled, kDeadline, kError };
const char* FinishReasonName(FinishReason r);  // "stop", "length", "cancelled", ...

struct TokenEvent {
  int32_t token = -1;
  std::string text;      // newly completed text (may be empty: held back for UTF-8 or stop strings)
  float logprob = 0.0f;  // when requested
  std::vector<TokenLogprob> top;  // top_logprobs entries when requested
};

struct Usage {
  int prompt_tokens = 0;
  int completion_tokens = 0;
  int cached_tokens = 0;  // prompt tokens served from the prefix cache
};

// Seconds, measured on the engine's clock from submission.
struct RequestTimings {
  double queued_s = 0;   // submission -> first scheduled
  double ttft_s = 0;     // submission -> first token emitted
  double e2e_s = 0;      // submission -> finish
  double prefill_s = 0;  // first scheduled -> first token
  double decode_s = 0;   // first token -> last token
  int preemptions = 0;
};

struct FinishInfo {
  FinishReason reason = FinishReason::kStop;
  std::string message;       // why, for errors / deadlines / overload
  std::string stop_matched;  // the stop string or "" (stop token / EOG)
  Usage usage;
  RequestTimings timings;
  // GenerationRequest::return_hidden: the last prompt token's final hidden state (n_embd floats,
  // after the output norm); empty otherwise or when the request did not get that far.
  std::vector<float> hidden;
};

// Called on the engine thread: implementations must return quickly (queue and wake someone).
class RequestSink {
 public:
  virtual ~RequestSink() = default;
  virtual void OnToken(const TokenEvent& e) = 0;
  // GenerationRequest::prompt_logprobs: once, when the whole prompt is computed, before any token
  // event: one entry per prompt token after the first (its id, logprob and top alternatives under
  // the model's raw distribution; text empty).
  virtual void OnPromptLogprobs(std::span<const TokenEvent> prompt) { (void)prompt; }
  virtual void OnFinish(const FinishInfo& f) = 0;  // exactly once, last
};

struct GenerationRequest {
  std::vector<int32_t> prompt;
  SamplingParams sampling;
  // Generated tokens. 0: prefill only (prompt logprobs, hidden state); the request ends with
  // kLength once its prompt is computed, without token events.
  int max_tokens = 256;
  int min_tokens = 0;       // EOG / stop tokens suppressed until this many were generated
  bool ignore_eos = false;  // never stop on EOG (benchmarks with fixed output lengths)
  std::vector<int32_t> stop_token_ids;
  std::vector<std::string> stop;                // stop strings (excluded from the output)
  int priority = 0;                             // lower runs first
  double timeout_s = 0;                         // deadline after submission; 0 = none
  std::shared_ptr<TokenConstraint> constraint;  // e.g. JSON output; null = none
  // -1: none. 0..kMaxPromptLogprobs: report each prompt token's logprob with this many top
  // alternatives (RequestSink::OnPromptLogprobs). Such a prompt is computed in full, never taken
  // from the prefix cache: cached positions have no logits.
  int prompt_logprobs = -1;
  // Only with max_tokens 0: FinishInfo::hidden gets the last prompt token's final hidden state
  // (embedding models pool it).
  bool return_hidden = false;
  std::shared_ptr<RequestSink> sink;
};

}  // namespace brisk
