// The batch settings file of `brisk serve --config FILE` (written by `brisk tune`, reloaded on
// SIGHUP / SIGUSR1): a JSON object with any of
//   {"batch_policy": "static"|"loadavg"|"slo", "max_num_seqs": 16, "max_num_batched_tokens": 512,
//    "max_prefill_chunk": 256, "tpot_target_ms": 50}
// Unknown keys are errors (a typo must not be silently ignored by a reload).
#pragma once

#include <optional>
#include <string>

#include "engine/batch_controller.h"
#include "util/status.h"

namespace brisk::server {

struct BatchSettings {
  std::optional<BatchPolicy> batch_policy;
  std::optional<int> max_num_seqs;
  std::optional<int> max_num_batched_tokens;
  std::optional<int> max_prefill_chunk;
  std::optional<double> tpot_target_ms;
};

Result<BatchSettings> ParseBatchSettings(const std::string& json_text);
Result<BatchSettings> LoadBatchSettings(const std::string& path);

}  // namespace brisk::server
