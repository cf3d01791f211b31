#include "server/readiness.h"

namespace brisk::server {

std::string_view ReadinessName(Readiness r) {
  switch (r) {
    case Readiness::kReady:
      return "ready";
    case Readiness::kLoading:
      return "loading";
    case Readiness::kDraining:
      return "draining";
    case Readiness::kStalled:
      return "stalled";
  }
  return "stalled";
}

bool StepWatchdog::Stalled(int64_t steps, bool has_work, double now_s) {
  std::lock_guard<std::mutex> lock(mu_);
  // The first look, a moved counter or an idle engine restart the clock: only time spent with
  // work and without a finished step counts.
  if (!seen_ || steps != last_steps_ || !has_work) {
    seen_ = true;
    last_steps_ = steps;
    since_s_ = now_s;
    return false;
  }
  return now_s - since_s_ >= stall_s_;
}

Readiness ReadinessOf(bool loaded, bool draining, bool stalled) {
  if (!loaded) return Readiness::kLoading;
  if (draining) return Readiness::kDraining;
  if (stalled) return Readiness::kStalled;
  return Readiness::kReady;
}

}  // namespace brisk::server
