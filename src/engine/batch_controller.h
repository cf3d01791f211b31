// Batch controller (DESIGN §5 `--batch-policy`): decides the per-step sequence cap and token
// budget from what the engine measures, so batch size stops being guesswork.
//   static  - the configured limits, always.
//   loadavg - the tiered rule: shrink the sequence cap as the 1-minute load average rises above
//             the number of cores (other work on the machine steals our cycles).
//   slo     - feedback on measured latency: the mean of recent decode step times (a decode step
//             gives every running sequence one token, so over a request's life it is its TPOT)
//             is kept just under the TPOT target by additive increase / multiplicative decrease
//             of the sequence cap and of the per-step token budget (which bounds how much
//             prefill rides along). It starts small (slow start) and grows while under target.
// Plain logic, no threads: the engine feeds it after each step and applies its output.
#pragma once

#include <deque>
#include <string>

#include "util/status.h"

namespace brisk {

enum class BatchPolicy { kStatic, kLoadAvg, kSlo };
Result<BatchPolicy> ParseBatchPolicy(const std::string& name);  // static | loadavg | slo
const char* BatchPolicyName(BatchPolicy p);

struct BatchControllerConfig {
  BatchPolicy policy = BatchPolicy::kStatic;
  int max_num_seqs = 16;  // upper bounds (the engine's configured limits)
  int max_num_batched_tokens = 512;
  double tpot_target_ms = 50;  // slo
  double window_s = 2.0;       // slo: measurements considered / adjustment period
  int cores = 0;               // loadavg: 0 = detected
};

struct BatchLimits {
  int max_num_seqs;
  int max_num_batched_tokens;
};

class BatchController {
 public:
  static constexpr int kSloStart = 4;  // the slo policy's initial sequence cap

  explicit BatchController(const BatchControllerConfig& c);

  // One engine step that ended at `now` (seconds) and took `step_s`, with `decode_seqs` sequences
  // decoding and `running` sequences running; `load1` is the 1-minute load average (loadavg).
  void Observe(double now, double step_s, int decode_seqs, int running, double load1);
  BatchLimits limits() const { return limits_; }
  const BatchControllerConfig& config() const { return c_; }
  // p95 of the decode step times in the current window (ms; 0 when none).
  double tpot_p95_ms() const;

 private:
  BatchControllerConfig c_;
  BatchLimits limits_;
  std::deque<std::pair<double, double>> steps_;  // (end time, step seconds) of decode steps
  double last_adjust_ = -1;
};

// The 1-minute load average from /proc/loadavg (0 when unavailable).
double ReadLoadAverage1();

}  // namespace brisk
