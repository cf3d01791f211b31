// Token sampler (DESIGN §5 "Sampler"): turns one row of logits into the next token.
//
// The chain follows llama.cpp's default order, so results are comparable with it:
//   logit_bias -> penalties (repetition, then presence/frequency) -> suppress
//   -> temperature == 0: argmax
//   -> else: top_k -> top_p -> min_p -> temperature -> softmax -> one draw (inverse CDF)
// top_p and min_p therefore see the distribution at temperature 1; the temperature only reshapes
// the surviving candidates.
//
// Cost: the vocabulary (151936 for Qwen) is never sorted. Every truncation keeps a prefix of the
// candidates ranked by (logit descending, id ascending), so the sampler only has to find where the
// prefix ends and rank the little it must:
//   - greedy: one SIMD pass for the max (a second, short one for its first index);
//   - top_k <= 1024: one pass against a rising threshold, then a sort of k entries;
//   - min_p alone: its cut (logit >= max + log(min_p)) is known up front: gather, rank;
//   - top_p: one SIMD pass computes the exact total mass and gathers the tokens within a guessed
//     distance of the max (the previous call's cut); if they hold top_p of the mass, they are
//     bucketed by distance from the max and only the bucket holding the cut is sorted;
//   - otherwise (or when the guess falls short): a histogram over the distance from the max
//     (32 buckets per logit unit), from which the buckets up to the cut are gathered.
// The draw walks whole buckets by their summed weights and sorts only the one the target lands in.
// The route depends on the row alone, except for the top_p guess, which never changes the result:
// the exps, bucket sums and totals are the same numbers whether the guess held or not, and on
// every SIMD tier (tests check both, bit for bit).
#pragma once

#include <cfloat>
#include <climits>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "engine/param_range.h"
#include "engine/vocab_ops.h"
#include "util/status.h"

namespace brisk {

struct SamplingParams {
  float temperature = 1.0f;         // 0 => greedy (argmax; ties -> lowest id)
  int top_k = 0;                    // 0 or < 0 => disabled
  float top_p = 1.0f;               // (0, 1]; 1 => disabled
  float min_p = 0.0f;               // [0, 1]; 0 => disabled
  float repetition_penalty = 1.0f;  // logit > 0 -> logit / p, else logit * p; once per distinct
                                    // token in the window
  float presence_penalty = 0.0f;    // logit -= presence * (count > 0)
  float frequency_penalty = 0.0f;   // logit -= frequency * count
  int penalty_last_n = 64;          // window (prompt + generated) for the three penalties;
                                    // -1 = whole context, 0 = off
  std::vector<std::pair<int32_t, float>> logit_bias;  // added to the logit of token id
  std::optional<uint64_t> seed;  // absent: the engine picks one; present: reproducible
  int top_logprobs = 0;          // 0..20: also report this many most likely tokens
  bool logprobs = false;         // report the chosen token's log-prob
};

// The ranges of the sampling parameters, all in one place. A bound at FLT_MAX only says "a float
// holds it" (the sampler needs finite values).
struct SamplingRanges {
  ParamRange temperature, top_k, top_p, min_p, repetition_penalty, presence_penalty,
      frequency_penalty, penalty_last_n, top_logprobs;
  ParamRange logit_bias;  // each bias value; the ids are token ids
};

// What the sampler computes correctly: the engine holds every request to these (the CLI and the
// benchmarks may use all of them, e.g. temperatures above 2).
inline constexpr SamplingRanges kSamplerRanges = {
    .temperature = {0, FLT_MAX},
    .top_k = IntRange(INT_MIN, INT_MAX),  // <= 0: disabled
    .top_p = {0, 1, /*lo_open=*/true},
    .min_p = {0, 1},
    .repetition_penalty = {0, FLT_MAX, /*lo_open=*/true},
    .presence_penalty = {-2, 2},
    .frequency_penalty = {-2, 2},
    .penalty_last_n = IntRange(-1, INT_MAX),
    .top_logprobs = IntRange(0, 20),
    .logit_bias = {-FLT_MAX, FLT_MAX},
};

// The narrower ranges the OpenAI API documents (top_k: vLLM's): the server holds its clients to
// these, since they expect its 400s there.
inline constexpr SamplingRanges kOpenAiRanges = {
    .temperature = {0, 2},
    .top_k = IntRange(-1, INT_MAX),
    .top_p = kSamplerRanges.top_p,
    .min_p = kSamplerRanges.min_p,
    .repetition_penalty = kSamplerRanges.repetition_penalty,
    .presence_penalty = kSamplerRanges.presence_penalty,
    .frequency_penalty = kSamplerRanges.frequency_penalty,
    .penalty_last_n = kSamplerRanges.penalty_last_n,
    .top_logprobs = kSamplerRanges.top_logprobs,
    .logit_bias = {-100, 100},
};

// Checks every field against `ranges` and the logit_bias ids against the vocabulary. Errors are
// invalid_argument with field() = the parameter's name; the message quotes the offending value.
Status ValidateSamplingParams(const SamplingParams& p, int n_vocab,
                              const SamplingRanges& ranges = kSamplerRanges);

struct TokenLogprob {
  int32_t token;
  float logprob;  // natural log
};

struct SampleResult {
  int32_t token = -1;
  // Log-probability of `token` under the final distribution used for sampling (the candidates left
  // after top_k/top_p/min_p, at the request's temperature). For greedy (temperature 0) it is the
  // log-softmax of the penalised/biased logits at temperature 1, computed only when
  // params.logprobs or params.top_logprobs ask for it (0 otherwise, since it costs a pass with an
  // exp per vocabulary entry). -inf when no token had a finite logit.
  float logprob = 0.0f;
  // The top_logprobs most likely tokens of that same distribution, most likely first (ties: lower
  // id first). Tokens with zero probability (outside the candidates, suppressed) are never
  // listed, so this can be shorter than top_logprobs (e.g. top_k = 1).
  std::vector<TokenLogprob> top;
};

// xoshiro256** seeded through splitmix64: a fixed, platform-independent generator, so a seeded
// request reproduces bit for bit anywhere (the standard distributions are implementation-defined).
class SamplerRng {
 public:
  explicit SamplerRng(uint64_t seed);
  uint64_t Next();
  // Uniform in [0, 1) from the top 53 bits of Next().
  double NextDouble();

