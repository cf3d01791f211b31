#include "engine/collecting_sink.h"

#include <algorithm>
#include <chrono>

#include "util/clock.h"

namespace brisk {

CollectingSink::CollectingSink(int expected_tokens, Callbacks callbacks)
    : callbacks_(std::move(callbacks)) {
  // Bounded: a max_tokens far beyond what a request will produce must not reserve megabytes.
  const size_t n = size_t(std::clamp(expected_tokens, 1, 1 << 14));
  token_s_.reserve(n);
  tokens_.reserve(n);
}

void CollectingSink::OnPromptLogprobs(std::span<const TokenEvent> prompt) {
  std::lock_guard<std::mutex> lock(mu_);
  if (prompt_logprobs_calls_++ == 0) tokens_before_prompt_logprobs_ = tokens_.size();
  prompt_logprobs_.assign(prompt.begin(), prompt.end());
}

std::vector<TokenEvent> CollectingSink::prompt_logprobs() {
  std::lock_guard<std::mutex> lock(mu_);
  return prompt_logprobs_;
}

int CollectingSink::prompt_logprobs_calls() {
  std::lock_guard<std::mutex> lock(mu_);
  return prompt_logprobs_calls_;
}

size_t CollectingSink::tokens_before_prompt_logprobs() {
  std::lock_guard<std::mutex> lock(mu_);
  return tokens_before_prompt_logprobs_;
}

void CollectingSink::OnToken(const TokenEvent& e) {
  const double t = NowSeconds();  // before the lock: the arrival, not the wait for it
  {
    std::lock_guard<std::mutex> lock(mu_);
    tokens_.push_back(e.token);
    token_s_.push_back(t);
    text_ += e.text;
    cv_.notify_all();
  }
  if (callbacks_.on_token) callbacks_.on_token(e);
}

void CollectingSink::OnFinish(const FinishInfo& f) {
  const double t = NowSeconds();
  {
    std::lock_guard<std::mutex> lock(mu_);
    info_ = f;
    finish_s_ = t;
    done_ = true;
    cv_.notify_all();
  }
  if (callbacks_.on_finish) callbacks_.on_finish(*this);
}

FinishInfo CollectingSink::Wait() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return done_; });
  return info_;
}

bool CollectingSink::WaitFor(double timeout_s) {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, std::chrono::duration<double>(timeout_s), [&] { return done_; });
}

bool CollectingSink::WaitTokens(size_t n, double timeout_s) {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, std::chrono::duration<double>(timeout_s),
                      [&] { return token_s_.size() >= n || done_; });
}

bool CollectingSink::done() {
  std::lock_guard<std::mutex> lock(mu_);
  return done_;
}

size_t CollectingSink::num_tokens() {
  std::lock_guard<std::mutex> lock(mu_);
  return token_s_.size();
}

std::vector<int32_t> CollectingSink::tokens() {
  std::lock_guard<std::mutex> lock(mu_);
  return tokens_;
}

std::string CollectingSink::text() {
  std::lock_guard<std::mutex> lock(mu_);
  return text_;
}

std::vector<double> CollectingSink::token_times() {
  std::lock_guard<std::mutex> lock(mu_);
  return token_s_;
}

FinishInfo CollectingSink::info() {
  std::lock_guard<std::mutex> lock(mu_);
  return info_;
}

double CollectingSink::finish_s() {
  std::lock_guard<std::mutex> lock(mu_);
  return finish_s_;
}

}  // namespace brisk
