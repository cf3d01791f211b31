// `brisk bench quality`: what a file type costs and buys against a reference (usually F16/F32)
// of the same model: size, load time, tokenizer load time, decode speed, and how far its
// next-token distributions drift from the reference's (docs/experiments.md).
//
// Agreement is measured by teacher forcing: both models read the SAME token sequence (the first
// N prompts of the "mix" workload rendered with the reference's chat template), so every
// position compares two predictions made from identical context and errors do not compound as
// they would with free-running generation. Per position:
//   top-1 agreement  argmax(ref) == argmax(model)   (ties go to the lowest token id)
//   KL(ref || model) = sum_i p_i (log p_i - log q_i), p = softmax(ref), q = softmax(model),
//                      in nats, computed in double with a max-shifted log-sum-exp.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "model/kv_store.h"
#include "util/status.h"

namespace brisk {

struct QualityBenchOptions {
  std::string ref;                  // reference model (resolved path)
  std::vector<std::string> models;  // models compared with it
  int prompts = 16;                 // the first N prompts of the "mix" workload (1..48)
  int threads = 0;                  // 0: all cores
  int tg = 64;                      // decode speed: greedy tokens after a short prompt
  int reps = 3;                     // medians over this many loads / decode runs
  bool progress = false;            // progress lines on stderr
  // The compared models' KV cache (the reference keeps f16): `-m` the reference's own file with
  // q8_0 here measures what the 8-bit cache costs.
  KvType kv_type = KvType::kF16;
};

struct QualityRow {
  std::string model;
  std::string file_type;  // GGUF general.file_type name, "" when unknown
  bool is_ref = false;
  std::string kv_type = "f16";  // its KV cache element type
  double size_mib = 0;          // bytes on disk (a directory: all its files)
  double load_ms = 0;           // median Model::Load + weight repacking, file in the page cache
  double tokenizer_ms = 0;      // median tokenizer construction from the loaded model
  double decode_tok_s = 0;      // median greedy decode speed, batch 1
  double top1_pct = 0;          // % of positions whose argmax matches the reference's
  double mean_kl = 0;           // mean KL(ref || model) per position, nats
  double max_kl = 0;            // worst position
  long long positions = 0;      // positions compared
};

struct QualityReport {
  std::string ref;
  int threads = 0;
  int prompts = 0;
  int tg = 0;
  long long positions = 0;       // token count of the prompt set
  bool chat_template = true;     // false: the reference has none, prompts were plain text
  bool synthetic = false;        // any model has random weights
  std::vector<QualityRow> rows;  // the reference first
  std::string ToTable() const;
  std::string ToJson() const;
};

// One position's comparison (the math of the report, exposed for tests). `ref` and `model` are
// logit rows of the same non-zero length.
struct LogitComparison {
  bool top1_match = false;
  double kl = 0;  // KL(softmax(ref) || softmax(model)) in nats, >= 0 (rounding clamped)
};
LogitComparison CompareLogits(std::span<const float> ref, std::span<const float> model);

Result<QualityReport> RunQualityBench(const QualityBenchOptions& options);

}  // namespace brisk
