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
  // max_model_len = 0 means min(the model's context, this).
  static constexpr int kDefaultMaxModelLenCap = 8192;
  // kv_cache_bytes = 0 means room for max_num_seqs full sequences, at most this.
  static constexpr size_t kDefaultKvCacheCapBytes = size_t(2) << 30;
  static constexpr int64_t kMaxKvBlocks = int64_t(1) << 30;
};

struct EngineConfig {
  int threads = 0;                   // compute threads; 0 = one per core
  int max_num_seqs = 16;             // sequences per step (the batch controller may lower it)
  int max_num_batched_tokens = 512;  // tokens per step
  int max_prefill_chunk = 0;         // tokens of one prompt per step; 0 = the whole budget
  int max_model_len = 0;             // prompt + output; 0 = see kDefaultMaxModelLenCap
  size_t kv_cache_bytes = 0;         // hard KV budget; 0 = see kDefaultKvCacheCapBytes
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
};

// Every check that needs no model: the range of each field. Engine::Create runs it first, then
// the checks against the model (context length, KV budget).
Status ValidateEngineConfig(const EngineConfig& c);

// The context length an engine over a model with this context will use (max_model_len 0 =
// min(model context, kDefaultMaxModelLenCap)); the engine checks the result against the model.
int ResolveMaxModelLen(const EngineConfig& c, int model_context_length);

}  // namespace brisk
