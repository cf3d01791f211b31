#include "kvevents/kv_event_codec.h"

#include "kvevents/msgpack.h"

namespace brisk {
namespace {

void Hashes(msgpack::Writer& w, const std::vector<uint64_t>& hashes) {
  w.ArrayHeader(uint32_t(hashes.size()));
  for (uint64_t h : hashes) w.Uint(h);
}

void Medium(msgpack::Writer& w, const std::string& medium) {
  if (medium.empty()) {
    w.Nil();
  } else {
    w.Str(medium);
  }
}

void Event(msgpack::Writer& w, const KvCacheEvent& e, const KvEventEncoding& enc) {
  switch (e.kind) {
    case KvCacheEvent::Kind::kBlockStored:
      w.ArrayHeader(7);
      w.Str("BlockStored");
      Hashes(w, e.block_hashes);
      if (e.parent_hash) {
        w.Uint(*e.parent_hash);
      } else {
        w.Nil();
      }
      w.ArrayHeader(uint32_t(e.token_ids.size()));
      for (int32_t t : e.token_ids) w.Int(t);
      w.Int(enc.block_size);
      w.Nil();  // lora_id: brisk serves no LoRA adapters
      Medium(w, enc.medium);
      return;
    case KvCacheEvent::Kind::kBlockRemoved:
      w.ArrayHeader(3);
      w.Str("BlockRemoved");
      Hashes(w, e.block_hashes);
      Medium(w, enc.medium);
      return;
    case KvCacheEvent::Kind::kAllBlocksCleared:
      w.ArrayHeader(1);
      w.Str("AllBlocksCleared");
      return;
  }
}

}  // namespace

std::string EncodeKvEventBatch(const KvEventBatch& batch, const KvEventEncoding& enc) {
  msgpack::Writer w;
  w.ArrayHeader(3);
  w.Float64(batch.timestamp);
  w.ArrayHeader(uint32_t(batch.events.size()));
  for (const KvCacheEvent& e : batch.events) Event(w, e, enc);
  w.Int(enc.data_parallel_rank);
  return w.Take();
}

}  // namespace brisk
