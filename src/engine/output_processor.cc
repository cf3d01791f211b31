#include "engine/output_processor.h"

#include <algorithm>

#include "util/check.h"

namespace brisk {
namespace {

bool Contains(std::span<const int32_t> ids, int32_t t) {
  return std::find(ids.begin(), ids.end(), t) != ids.end();
}

// The event's text: the detokenized piece through the stop matcher, and at the end everything
// still held back (unless a stop string matched). Sets *matched to a completed stop string.
std::string EventText(RequestState& r, int32_t token, bool stops, bool ends, std::string* matched) {
  if (!r.detok) return {};
  std::string text;
  if (!stops) text = r.stop->Append(r.detok->Push(token), matched);
  if ((stops || ends) && matched->empty()) {
    text += r.stop->Append(r.detok->Flush(), matched);
    if (matched->empty()) text += r.stop->Flush();
  }
  return text;
}

}  // namespace

std::optional<FinishDecision> ProcessOutput(RequestState& r, const SampleResult& result, double now,
                                            const OutputRules& rules) {
  BRISK_CHECK(!r.finished);
  if (result.token < 0)
    return FinishDecision{
        &r, FinishReason::kError, "no token can continue the required output format", {}};
  r.seq.tokens.push_back(result.token);
  ++r.generated;
  if (r.t_first < 0) r.t_first = now;
  r.t_last = now;
  const bool stop_token = Contains(r.req.stop_token_ids, result.token);
  const bool stops = stop_token || (Contains(rules.eog_ids, result.token) && !r.req.ignore_eos);
  const bool length =
      r.generated >= r.req.max_tokens || int64_t(r.seq.tokens.size()) >= rules.max_model_len;
  TokenEvent e;
  e.token = result.token;
  e.logprob = result.logprob;
  e.top = result.top;
  std::string matched;
  e.text = EventText(r, result.token, stops, length, &matched);
  r.req.sink->OnToken(e);
  if (!matched.empty()) return FinishDecision{&r, FinishReason::kStop, {}, matched};
  if (stops) return FinishDecision{&r, FinishReason::kStop, {}, {}};
  if (length) return FinishDecision{&r, FinishReason::kLength, {}, {}};
  return std::nullopt;
}

std::vector<FinishDecision> ProcessOutputs(std::span<RequestState* const> sampled,
                                           std::span<const SampleResult> results, double now,
                                           const OutputRules& rules) {
  BRISK_CHECK(sampled.size() == results.size());
  std::vector<FinishDecision> finished;
  for (size_t i = 0; i < sampled.size(); ++i)
    if (auto d = ProcessOutput(*sampled[i], results[i], now, rules)) finished.push_back(*d);
  return finished;
}

}  // namespace brisk
