// Sampler micro-benchmark (not a test): median milliseconds per token over a Qwen-sized vocabulary
// (151936 random-normal logits, scale 3) for the common sampling settings, on one thread.
// Usage: sampler_bench [--vocab N] [--iters N] [--only SUBSTRING]
// Both the wall clock and the thread's CPU clock are reported: on a machine shared with other work
// the CPU time is the figure that measures the sampler.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "engine/sampler.h"
#include "normal_row.h"

using namespace brisk;

namespace {

double WallSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double CpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Case {
  const char* name;
  SamplingParams params;
  bool with_context;
};

}  // namespace

int main(int argc, char** argv) {
  int vocab = 151936;
  int iters = 300;
  const char* only = nullptr;  // run only the cases whose name contains this (for profiling)
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--vocab") && i + 1 < argc) {
      vocab = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--iters") && i + 1 < argc) {
      iters = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--only") && i + 1 < argc) {
      only = argv[++i];
    } else {
      std::fprintf(stderr, "usage: %s [--vocab N] [--iters N] [--only SUBSTRING]\n", argv[0]);
      return 2;
    }
  }
  if (vocab < 100 || iters < 1) {
    std::fprintf(stderr, "need --vocab >= 100 and --iters >= 1\n");
    return 2;
  }

  // Several rows so the branch predictor cannot learn one.
  constexpr int kRows = 8;
  std::vector<std::vector<float>> rows;
  for (int r = 0; r < kRows; ++r) rows.push_back(NormalRow(vocab, uint64_t(r) + 1, 3.0));
  // 64 tokens of context with repeats, for the penalty case.
  std::vector<int32_t> context;
  SamplerRng crng(5);
  for (int i = 0; i < 64; ++i) context.push_back(int32_t(crng.Next() % 400));

  auto make = [](float t, int k, float p, float min_p) {
    SamplingParams s;
    s.temperature = t;
    s.top_k = k;
    s.top_p = p;
    s.min_p = min_p;
    return s;
  };
  std::vector<Case> cases = {
      {"greedy", make(0.0f, 0, 1.0f, 0.0f), false},
      {"top_k 40, temp 0.8", make(0.8f, 40, 1.0f, 0.0f), false},
      {"top_p 0.9, temp 0.8", make(0.8f, 0, 0.9f, 0.0f), false},
      {"min_p 0.05, temp 0.8", make(0.8f, 0, 1.0f, 0.05f), false},
      {"temp 1.0, no truncation", make(1.0f, 0, 1.0f, 0.0f), false},
  };
  {
    SamplingParams s = make(0.8f, 0, 0.9f, 0.0f);
    s.repetition_penalty = 1.1f;
    s.penalty_last_n = 64;
    s.logprobs = true;
    s.top_logprobs = 5;
    cases.push_back({"top_p 0.9, temp 0.8 + rep. penalty (64) + logprobs 5", s, true});
    SamplingParams g = make(0.0f, 0, 1.0f, 0.0f);
    g.repetition_penalty = 1.1f;
    g.penalty_last_n = 64;
    g.logprobs = true;
    g.top_logprobs = 5;
    cases.push_back({"greedy + rep. penalty (64) + logprobs 5", g, true});
  }

  std::printf("sampler_bench: vocab %d, %d iterations per case, median ms per token\n", vocab,
              iters);
  std::printf("%-55s %10s %10s\n", "case", "cpu ms", "wall ms");
  std::vector<float> work(static_cast<size_t>(vocab));
  int64_t checksum = 0;
  for (const Case& c : cases) {
    if (only != nullptr && std::strstr(c.name, only) == nullptr) continue;
    Sampler sampler(c.params, vocab, 1234);
    std::vector<double> cpu, wall;
    for (int it = -5; it < iters; ++it) {  // 5 warm-up calls
      const std::vector<float>& row = rows[size_t((it + 5) % kRows)];
      std::copy(row.begin(), row.end(), work.begin());  // Sample uses the row as scratch
      const std::span<const int32_t> ctx =
          c.with_context ? std::span<const int32_t>(context) : std::span<const int32_t>();
      const double w0 = WallSeconds();
      const double c0 = CpuSeconds();
      const SampleResult r = sampler.Sample(work.data(), ctx);
      const double c1 = CpuSeconds();
      const double w1 = WallSeconds();
      checksum += r.token;
      if (it >= 0) {
        cpu.push_back((c1 - c0) * 1e3);
        wall.push_back((w1 - w0) * 1e3);
      }
    }
    std::printf("%-55s %10.4f %10.4f\n", c.name, Median(cpu), Median(wall));
  }
  std::printf("(checksum %lld)\n", static_cast<long long>(checksum));
  return 0;
}
