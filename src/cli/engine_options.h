// The engine's command-line options, declared once for every command that runs an engine
// (serve, bench, tune, run, chat). Ranges are not CLI11 checks: Resolve() asks the engine's own
// ValidateEngineConfig, so a bad value fails before any model is loaded, with the message the
// engine itself would give.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "engine/engine_config.h"
#include "util/status.h"

namespace brisk::cli {

struct EngineOptions {
  EngineConfig config;  // numeric fields are bound to their flags directly
  int kv_cache_mib = 0;
  std::string memory_limit;  // --memory-limit SIZE ("" = the cgroup's limit, if any)
  std::string kv_type = "f16";
  std::string batch_policy = "static";
  bool no_prefix_caching = false;

  // The config the flags describe, validated (model-independent checks only).
  Result<EngineConfig> Resolve() const;
};

// Which flags a command offers.
enum EngineOptionGroup : unsigned {
  kThreadOption = 1,   // -t/--threads
  kBatchOptions = 2,   // --max-num-seqs, --max-num-batched-tokens, --max-prefill-chunk
  kMemoryOptions = 4,  // --max-model-len, --kv-cache-mem, --kv-type, --no-prefix-caching
  kPolicyOptions = 8,  // --batch-policy, --tpot-target, --max-waiting
  kAllEngineOptions = 15,
};

void AddEngineOptions(CLI::App* cmd, EngineOptions* o, unsigned groups = kAllEngineOptions);

}  // namespace brisk::cli
