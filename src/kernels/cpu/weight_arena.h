// Memory for repacked weights: 2 MiB-aligned slabs with transparent huge pages advised, handed
// out in 64-byte-aligned pieces, so consecutive tensors share huge pages. Decode streams every
// weight once per token; with one mapping per tensor, the small per-layer matrices (0.5-0.7 MB)
// and every tensor's unaligned head and tail stayed on 4 KiB pages (138 of 392 MB of the 0.5B
// Q4_K_M), and their TLB misses cost 3-10% of decode speed (same-run A/B).
#pragma once

#include <cstddef>
#include <memory>

namespace brisk {

// `bytes` of zeroed memory, 64-byte aligned; the returned pointer keeps its slab mapped (the
// slab is unmapped when the last piece handed out of it is released). Thread-safe.
std::shared_ptr<void> AllocWeightMemory(size_t bytes);

}  // namespace brisk
