#include "engine/engine_config.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "runtime/cgroup_limits.h"

namespace brisk {
namespace {

Status OutOfRange(const char* field, int64_t lo, int64_t hi, int64_t got) {
  return Status::Error(std::string(field) + " must be in " + std::to_string(lo) + ".." +
                       std::to_string(hi) + ", got " + std::to_string(got));
}

}  // namespace

Status ValidateEngineConfig(const EngineConfig& c) {
  using L = EngineLimits;
  if (c.threads < 0 || c.threads > L::kMaxThreads)
    return OutOfRange("threads", 0, L::kMaxThreads, c.threads);
  if (c.max_num_seqs < 1 || c.max_num_seqs > L::kMaxNumSeqs)
    return OutOfRange("max_num_seqs", 1, L::kMaxNumSeqs, c.max_num_seqs);
  if (c.max_num_batched_tokens < 1 || c.max_num_batched_tokens > L::kMaxNumBatchedTokens)
    return OutOfRange("max_num_batched_tokens", 1, L::kMaxNumBatchedTokens,
                      c.max_num_batched_tokens);
  if (c.max_prefill_chunk < 0 || c.max_prefill_chunk > L::kMaxNumBatchedTokens)
    return OutOfRange("max_prefill_chunk", 0, L::kMaxNumBatchedTokens, c.max_prefill_chunk);
  if (c.max_model_len < 0) return Status::Error("max_model_len must be >= 0 (0: automatic)");
  if (c.kv_block_size < 1 || c.kv_block_size > kMaxKvBlockSize)
    return OutOfRange("kv_block_size", 1, kMaxKvBlockSize, c.kv_block_size);
  if (c.max_waiting < 0 || c.max_waiting > L::kMaxWaiting)
    return OutOfRange("max_waiting", 0, L::kMaxWaiting, c.max_waiting);
  if (c.kv_event_queue < 0 || c.kv_event_queue > L::kMaxKvEventBatches)
    return OutOfRange("kv_event_queue", 0, L::kMaxKvEventBatches, c.kv_event_queue);
  if (!std::isfinite(c.tpot_target_ms) || c.tpot_target_ms <= 0)
    return Status::Error("tpot_target_ms must be a number > 0");
  return Status::Ok();
}

size_t MemoryHeadroom(size_t memory_limit) {
  return std::max(EngineLimits::kMemoryHeadroomBytes,
                  size_t(double(memory_limit) * EngineLimits::kMemoryHeadroomShare));
}

Result<size_t> KvBudgetWithinMemory(size_t memory_limit, size_t resident, size_t min_bytes,
                                    size_t default_bytes) {
  const size_t headroom = MemoryHeadroom(memory_limit);
  const size_t taken = resident + headroom;
  const size_t left = memory_limit > taken ? memory_limit - taken : 0;
  if (left < min_bytes)
    return Status::ResourceExhausted(
        "memory limit " + FormatBytes(int64_t(memory_limit)) + ": the loaded model holds " +
        FormatBytes(int64_t(resident)) + " and " + FormatBytes(int64_t(headroom)) +
        " is kept as headroom, leaving " + FormatBytes(int64_t(left)) +
        " for the KV cache, less than one full sequence needs (" + FormatBytes(int64_t(min_bytes)) +
        "); raise the limit, or lower --max-model-len or use a smaller model");
  return std::min(left, default_bytes);
}

int ResolveMaxModelLen(const EngineConfig& c, int model_context_length) {
  if (c.max_model_len != 0) return c.max_model_len;
  return std::min(model_context_length, EngineLimits::kDefaultMaxModelLenCap);
}

}  // namespace brisk
