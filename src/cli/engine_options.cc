#include "cli/engine_options.h"

#include <optional>

#include "runtime/cgroup_limits.h"

namespace brisk::cli {
namespace {

void AddBatchOptions(CLI::App* cmd, EngineOptions* o) {
  EngineConfig& c = o->config;
  cmd->add_option("--max-num-seqs", c.max_num_seqs,
                  "sequences per engine step (upper limit; at most " +
                      std::to_string(EngineLimits::kMaxNumSeqs) + ")")
      ->capture_default_str();
  cmd->add_option("--max-num-batched-tokens,--max-batched-tokens", c.max_num_batched_tokens,
                  "tokens per engine step (at most " +
                      std::to_string(EngineLimits::kMaxNumBatchedTokens) + ")")
      ->capture_default_str();
  cmd->add_option("--max-prefill-chunk", c.max_prefill_chunk,
                  "tokens of one prompt per step (0: the whole step budget)");
}

void AddMemoryOptions(CLI::App* cmd, EngineOptions* o) {
  cmd->add_option("-c,--max-model-len,--ctx-size,--context", o->config.max_model_len,
                  "prompt + output tokens (0: min(model context, " +
                      std::to_string(EngineLimits::kDefaultMaxModelLenCap) + "))");
  cmd->add_option("--kv-cache-mem", o->kv_cache_mib, "KV cache budget in MiB (0: automatic)")
      ->check(CLI::Range(0, 1 << 20));
  cmd->add_option("--memory-limit", o->memory_limit,
                  "whole-process memory budget, e.g. 1.4G (default: the container's cgroup "
                  "limit, if any): sizes the KV cache to fit under it");
  cmd->add_option("--kv-type", o->kv_type,
                  "KV cache element type: f16, f32, or q8_0 (8-bit with a scale per 32 values: "
                  "53% of f16's memory per token; quality cost in docs/experiments.md)")
      ->capture_default_str();
  cmd->add_flag("--no-prefix-caching", o->no_prefix_caching, "disable the prefix cache");
}

void AddPolicyOptions(CLI::App* cmd, EngineOptions* o) {
  cmd->add_option("--batch-policy", o->batch_policy, "static, loadavg or slo")
      ->capture_default_str();
  cmd->add_option("--tpot-target", o->config.tpot_target_ms, "slo policy: TPOT target in ms")
      ->capture_default_str();
  cmd->add_option("--max-waiting", o->config.max_waiting, "queued requests before 429")
      ->capture_default_str();
}

}  // namespace

Result<EngineConfig> EngineOptions::Resolve() const {
  EngineConfig c = config;
  BRISK_ASSIGN_OR_RETURN(c.kv_type, ParseKvType(kv_type));
  BRISK_ASSIGN_OR_RETURN(c.batch_policy, ParseBatchPolicy(batch_policy));
  c.kv_cache_bytes = size_t(kv_cache_mib) << 20;
  // The tighter of the flag and the container's limit.
  const std::optional<int64_t> cgroup = ProcessCgroupLimits().memory_bytes;
  if (cgroup) c.memory_limit_bytes = size_t(*cgroup);
  if (!memory_limit.empty()) {
    const std::optional<int64_t> flag = ParseByteSize(memory_limit);
    if (!flag)
      return Status::InvalidArgument(
          "--memory-limit: '" + memory_limit + "' is not a size (e.g. 1.4G, 1400M, 1073741824)",
          "memory_limit");
    if (!cgroup || *flag < *cgroup) c.memory_limit_bytes = size_t(*flag);
  }
  c.prefix_caching = !no_prefix_caching;
  BRISK_RETURN_IF_ERROR(ValidateEngineConfig(c));
  return c;
}

void AddEngineOptions(CLI::App* cmd, EngineOptions* o, unsigned groups) {
  if (groups & kThreadOption)
    cmd->add_option("-t,--threads", o->config.threads, "compute threads (default: all cores)");
  if (groups & kBatchOptions) AddBatchOptions(cmd, o);
  if (groups & kMemoryOptions) AddMemoryOptions(cmd, o);
  if (groups & kPolicyOptions) AddPolicyOptions(cmd, o);
}

}  // namespace brisk::cli
