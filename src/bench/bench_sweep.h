// `brisk bench`: the batching experiment as one command (DESIGN §2, §7). It builds the requests
// of a workload, then measures one point per combination of the swept settings, in this order:
//   batch policy  x  max_num_seqs  x  prompt padding  x  temperature  x  (concurrency | rate)
// and returns the report (bench_report.h) with the machine/model/settings header.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench/bench_report.h"
#include "bench/load_target.h"
#include "bench/point_sampler.h"

namespace brisk {

struct BenchSweepOptions {
  std::string workload = "qa";              // qa | copywriting | code | mix
  std::vector<int> concurrency;             // closed-loop levels
  std::vector<double> request_rates;        // open-loop levels (req/s; infinity = all at once)
  double burstiness = 1;                    // open loop: gamma shape of the gaps (1 = Poisson)
  std::vector<int> max_num_seqs;            // engine limit levels (empty: in-process = the largest
                                            // concurrency, HTTP = the server's)
  std::vector<std::string> batch_policies;  // empty = the target's
  int max_num_batched_tokens = 0;           // 0 = the target's
  int max_prefill_chunk = 0;
  double tpot_target_ms = 0;  // slo policy target (0 = the target's)
  int num_prompts = 0;        // per point; 0 = max(4 x concurrency, 8), or 32 at a rate
  int output_len = 0;         // fixed output tokens (ignore_eos); 0 = the workload's lengths
  bool natural = false;       // stop at EOS; max_tokens = output_len (or 2x the workload's)
  int prompt_len = 0;         // > 0: pad user messages with about this many tokens of filler
  float temperature = 0;      // 0 = greedy
  // Swept instead of the two above when not empty (context-length and sampling-cost runs).
  std::vector<int> prompt_lens;
  std::vector<float> temperatures;
  float top_p = 1;
  Slo slo;
  int warmup = 2;  // unmeasured requests before the first point (and 1 after each new setting)
  uint64_t seed = 20240611;
  bool progress = true;
  std::string command;  // for the report header
  // Measured beside every point (GPU state, the server's gauges); not owned, may be empty.
  std::vector<PointSampler*> samplers;
};

// Errors for invalid options or a target that refuses a setting; failed requests are reported
// per point instead (check BenchReport points' failures).
Result<BenchReport> RunBenchSweep(LoadTarget& target, const BenchSweepOptions& options);

// The requests of a run: the workload's prompts with the options' lengths and sampling.
Result<std::vector<BenchRequest>> BuildBenchRequests(const BenchSweepOptions& options);

}  // namespace brisk
