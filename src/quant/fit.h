// Scale searches shared by the quantizers (internal to brisk_quant).
//
// A block quantizer picks a step (and offset) for a small group of values, then rounds each value
// to the nearest step. The naive step, range / number of steps, is rarely the best: a slightly
// smaller one trades a clipped extreme for finer steps everywhere else. These routines try a grid
// of candidate steps, re-fit each by least squares on the quants it produced, and polish the
// winner by alternating requantize / refit (Lloyd steps, each of which cannot raise the error).
// Errors are plain squared errors, the quantity a round trip is judged by.
#pragma once

#include <cstdint>

namespace brisk::quant_internal {

inline constexpr int kMaxFitValues = 32;  // largest group searched (a sub-block or legacy block)

// Round to nearest (ties to even) and clamp; NaN maps to lo.
int RoundClamp(float v, int lo, int hi);
// v as the nearest fp16 would store it.
float RoundFp16(float v);

// Symmetric group y = scale * q, q in [qmin, qmax] (qmin < 0 < qmax).
// Quantizes x against `scale` (all zero quants when scale is 0); returns the squared error.
float QuantizeSymmetric(const float* x, int n, int qmin, int qmax, float scale, int8_t* q);
// The real-valued scale with the lowest squared error found; 0 for an all-zero group.
float SearchSymmetricScale(const float* x, int n, int qmin, int qmax);

// Affine group y = scale * q + offset, q in [0, qmax], scale >= 0.
struct AffineFit {
  float scale = 0;
  float offset = 0;
};
float QuantizeAffine(const float* x, int n, int qmax, AffineFit fit, uint8_t* q);
// With offset_nonpositive the offset is constrained to <= 0 (the K types store a subtracted,
// unsigned min); otherwise it is free (Q4_1 / Q5_1 store a signed fp16 offset).
AffineFit SearchAffine(const float* x, int n, int qmax, bool offset_nonpositive);

}  // namespace brisk::quant_internal
