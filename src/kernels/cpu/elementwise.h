// Element-wise activation functions of the forward pass, vectorised per ISA tier from one source
// (elementwise_impl.inc): the same bits on every ISA.
#pragma once

#include <cstdint>

#include "runtime/cpu_features.h"

namespace brisk {

// out[i] = silu(g[i]) * u[i], silu(x) = x / (1 + e^-x) (the SwiGLU gate). out may alias g or u.
void SiluMul(const float* g, const float* u, int64_t n, float* out, Isa isa = ActiveIsa());

}  // namespace brisk
