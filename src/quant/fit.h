// Scale searches shared by the quantizers (internal to brisk_quant).
//
// A block quantizer picks a step (and offset) for a small group of values, then rounds each value
// to the nearest step. The naive step, range / number of steps, is rarely the best: a slightly
// smaller one trades a clipped extreme for finer steps everywhere else. These routines try a
// small grid of candidate steps, score each by the error of the least-squares fit to the quants it
// produced (closed form from a few sums, one pass over the group per candidate), and polish the
// winner by alternating requantize / refit (Lloyd steps, each of which cannot raise the error).
// Errors are plain squared errors, the quantity a round trip is judged by.
//
// Speed and determinism: every pass over a group works on 8 values at a time with 8 partial sums
// added in a fixed order at the end (or, when scoring many candidates at once, one candidate per
// vector lane). The passes exist twice, as GCC / Clang vector code: a portable copy with 4-float
// vectors (SSE2 on any x86-64, NEON on arm64, plain scalar code elsewhere) and, on x86-64, an
// AVX2 copy with 8-float vectors picked at run time. Both do the same IEEE float operations on
// every value in the same order, so the quantized bytes do not depend on the CPU (a test checks
// this). A build whose base flags let the compiler contract a*b+c into FMA (e.g. GCC with
// -march=native: C++ defaults to -ffp-contract=fast) may round differently from the default
// build, which has no FMA.
#pragma once

#include <cstdint>

namespace brisk::quant_internal {

inline constexpr int kMaxFitValues = 32;  // largest group searched (a sub-block or legacy block)
inline constexpr int kLanes = 8;  // group sizes must be multiples (all used are: 16, 32, 256)

// For tests and benchmarks: whether this build and CPU have the AVX2 copy (used by default when
// they do), and a switch between it and the portable copy (not thread-safe with quantization in
// flight: set it while nothing is quantizing).
bool HaveWideKernels();
void ForcePortableKernels(bool portable);  // true: portable copy only; false: the best available

// Round to nearest (ties to even) and clamp; NaN maps to lo.
int RoundClamp(float v, int lo, int hi);
// v as the nearest fp16 would store it.
float RoundFp16(float v);

// Sum of n values (8 partial sums, fixed order).
float SumLanes(const float* x, int n);

// ---- symmetric group y = scale * q, q in [qmin, qmax] (qmin < 0 < qmax) ----------------------

// Sums over a group of its quants: sum q*x and sum q^2 (the least-squares scale is qx / qq).
struct SymmetricSums {
  float qx = 0, qq = 0;
};
// Quantizes x against `scale` (all zero quants when scale is 0); returns the squared error and,
// when sums is not null, the sums of the quants produced.
float QuantizeSymmetric(const float* x, int n, int qmin, int qmax, float scale, int8_t* q,
                        SymmetricSums* sums = nullptr);
// The real-valued scale with the lowest squared error found; 0 for an all-zero group. Input must
// be finite.
float SearchSymmetricScale(const float* x, int n, int qmin, int qmax);

// Most candidate fits evaluated in one pass by the *RoundTripErrors routines below.
inline constexpr int kMaxFits = 16;
// The squared errors of quantizing x against each of scales[0..count) (count <= kMaxFits) in one
// pass over x: err[k] for scales[k]. Each value's quant and error are those QuantizeSymmetric
// forms; only the order of the summation differs (sequential here), so compare errors from this
// routine with each other, or allow for rounding when comparing with QuantizeSymmetric's.
void SymmetricRoundTripErrors(const float* x, int n, int qmin, int qmax, const float* scales,
                              int count, float* err);

// ---- affine group y = scale * q + offset, q in [0, qmax], scale >= 0 -------------------------

struct AffineFit {
  float scale = 0;
  float offset = 0;
};
// Sums over a group of its quants: sum q, sum q^2, sum q*x. With them (and sum x) the squared
// error of any (scale, offset) for those fixed quants is a closed-form quadratic.
struct AffineSums {
  float q = 0, qq = 0, qx = 0;
};

// Quantizes x against `fit` (all zero quants when its scale is 0); returns the squared error and,
// when sums is not null, the sums of the quants produced.
float QuantizeAffine(const float* x, int n, int qmax, AffineFit fit, uint8_t* q,
                     AffineSums* sums = nullptr);
// As SymmetricRoundTripErrors, for affine fits (QuantizeAffine's quants and errors).
void AffineRoundTripErrors(const float* x, int n, int qmax, const AffineFit* fits, int count,
                           float* err);
// With offset_nonpositive the offset is constrained to <= 0 (the K types store a subtracted,
// unsigned min); otherwise it is free (Q4_1 / Q5_1 store a signed fp16 offset). Input must be
// finite.
AffineFit SearchAffine(const float* x, int n, int qmax, bool offset_nonpositive);

}  // namespace brisk::quant_internal
