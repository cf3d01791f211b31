// Numerics classes (DESIGN §5 "Determinism"): a token's activations are computed in exactly one
// of these, chosen from its request alone (never from what it is batched with), so a sequence's
// bits do not depend on the batch. On CPUs with AMX-BF16 the avx512 tier computes long prompts in
// the prefill class (bf16 weights and activations, fp32 accumulation in AMX tiles; the kernels
// call this the "wide" path); everything else, and every generated token, is the decode class
// (int8 activations, exact integer sums). KV rows written in different classes differ, so the
// prefix cache keeps the classes apart (CacheSalt).
#pragma once

#include <cstdint>

namespace brisk {

enum class NumericsClass : uint8_t {
  kDecode = 0,
  kPrefill = 1,
};

// True where this machine has a prefill class distinct from the decode class.
bool PrefillClassAvailable();

// The prefix-cache namespace of blocks computed in class c (BlockManager: blocks registered under
// one salt are never found under another). The decode class is 0.
inline uint64_t CacheSalt(NumericsClass c) { return uint64_t(c); }

}  // namespace brisk
