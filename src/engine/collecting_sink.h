// The one RequestSink that simply keeps what a request produced: token ids, text, the arrival
// time of every token (NowSeconds) and the finish, for whoever waits on it (the terminal
// commands, the benchmarks, the tests). Events arrive on the engine thread, so the sink only
// stamps, stores and wakes the waiter; the optional callbacks run there too, after the event is
// stored and outside the sink's lock, and must return quickly.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "engine/request.h"

namespace brisk {

class CollectingSink : public RequestSink {
 public:
  struct Callbacks {
    std::function<void(const TokenEvent&)> on_token;
    // The sink is complete: every accessor returns its final value.
    std::function<void(CollectingSink&)> on_finish;
  };

  // `expected_tokens` only reserves room for the token times.
  explicit CollectingSink(int expected_tokens = 0, Callbacks callbacks = {});

  void OnPromptLogprobs(std::span<const TokenEvent> prompt) override;
  void OnToken(const TokenEvent& e) override;
  void OnFinish(const FinishInfo& f) override;

  // Until the finish; returns it.
  FinishInfo Wait();
  // Until the finish; false when `timeout_s` passed first.
  bool WaitFor(double timeout_s);
  // Until the request has at least n tokens (or finished); false on timeout.
  bool WaitTokens(size_t n, double timeout_s);

  bool done();
  size_t num_tokens();
  std::vector<int32_t> tokens();
  std::string text();
  std::vector<double> token_times();
  FinishInfo info();
  std::vector<TokenEvent> prompt_logprobs();
  // OnPromptLogprobs calls, and how many tokens had arrived before the first.
  int prompt_logprobs_calls();
  size_t tokens_before_prompt_logprobs();
  double finish_s();  // NowSeconds() at the finish (0 before it)

 private:
  Callbacks callbacks_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<int32_t> tokens_;
  std::vector<double> token_s_;
  std::string text_;
  FinishInfo info_;
  std::vector<TokenEvent> prompt_logprobs_;
  int prompt_logprobs_calls_ = 0;
  size_t tokens_before_prompt_logprobs_ = 0;
  double finish_s_ = 0;
  bool done_ = false;
};

}  // namespace brisk
