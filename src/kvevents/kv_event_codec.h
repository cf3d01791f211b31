// vLLM's KV-event payload (vllm/distributed/kv_events.py: KVEventBatch and the KVCacheEvent
// structs, msgspec array_like + tag): a msgpack array [ts, [event...], data_parallel_rank], each
// event an array led by its type name:
//   ["BlockStored", block_hashes, parent_block_hash|nil, token_ids, block_size, lora_id, medium]
//   ["BlockRemoved", block_hashes, medium]
//   ["AllBlocksCleared"]
// Hashes are msgpack unsigned integers (vLLM's int hashes; llm-d reads them as uint64).
#pragma once

#include <string>
#include <string_view>

#include "engine/kv_events.h"

namespace brisk {

struct KvEventEncoding {
  int block_size = 16;         // tokens per block: BlockStored's block_size
  std::string medium = "CPU";  // where the blocks live ("CPU", "GPU"); "" = nil
  int data_parallel_rank = 0;  // brisk has one engine per process: always 0, as vLLM's rank 0
};

std::string EncodeKvEventBatch(const KvEventBatch& batch, const KvEventEncoding& enc);

}  // namespace brisk
