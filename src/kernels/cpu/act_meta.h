// Per-block metadata of quantised activations (plain data; included by the per-ISA kernels).
#pragma once

#include <cstdint>

namespace brisk {

inline constexpr int kActBlock = 32;

// Per 32-value activation block. 32 bytes so a token's metadata row is cache-line friendly.
struct ActMeta {
  float d;            // scale: x ~= d * q
  float dsum;         // d * float(sum q)  (min terms of Q4_1/Q5_1/Q4_K/Q5_K)
  int32_t neg8;       // -8 * sum q   (Q4_0: weights stored as q + 8)
  int32_t neg16;      // -16 * sum q  (Q5_0)
  int32_t neg128;     // -128 * sum q (Q8_0: weights stored as q + 128)
  int32_t neg32h[2];  // -32 * sum q over each 16-value half (Q6_K: per-16 scales)
  int32_t sum;        // sum q
};
static_assert(sizeof(ActMeta) == 32);

// The metadata of a block with scale d, quant sum `sum` and first-half sum h0 (every ISA's
// activation quantizer ends here, so the fields agree bit for bit). Always inlined: each caller
// is compiled with its own ISA flags, and no shared out-of-line copy may carry another's.
[[gnu::always_inline]] inline void FillActMeta(float d, int32_t sum, int32_t h0, ActMeta* m) {
  m->d = d;
  m->dsum = d * float(sum);
  m->neg8 = -8 * sum;
  m->neg16 = -16 * sum;
  m->neg128 = -128 * sum;
  m->neg32h[0] = -32 * h0;
  m->neg32h[1] = -32 * (sum - h0);
  m->sum = sum;
}

}  // namespace brisk
