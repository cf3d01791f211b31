// Readiness of `brisk serve` (GET /ready), apart from liveness (GET /health): a Kubernetes
// readiness probe or a load balancer takes a replica out of rotation while it cannot make
// progress, without restarting it. Not ready while the model loads, while the server drains
// (SIGTERM), and while the engine holds work (running or waiting requests) but has not finished
// a step for kEngineStallSeconds: a stuck step, a wedged compute pool, a machine starved of CPU.
//
// The server cannot see inside a step, so it watches the engine's step counter (EngineStats::
// steps) each time it is asked and remembers when the counter last moved. An idle engine (no
// work) never counts as stalled: the clock restarts whenever it is seen idle.
#pragma once

#include <cstdint>
#include <mutex>
#include <string_view>

namespace brisk::server {

// How long an engine with work may go without finishing a step before /ready says "stalled".
// Far above the longest healthy step (a full prefill chunk of a large model on a loaded CPU
// takes seconds) and above a probe's period, so a busy replica is never taken out by mistake.
inline constexpr double kEngineStallSeconds = 60;

enum class Readiness { kReady, kLoading, kDraining, kStalled };

// "ready", "loading", "draining", "stalled": the `status` of GET /ready's body.
std::string_view ReadinessName(Readiness r);

// Remembers when the engine's step counter last moved. Thread-safe (HTTP threads share one).
class StepWatchdog {
 public:
  explicit StepWatchdog(double stall_s = kEngineStallSeconds) : stall_s_(stall_s) {}

  // One observation at `now_s` (monotonic seconds): the engine's step count and whether it holds
  // requests. True when it holds work and `steps` has not changed for stall_s or longer.
  bool Stalled(int64_t steps, bool has_work, double now_s);

 private:
  const double stall_s_;
  std::mutex mu_;
  bool seen_ = false;
  int64_t last_steps_ = 0;
  double since_s_ = 0;  // when the counter last moved or the engine was last seen idle
};

// The one decision, from the server's state and the watchdog's verdict (loading wins, then
// draining, then a stall).
Readiness ReadinessOf(bool loaded, bool draining, bool stalled);

}  // namespace brisk::server
