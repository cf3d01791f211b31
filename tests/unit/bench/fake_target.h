// A LoadTarget with a scripted latency model, for driver and tuner tests without timing: each
// request "runs" on a virtual clock in slots of the configured max_num_seqs, its tokens spaced
// by a TPOT that the test chooses as a function of the limits. Records carry virtual times, so
// every statistic the driver computes is known in advance.
#pragma once

#include <algorithm>
#include <deque>
#include <functional>
#include <string>
#include <vector>

#include "bench/load_target.h"

namespace brisk::testing {

struct FakeLatency {
  double ttft_s = 0.1;
  double tpot_s = 0.02;
  double spike_s = 0;  // added to the first gap (a prefill step riding along)
};

class FakeTarget : public LoadTarget {
 public:
  // model(limits) -> latencies; fail_every > 0: every n-th request fails.
  explicit FakeTarget(std::function<FakeLatency(const TargetLimits&)> model, int fail_every = 0)
      : model_(std::move(model)), fail_every_(fail_every) {}

  TargetInfo Info() const override {
    TargetInfo i;
    i.mode = "in-process";
    i.model = "fake";
    return i;
  }
  Status Configure(const TargetLimits& l) override {
    if (l.max_num_seqs < 0) return Status::Error("bad limits");
    limits_ = l;
    ++configures;
    return Status::Ok();
  }
  void Start(const BenchRequest& r, std::function<void(RequestRecord)> done) override {
    users.push_back(r.user);
    const FakeLatency lat = model_(limits_);
    const int slots = std::max(limits_.max_num_seqs, 1);
    const int k = started++;
    RequestRecord rec;
    // Slot k % slots, its (k / slots)-th request: back to back on the virtual clock.
    const double dur = lat.ttft_s + lat.spike_s + (r.max_tokens - 1) * lat.tpot_s;
    rec.start_s = 1000.0 + (k / slots) * dur;
    double t = rec.start_s + lat.ttft_s;
    for (int i = 0; i < r.max_tokens; ++i) {
      rec.token_s.push_back(t);
      t += lat.tpot_s + (i == 0 ? lat.spike_s : 0);
    }
    rec.end_s = rec.token_s.back();
    rec.prompt_tokens = 10;
    rec.output_tokens = r.max_tokens;
    rec.ok = !(fail_every_ > 0 && (k + 1) % fail_every_ == 0);
    if (!rec.ok) rec.error = "scripted failure";
    max_in_flight = std::max(max_in_flight, int(queue_.size()) + 1);
    queue_.emplace_back(std::move(rec), std::move(done));
  }
  void Poll(double) override {
    // One completion per poll, oldest first, like a server finishing one request at a time.
    if (queue_.empty()) return;
    auto [rec, done] = std::move(queue_.front());
    queue_.pop_front();
    done(std::move(rec));
  }
  int in_flight() const override { return int(queue_.size()); }
  TargetCounters Counters() override {
    TargetCounters c;
    c.has = c.has_steps = c.has_step_seqs = true;
    c.steps = started * 2.0;
    c.step_seqs = started * 2.0 * std::max(limits_.max_num_seqs, 1);
    c.generation_tokens = started * 10.0;
    return c;
  }
  double KvUsage() override { return 0.25; }
  int rss_pid() const override { return -1; }

  int started = 0, configures = 0, max_in_flight = 0;
  std::vector<std::string> users;  // the user message of every request, in order

 private:
  std::function<FakeLatency(const TargetLimits&)> model_;
  int fail_every_;
  TargetLimits limits_;
  std::deque<std::pair<RequestRecord, std::function<void(RequestRecord)>>> queue_;
};

}  // namespace brisk::testing
