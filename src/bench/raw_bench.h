// `brisk bench raw`: kernel-level speed like llama-bench / llama-batched-bench — prompt
// processing (pp), token generation (tg) and batched decode — reported against the measured
// limits of this machine (memory read bandwidth for decode, int8 peak for prefill; DESIGN §7).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "util/status.h"

namespace brisk {

struct RawBenchOptions {
  std::string model;  // resolved path
  int threads = 0;
  int pp = 512;
  int tg = 128;
  int batch_prompt = 128;
  int batch_gen = 64;
  std::vector<int> batches = {1, 2, 4, 8, 16, 32, 64};
  int reps = 3;                          // medians over this many repetitions of pp and tg
  size_t probe_bytes = size_t(2) << 30;  // the read-bandwidth probe's buffer (tests: smaller)
};

struct RawBenchRow {
  std::string test;  // "pp512", "tg128", "decode B=8"
  double tok_s = 0;
  double gb_s = 0;          // weight + KV bytes streamed per second
  double roofline_pct = 0;  // tok/s as % of bandwidth / bytes-per-step (decode rows)
  // Decode rows: the read bandwidth roofline_pct uses, the higher of two probes taken just
  // before and just after the row (a shared machine's bandwidth drifts within a run).
  double bandwidth_gb_s = 0;
  double gops = 0;      // matmul ops per second
  double peak_pct = 0;  // % of the measured int8 peak
};

struct RawBenchReport {
  std::string cpu, isa, model, file_type;
  std::string prefill_path;  // how pp computes its prompt: "bf16 AMX (prefill class)" or "int8"
  bool synthetic = false;    // random weights: speed is real, text would be noise
  int threads = 0;
  double bandwidth_gb_s = 0, int8_peak_gops = 0;  // measured before the tests
  std::string peak_instruction;
  double weight_mb = 0;
  double load_s = 0;       // Model::Load + weight repacking
  double peak_rss_mb = 0;  // peak resident set right after loading
  std::vector<RawBenchRow> rows;
  std::string ToTable() const;
  std::string ToJson() const;
};

Result<RawBenchReport> RunRawBench(const RawBenchOptions& options);

}  // namespace brisk
