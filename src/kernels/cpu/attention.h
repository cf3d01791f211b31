// Causal attention for one token and one KV head group (GQA) over a paged KV cache: the group's
// G query heads read each K and V row once, block by block, with an online softmax (running max
// and sum per head, rescaled when the max grows), so no n_ctx-sized score buffer is needed.
// Written as plain float code that every ISA tier compiles from the same source
// (attention_impl.inc) without floating-point contraction; fp16 K/V are widened exactly. Results
// are therefore bitwise identical across ISAs and independent of what else is in the batch.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/cpu_features.h"

namespace brisk {

struct AttendArgs {
  const float* q;        // G heads x hd, RoPE applied
  const uint8_t* k0;     // K chunk of this (layer, KV head) in block 0 of the store
  const uint8_t* v0;     // V chunk likewise
  size_t block_stride;   // bytes from one block's chunk to the next block's
  const int32_t* table;  // block table: positions [j*bs, (j+1)*bs) live in block table[j]
  int block_size;        // positions per block; a chunk is block_size rows of head_dim elements
  bool f16;              // elements are IEEE half (else float)
  int n_ctx;             // attend to positions [0, n_ctx)
  int group;             // G query heads (<= 16)
  int head_dim;          // multiple of 16
  float scale;           // 1 / sqrt(head_dim)
  float* scratch;        // AttendScratchFloats(...) floats
  float* out;            // G heads x hd
};

inline size_t AttendScratchFloats(int group, int head_dim, int block_size) {
  return size_t(2 * block_size * head_dim + group * block_size + group * head_dim);
}

void AttendGroup(const AttendArgs& a, Isa isa = ActiveIsa());

}  // namespace brisk
