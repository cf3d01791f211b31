#include "engine/batch_controller.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <thread>
#include <vector>

namespace brisk {

Result<BatchPolicy> ParseBatchPolicy(const std::string& name) {
  if (name == "static") return BatchPolicy::kStatic;
  if (name == "loadavg") return BatchPolicy::kLoadAvg;
  if (name == "slo") return BatchPolicy::kSlo;
  return Status::Error("unknown batch policy '" + name + "' (expected static, loadavg or slo)");
}

const char* BatchPolicyName(BatchPolicy p) {
  switch (p) {
    case BatchPolicy::kStatic:
      return "static";
    case BatchPolicy::kLoadAvg:
      return "loadavg";
    case BatchPolicy::kSlo:
      return "slo";
  }
  return "?";
}

double ReadLoadAverage1() {
  std::FILE* f = std::fopen("/proc/loadavg", "r");
  if (!f) return 0;
  double l = 0;
  if (std::fscanf(f, "%lf", &l) != 1) l = 0;
  std::fclose(f);
  return l;
}

BatchController::BatchController(const BatchControllerConfig& c) : c_(c) {
  c_.max_num_seqs = std::max(1, c_.max_num_seqs);
  c_.max_num_batched_tokens = std::max(1, c_.max_num_batched_tokens);
  if (c_.cores <= 0) c_.cores = std::max(1u, std::thread::hardware_concurrency());
  limits_ = {c_.max_num_seqs, c_.max_num_batched_tokens};
  // slo starts small and grows while latency allows (slow start): a burst admitted at the full
  // cap before the first measurement would miss the target for its whole lifetime.
  if (c_.policy == BatchPolicy::kSlo) limits_.max_num_seqs = std::min(c_.max_num_seqs, kSloStart);
}

double BatchController::tpot_p95_ms() const {
  if (steps_.empty()) return 0;
  std::vector<double> v;
  v.reserve(steps_.size());
  for (const auto& s : steps_) v.push_back(s.second);
  const size_t k = std::min(v.size() - 1, size_t(std::ceil(0.95 * double(v.size()))) - 1);
  std::nth_element(v.begin(), v.begin() + long(k), v.end());
  return v[k] * 1e3;
}

void BatchController::Observe(double now, double step_s, int decode_seqs, int running,
                              double load1) {
  switch (c_.policy) {
    case BatchPolicy::kStatic:
      limits_ = {c_.max_num_seqs, c_.max_num_batched_tokens};
      return;
    case BatchPolicy::kLoadAvg: {
      // Tiers: up to `cores` of load is ours; beyond, each extra core's worth of load halves
      // the cap (floor 1), since the other work takes that share of every step.
      const double excess = load1 - double(c_.cores);
      int cap = c_.max_num_seqs;
      if (excess > 0.5) cap = std::max(1, int(c_.max_num_seqs / std::pow(2.0, std::ceil(excess))));
      limits_ = {cap, c_.max_num_batched_tokens};
      return;
    }
    case BatchPolicy::kSlo:
      break;
  }
  if (decode_seqs > 0) steps_.emplace_back(now, step_s);
  while (!steps_.empty() && steps_.front().first < now - c_.window_s) steps_.pop_front();
  if (last_adjust_ < 0) last_adjust_ = now;
  // Adjust at most four times per window, on enough samples to mean something.
  if (now - last_adjust_ < c_.window_s / 4 || steps_.size() < 4) return;
  last_adjust_ = now;
  // A request's TPOT is the mean of the step times it lived through, so the window's mean decode
  // step time is what tracks TPOT (the p95 of single steps tracks ITL and over-reacts to the
  // occasional step that carries a prefill chunk).
  double mean_ms = 0;
  for (const auto& st : steps_) mean_ms += st.second;
  mean_ms = mean_ms / double(steps_.size()) * 1e3;
  const int min_tokens = 16;
  if (mean_ms > c_.tpot_target_ms) {
    // Over target: cut both the sequences decoding together and the prefill riding along.
    limits_.max_num_seqs = std::max(1, limits_.max_num_seqs * 7 / 10);
    limits_.max_num_batched_tokens =
        std::max({min_tokens, limits_.max_num_seqs, limits_.max_num_batched_tokens * 7 / 10});
    steps_.clear();  // judge the new setting on its own steps
  } else if (mean_ms < 0.9 * c_.tpot_target_ms) {
    // Comfortably under: grow what binds (the cap when every slot is in use), additively.
    if (running >= limits_.max_num_seqs && limits_.max_num_seqs < c_.max_num_seqs)
      limits_.max_num_seqs += std::max(1, limits_.max_num_seqs / 8);
    limits_.max_num_seqs = std::min(limits_.max_num_seqs, c_.max_num_seqs);
    if (limits_.max_num_batched_tokens < c_.max_num_batched_tokens)
      limits_.max_num_batched_tokens =
          std::min(c_.max_num_batched_tokens, limits_.max_num_batched_tokens + 32);
  }
}

}  // namespace brisk