 private:
  uint64_t s_[4];
};

// One sampler per sequence (it keeps the sequence's RNG and some scratch); not thread-safe.
class Sampler {
 public:
  // `seed` is used when params.seed is absent. params must pass ValidateSamplingParams (the engine
  // validates requests at submission; a bad one here is a bug).
  Sampler(const SamplingParams& params, int n_vocab, uint64_t seed);

  // `logits`: n_vocab values, used as scratch (bias, penalties and suppression are applied in
  // place, NaNs may be replaced by -inf). `context`: the sequence's tokens so far (prompt +
  // generated) for the penalties. `suppress`: ids that must not be chosen (the engine passes the
  // end-of-generation ids while min_tokens is not reached or ignore_eos is set).
  //
  // NaN logits count as -inf (they never win). If no token is left with a finite logit, the result
  // is the lowest id not in `suppress` (0 if every id is suppressed) with logprob -inf: the engine
  // always gets a valid token and can decide what to do with the sequence.
  //
  // The sampling path draws exactly one uniform number per call (none for greedy), so a seeded
  // sequence depends only on the logits it is given.
  SampleResult Sample(float* logits, std::span<const int32_t> context,
                      std::span<const int32_t> suppress = {});

  // The first step of Sample on its own: logit_bias, penalties and suppression, in place.
  void ApplyAdjustments(float* logits, std::span<const int32_t> context,
                        std::span<const int32_t> suppress);

  // Test hook: the final distribution Sample would draw from (after the adjustments and all
  // truncations, at the request's temperature), most likely first (ties: lower id first). Consumes
  // no random number. For temperature 0 it is the argmax with log-prob 0 (a point mass). Empty
  // when no token has a finite logit.
  std::vector<TokenLogprob> FinalDistribution(float* logits, std::span<const int32_t> context,
                                              std::span<const int32_t> suppress = {});

  const SamplingParams& params() const { return params_; }
  uint64_t seed() const { return seed_; }  // the effective seed

 private:
  using Cand = vocab::LogitId;
  // A run of cand_ whose logits all lie in one histogram bucket; buckets are in descending-logit
  // order, so the candidates in ranked order are the segments in order, each sorted on demand.
  struct Segment {
    int32_t begin, end;
    double mass;    // sum of exp(logit - max): the temperature-1 mass top_p works on
    double weight;  // sum of exp((logit - max) / temperature): the sampling weight
    bool sorted;
  };

  void ApplyPenalties(float* logits, std::span<const int32_t> context);
  // The k best finite logits, ranked, into cand_[0, c); returns c = min(k, finite count).
  int SelectTopK(const float* logits, int k);
  // Leaves the final candidates in segs_/cand_ and their max logit in *max_logit; false when no
  // token has a finite logit.
  bool BuildCandidates(float* logits, float* max_logit);
  void BuildFromHistogram(float* logits, float m);
  // The histogram route proper; guess_z >= 0 is the total mass TopPFromGuess computed.
  void BuildFromHistogramTail(float* logits, float m, double guess_z);
  // top_p without top_k, when the tokens near the max hold the cut; false (with *total_mass set)
  // when the histogram route must do it.
  bool TopPFromGuess(const float* logits, float m, double* total_mass);
  void UpdateTopPGuess(float m);
  void ApplyTopP(double total_mass, float m);
  void ApplyMinP(float m);
  // Fills each segment's weight; returns their sum.
  double ComputeWeights(float m);
  void SortSegment(Segment& s);
  int32_t LowestAllowed(std::span<const int32_t> suppress) const;
  SampleResult SampleGreedy(float* logits, std::span<const int32_t> suppress);

  SamplingParams params_;
  int n_vocab_;
  uint64_t seed_;
  SamplerRng rng_;
  float inv_temperature_ = 1.0f;
  bool avx2_ = false;  // the exp kernels' tier for the current call
  // How far below the max TopPFromGuess gathers (logit units); follows the recent cuts.
  float top_p_guess_ = 4.0f;
  double log_min_p_ = 0.0;

  // Scratch, grown on demand and reused across calls.
  std::vector<Cand> cand_;
  std::vector<Cand> gather_;
  std::vector<Segment> segs_;
  std::vector<int32_t> bin_count_;
  std::vector<double> bin_mass_;
  std::vector<int32_t> pen_keys_, pen_counts_, pen_used_;
};

}  // namespace brisk
