// The engine's options and the one source of every limit they accept: Engine::Create enforces
// them, and the command line checks a config with the same function before it loads a model
// (cli/engine_options.h), so a bad flag fails at once with the engine's own message.
#pragma once

#include <cstddef>
#include <cstdint>

#include "engine/batch_controller.h"
#include "model/kv_store.h"
#include "util/status.h"

namespace brisk {

struct EngineLimits {
  static constexpr int kMaxThreads = 1024;
  static constexpr int kMaxNumSeqs = 1024;
  static constexpr int kMaxNumBatchedTokens = 65536;
  static constexpr int kMaxWaiting = 1 << 20;
  static constexpr int kMaxKvEventBatches = 1 << 20;
  // max_model_len = 0 means min(the model's context, this).
  static constexpr int kDefaultMaxModelLenCap = 8192;
  // kv_cache_bytes = 0 means room for max_num_seqs full sequences, at most this.
  static constexpr size_t kDefaultKvCacheCapBytes = size_t(2) << 30;
  static constexpr int64_t kMaxKvBlocks = int64_t(1) << 30;
  // Under a memory limit, what the KV cache may not take: this much, or this share of the limit if
  // larger (HTTP buffers, tokenizer, request states, allocator slack; measured idle-to-load growth
  // of `brisk serve` at 16 clients is well under it).
  static constexpr size_t kMemoryHeadroomBytes = size_t(160) << 20;
  static constexpr double kMemoryHeadroomShare = 0.10;
};

struct EngineConfig {
  int threads = 0;                   // compute threads; 0 = one per core
  int max_num_seqs = 16;             // sequences per step (the batch controller may lower it)
  int max_num_batched_tokens = 512;  // tokens per step
  int max_prefill_chunk = 0;         // tokens of one prompt per step; 0 = the whole budget
  int max_model_len = 0;             // prompt + output; 0 = see kDefaultMaxModelLenCap
  size_t kv_cache_bytes = 0;         // hard KV budget; 0 = see kDefaultKvCacheCapBytes
  // The whole process's memory budget (a cgroup limit, --memory-limit); 0 = none. With it, a KV
  // budget of 0 means what the limit leaves after the loaded model and the headroom (at most the
  // default), and a model that cannot fit is refused at start instead of OOM-killed later.
  size_t memory_limit_bytes = 0;
  KvType kv_type = KvType::kF16;
  int kv_block_size = kDefaultKvBlockSize;
  bool prefix_caching = true;
  // Prompts of at least this many tokens are computed in the prefill numerics class where the CPU
  // has one (model/numerics_class.h); shorter ones, like generated tokens, in the decode class.
  // The bf16 path dequantises every weight once per step, which only pays with enough tokens
  // (measured: a 34-token prompt's TTFT was 41 ms in the decode class, 55 ms in the other).
  int prefill_class_min_tokens = 64;
  int max_waiting = 256;  // queued requests beyond this are refused (resource exhausted: 429)
  BatchPolicy batch_policy = BatchPolicy::kStatic;
  double tpot_target_ms = 50;  // slo policy target
  // KV-cache events (kv_events.h): step batches the publisher may fall behind by before the
  // engine drops them (counted in EngineStats::kv_events_dropped); 0 = no events recorded.
  int kv_event_queue = 0;
};

// Every check that needs no model: the range of each field. Engine::Create runs it first, then
// the checks against the model (context length, KV budget).
Status ValidateEngineConfig(const EngineConfig& c);

// The context length an engine over a model with this context will use (max_model_len 0 =
// min(model context, kDefaultMaxModelLenCap)); the engine checks the result against the model.
int ResolveMaxModelLen(const EngineConfig& c, int model_context_length);

// EngineLimits' headroom under a memory limit.
size_t MemoryHeadroom(size_t memory_limit);

// The KV budget under a memory limit: limit - resident (what the loaded engine already holds) -
// headroom, at most `default_bytes`; resource_exhausted naming every figure when that is less than
// `min_bytes` (one full sequence).
Result<size_t> KvBudgetWithinMemory(size_t memory_limit, size_t resident, size_t min_bytes,
                                    size_t default_bytes);

}  // namespace brisk
