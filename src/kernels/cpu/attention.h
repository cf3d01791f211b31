// Causal attention for a run of query tokens of one sequence and one KV head group (GQA) over a
// paged KV cache. Each K/V block is widened once per call and used by all G query heads of all
// the call's tokens (so prefill shares it between up to kAttendMaxTokens tokens), with an online
// softmax (running max and sum per query row, rescaled when the max grows): no n_ctx-sized score
// buffer. Scores are computed with positions in vector lanes (K chunks are stored position-minor,
// see KvStore), which needs no horizontal sums.
//
// Written as plain float code that every ISA tier compiles from the same source
// (attention_impl.inc) without floating-point contraction; fp16 and q8_0 K/V are widened exactly.
// Every query row follows the same sequence of operations whatever else is in the call, so results
// are bitwise identical across ISAs, across how many tokens share a call, and across batches.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/cpu_features.h"

namespace brisk {

// How K/V elements are stored. kQ8_0: int8 values with one IEEE-half scale per 32 consecutive head
// dimensions of a position (llama.cpp's q8_0 size: 34 bytes per 32 values); the chunk's int8
// values (in the chunk layout below) come first, then its scales (KScaleIndex / VScaleIndex).
// Widening a q8_0 element is exact (an int8 times a half fits a float), so every tier reads the
// same floats, as for f16.
enum class KvElem : uint8_t { kF32, kF16, kQ8_0 };
inline constexpr int kKvQ8Group = 32;  // head dimensions per q8_0 scale

// Bytes of one (layer, block, K|V, KV head) chunk of block_size positions x head_dim elements.
inline size_t KvChunkBytes(KvElem e, int block_size, int head_dim) {
  const size_t n = size_t(block_size) * size_t(head_dim);
  if (e == KvElem::kQ8_0) return n + 2 * (n / kKvQ8Group);
  return n * (e == KvElem::kF16 ? 2 : 4);
}

// Query tokens one call may take (bounds the per-thread scratch).
inline constexpr int kAttendMaxTokens = 8;
// K/V blocks a kernel may widen at once (scratch room).
inline constexpr int kAttendBlocksAtOnce = 2;

struct AttendArgs {
  const float* q;          // token i's G heads x hd at q + i * q_stride, RoPE applied
  int64_t q_stride = 0;    // floats between consecutive tokens' queries (unused for one token)
  int n_tokens = 1;        // query tokens at consecutive positions, 1..kAttendMaxTokens
  const uint8_t* k0;       // K chunk of this (layer, KV head) in block 0 of the store
  const uint8_t* v0;       // V chunk likewise
  size_t block_stride;     // bytes from one block's chunk to the next block's
  const int32_t* table;    // block table: positions [j*bs, (j+1)*bs) live in block table[j]
  int block_size;          // positions per block
  KvElem elem;             // how the chunks' elements are stored
  int n_ctx;               // token i attends to positions [0, n_ctx + i)
  int group;               // G query heads (<= 16)
  int head_dim;            // multiple of 16
  float scale;             // 1 / sqrt(head_dim)
  float* scratch;          // AttendScratchFloats(...) floats
  float* out;              // token i's G heads x hd at out + i * out_stride
  int64_t out_stride = 0;  // floats between consecutive tokens' outputs
};

// Chunk layouts the kernel reads: K chunk [head_dim][block_size] (position-minor, so one vector
// load holds one dimension of consecutive positions), V chunk [block_size][head_dim].
inline size_t KChunkIndex(int block_size, int row, int d) { return size_t(d) * block_size + row; }
inline size_t VChunkIndex(int head_dim, int row, int d) { return size_t(row) * head_dim + d; }
// q8_0 scales (after the block_size x head_dim int8 values): K position-minor like its values,
// V position-major.
inline size_t KScaleIndex(int block_size, int row, int d) {
  return size_t(d / kKvQ8Group) * block_size + row;
}
inline size_t VScaleIndex(int head_dim, int row, int d) {
  return size_t(row) * (head_dim / kKvQ8Group) + d / kKvQ8Group;
}

inline size_t AttendScratchFloats(int group, int head_dim, int block_size) {
  const size_t rows = size_t(kAttendMaxTokens) * group;
  return 2 * size_t(kAttendBlocksAtOnce) * block_size * head_dim +
         rows * (2 * head_dim + block_size + 1) + size_t(block_size) * head_dim / kKvQ8Group + 1;
}

void AttendGroup(const AttendArgs& a, Isa isa = ActiveIsa());

}  // namespace brisk
