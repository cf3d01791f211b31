// `brisk tune`: finds the engine limits (max_num_seqs, max_num_batched_tokens, max_prefill_chunk)
// that give the most output tokens per second while the p99 TTFT and p99 TPOT stay within an SLO,
// measured on this machine with a `brisk bench` workload (DESIGN §2).
//
// Each candidate setting is measured as one closed-loop point whose clients are as many as its
// max_num_seqs: the server runs the batch it is configured for, so the question answered is
// "how large a batch can this machine serve within the SLO, and with which step budget".
//
// The search uses what batching does to latency. Phase 1 walks max_num_seqs upwards at the
// default step budget: TPOT grows with the batch, so the first setting that misses the SLO ends
// the walk (as does a throughput that stopped growing). Phase 2 tries smaller step budgets and
// prefill chunks at the sequence cap that failed and at the best one found: they shorten the
// steps that carry prefill, which is what pushes TPOT p99 over a target. The best SLO-meeting
// candidate wins; `exhaustive` measures the whole grid instead (to check the search).
#pragma once

#include <string>
#include <vector>

#include "bench/bench_sweep.h"
#include "bench/load_target.h"

namespace brisk {

struct TuneOptions {
  BenchSweepOptions bench;  // workload, lengths, prompts per point, warmup, slo (as p99 limits)
  std::vector<int> seqs = {1, 2, 4, 6, 8, 12, 16};
  std::vector<int> batched_tokens = {128, 256, 512};  // the last is phase 1's budget
  std::vector<int> prefill_chunks = {64, 128, 0};     // 0 = the whole step budget
  bool exhaustive = false;
};

struct TuneResult {
  BenchReport report;        // every measured candidate, in measuring order
  std::vector<bool> meets;   // per point: no failures, TTFT p99 and TPOT p99 within the SLO
  std::vector<bool> pareto;  // per point: on the Pareto front
  int chosen = -1;           // index into report.points; -1 when nothing met the SLO
  std::string explanation;   // one paragraph
  int grid_size = 0;

  // The `brisk serve --config` file for the chosen setting (errors when none was chosen).
  Result<std::string> ConfigJson() const;
  std::string ToTable() const;  // candidates with SLO / Pareto marks, then the explanation
};

Result<TuneResult> RunTune(LoadTarget& target, const TuneOptions& options);

// ---- the parts, for tests --------------------------------------------------------------------

// No failed request, and p99 TTFT / p99 TPOT within the limits (0 = not checked).
bool MeetsSlo(const BenchPoint& p, const Slo& slo);
// Indices of the points not dominated in (output tok/s higher, TTFT p99 lower, TPOT p99 lower);
// points with failures are never on it.
std::vector<int> ParetoFront(const std::vector<BenchPoint>& points);
// The SLO-meeting point with the highest output tok/s (ties: lower TPOT p99); -1 if none.
int PickBest(const std::vector<BenchPoint>& points, const Slo& slo);

}  // namespace brisk
