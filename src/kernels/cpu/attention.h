// Causal attention for one token and one KV head group (GQA): the group's G query heads read
// each K and V row once. Written as plain float code that every ISA tier compiles from the same
// source (attention_impl.inc) without floating-point contraction, so results are bitwise
// identical across ISAs and independent of what else is in the batch.
#pragma once

#include <cstdint>

#include "runtime/cpu_features.h"

namespace brisk {

struct AttendArgs {
  const float* q;  // G heads x hd, RoPE applied
  const float* k;  // row of position 0 of this KV head; position p at k + p * stride
  const float* v;  // likewise
  int64_t stride;  // floats between consecutive positions
  int n_ctx;       // attend to positions [0, n_ctx)
  int group;       // G query heads (<= 16)
  int head_dim;    // multiple of 16
  float scale;     // 1 / sqrt(head_dim)
  float* scores;   // scratch: G x n_ctx floats
  float* out;      // G heads x hd
};

void AttendGroup(const AttendArgs& a, Isa isa = ActiveIsa());

}  // namespace brisk
