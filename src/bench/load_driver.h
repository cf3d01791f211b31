// Runs one benchmark point against a LoadTarget and turns what the requests measured into a
// BenchPoint (DESIGN §7 "Measuring"):
//   closed loop  C clients, each sends its next request when its last one ended
//   open loop    requests arrive at `request_rate` per second, independently of answers:
//                Poisson arrivals (exponential gaps), or burstier/smoother ones with a gamma
//                distribution of gaps (shape `burstiness`: 1 = Poisson, < 1 = bursts)
// Per request: TTFT = sent -> first token, ITL = gaps between tokens (HTTP: content events),
// TPOT = (last - first token) / (output tokens - 1), E2E = sent -> end. A request is "good"
// when it succeeded and meets the SLO (TTFT and TPOT); goodput = good requests / wall time.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "bench/bench_report.h"
#include "bench/load_target.h"

namespace brisk {

class RssSampler;

// What a PointPlan::hook sees of a running point and may do to it.
struct PointView {
  LoadTarget& target;                          // e.g. TokensSoFar(), CancelAll()
  const std::vector<RequestRecord>& finished;  // in the order they ended
  int started = 0;                             // requests started so far
  double elapsed_s = 0;                        // since the point began
  // Sends one more request beyond num_prompts; the point then also waits for it.
  std::function<void(const BenchRequest&)> start_extra;
};
using PointHook = std::function<void(PointView&)>;

struct PointPlan {
  std::string label;
  int concurrency = 0;      // > 0: closed loop
  double request_rate = 0;  // > 0: open loop (infinity: all at once)
  double burstiness = 1;    // open loop: gamma shape of the gaps
  int num_prompts = 8;      // measured requests
  // The requests, used in turn from `first_request` (wrapping around).
  const std::vector<BenchRequest>* requests = nullptr;
  // Instead of `requests`: request number i (from first_request on, no wrapping).
  std::function<BenchRequest(int i)> make_request;
  int first_request = 0;
  // Closed loop: > 0 sends new requests until this long has passed instead of num_prompts
  // (those in flight then run to their end and count).
  double duration_s = 0;
  Slo slo;
  uint64_t seed = 1;  // arrival times
  // Every request's user message starts with "[N] ", N unique in this process: requests share
  // their system prompt (as real traffic does) but never a whole prompt, so a point does not
  // find earlier points' prompts in the prefix cache (that would flatter TTFT).
  bool unique_prompts = true;
  bool progress = false;  // a live progress line on stderr
  // A request that has not ended this long after it was sent is given up (the targets enforce
  // their own, shorter timeouts; this guards against a target that never answers).
  double give_up_s = 660;
  // How often the driver looks at the target when nothing ends (and calls the hook).
  double poll_s = 0.05;
  // Called after every poll: lets a scenario act on the running point (bench engine
  // --long-prompt sends its long prompt once the streams decode, then cancels them).
  PointHook hook;
};

// Runs the point; the limits/coordinates fields of the result are the caller's to fill.
// `rss` (may be null) has its peak reset at the start and read at the end; `records` (may be
// null) receives what every request measured, in the order they ended.
BenchPoint RunPoint(LoadTarget& target, const PointPlan& plan, RssSampler* rss,
                    std::vector<RequestRecord>* records = nullptr);

// ---- the parts, for tests --------------------------------------------------------------------

// Statistics of finished requests into p (requests, successes, failures and messages, wall,
// tokens, rates, goodput, latency summaries). Pure: tests feed synthetic timings.
void SummarizeRecords(const std::vector<RequestRecord>& records, const Slo& slo, BenchPoint* p);

// Offsets (seconds from the start) of n open-loop arrivals: gamma gaps with mean 1/rate and
// shape `burstiness`; the first arrival is at 0. rate = infinity: all at 0.
std::vector<double> ArrivalOffsets(int n, double rate, double burstiness, uint64_t seed);

// b - a as BenchPoint::server (has = false when either lacks counters).
ServerSide CounterDelta(const TargetCounters& a, const TargetCounters& b);

}  // namespace brisk
