#include "engine/sampler.h"

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <limits>
#include <string>

#include "engine/vocab_ops.h"
#include "runtime/cpu_features.h"
#include "util/splitmix64.h"

namespace brisk {
using namespace vocab;  // NOLINT: the sampler is written in terms of these passes
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// top_k up to this uses the single-pass threshold selection; larger ones the histogram.
constexpr int kSmallTopK = 1024;

std::string Format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string Format(const char* fmt, ...) {
  char buf[256];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buf, sizeof(buf), fmt, args);
  va_end(args);
  return buf;
}

}  // namespace

Status ValidateSamplingParams(const SamplingParams& p, int n_vocab, const SamplingRanges& r) {
  if (n_vocab <= 0) return Status::Error(Format("n_vocab must be > 0, got %d", n_vocab));
  BRISK_RETURN_IF_ERROR(CheckFloat(r.temperature, "temperature", p.temperature));
  BRISK_RETURN_IF_ERROR(CheckInt(r.top_k, "top_k", p.top_k));
  BRISK_RETURN_IF_ERROR(CheckFloat(r.top_p, "top_p", p.top_p));
  BRISK_RETURN_IF_ERROR(CheckFloat(r.min_p, "min_p", p.min_p));
  BRISK_RETURN_IF_ERROR(
      CheckFloat(r.repetition_penalty, "repetition_penalty", p.repetition_penalty));
  BRISK_RETURN_IF_ERROR(CheckFloat(r.presence_penalty, "presence_penalty", p.presence_penalty));
  BRISK_RETURN_IF_ERROR(CheckFloat(r.frequency_penalty, "frequency_penalty", p.frequency_penalty));
  BRISK_RETURN_IF_ERROR(CheckInt(r.penalty_last_n, "penalty_last_n", p.penalty_last_n));
  BRISK_RETURN_IF_ERROR(CheckInt(r.top_logprobs, "top_logprobs", p.top_logprobs));
  for (const auto& [id, bias] : p.logit_bias) {
    BRISK_RETURN_IF_ERROR(CheckTokenId(id, n_vocab, "logit_bias"));
    BRISK_RETURN_IF_ERROR(
        CheckFloat(r.logit_bias, "logit_bias", bias, Format("logit_bias[%d]", int(id))));
  }
  return Status::Ok();
}

SamplerRng::SamplerRng(uint64_t seed) {
  // splitmix64 spreads any seed (0 included) over the state; xoshiro must not start all-zero,
  // which splitmix64 cannot produce for four consecutive outputs.
  for (uint64_t& s : s_) s = SplitMix64(seed);
}

uint64_t SamplerRng::Next() {
  const uint64_t result = std::rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = std::rotl(s_[3], 45);
  return result;
}

double SamplerRng::NextDouble() { return double(Next() >> 11) * 0x1.0p-53; }

Sampler::Sampler(const SamplingParams& params, int n_vocab, uint64_t seed)
    : params_(params), n_vocab_(n_vocab), seed_(params.seed.value_or(seed)), rng_(seed_) {
  const Status st = ValidateSamplingParams(params, n_vocab);
  BRISK_CHECK_MSG(st.ok(), st.message().c_str());
  if (params_.temperature > 0.0f) {
    // Clamped so that a denormal temperature still gives finite products (d * inv == 0 at d == 0).
    inv_temperature_ = float(std::min(1.0 / double(params_.temperature), double(FLT_MAX)));
  }
  if (params_.min_p > 0.0f) log_min_p_ = std::log(double(params_.min_p));
}

void Sampler::ApplyAdjustments(float* logits, std::span<const int32_t> context,
                               std::span<const int32_t> suppress) {
  BRISK_CHECK(logits != nullptr);
  for (const auto& [id, bias] : params_.logit_bias) logits[id] += bias;
  ApplyPenalties(logits, context);
  for (const int32_t id : suppress) {
    BRISK_CHECK_MSG(id >= 0 && id < n_vocab_, "suppressed token id out of range");
    logits[id] = -kInf;
  }
}

void Sampler::ApplyPenalties(float* logits, std::span<const int32_t> context) {
  const float rep = params_.repetition_penalty;
  const float presence = params_.presence_penalty;
  const float frequency = params_.frequency_penalty;
  if (params_.penalty_last_n == 0 || (rep == 1.0f && presence == 0.0f && frequency == 0.0f)) return;
  std::span<const int32_t> window = context;
  if (params_.penalty_last_n > 0 && window.size() > size_t(params_.penalty_last_n)) {
    window = window.last(size_t(params_.penalty_last_n));
  }
  if (window.empty()) return;

  // Count the distinct tokens of the window in a small open-addressing table (at most half full),
  // so the cost follows the window, not the vocabulary.
  size_t cap = 16;
  while (cap < 2 * window.size()) cap *= 2;
  const uint32_t mask = uint32_t(cap - 1);
  pen_keys_.assign(cap, -1);
  pen_counts_.resize(cap);
  pen_used_.clear();
  for (const int32_t t : window) {
    BRISK_CHECK_MSG(t >= 0 && t < n_vocab_, "context token id out of range");
    uint32_t h = (uint32_t(t) * 0x9E3779B1u) & mask;
    while (pen_keys_[h] != -1 && pen_keys_[h] != t) h = (h + 1) & mask;
    if (pen_keys_[h] == -1) {
      pen_keys_[h] = t;
      pen_counts_[h] = 0;
      pen_used_.push_back(int32_t(h));
    }
    ++pen_counts_[h];
  }
  for (const int32_t h : pen_used_) {
    float& l = logits[pen_keys_[h]];
    const int count = pen_counts_[h];
    if (rep != 1.0f) l = l > 0.0f ? l / rep : l * rep;
    l -= float(count) * frequency + presence;  // count > 0 for every table entry
  }
}

void Sampler::SortSegment(Segment& s) {
  if (s.sorted) return;
  std::sort(cand_.begin() + s.begin, cand_.begin() + s.end, RankOrder());
  s.sorted = true;
}

int Sampler::SelectTopK(const float* logits, int k) {
  // One pass against a rising threshold: the buffer collects values above the current k-th best
  // and is cut back to the best k whenever it fills. Later indices lose ties, so a value equal to
  // the threshold can be skipped. NaN and -inf never pass the comparison. Once the threshold has
  // risen, SIMD skips four logits per comparison.
  const size_t cap = size_t(std::max(2 * k, 64));
  if (cand_.size() < cap) cand_.resize(cap);
  Cand* buf = cand_.data();
  int c = 0;
  float threshold = -kInf;
  auto offer = [&](int i) {
    const float x = logits[i];
    if (x > threshold) {
      buf[c++] = {x, i};
      if (size_t(c) == cap) {
        std::nth_element(buf, buf + k - 1, buf + c, RankOrder());
        c = k;
        threshold = buf[k - 1].logit;
      }
    }
  };
  int i = 0;
#if BRISK_VOCAB_SSE2  // (vocab_ops.h includes the SSE2 header)
  for (; i + 4 <= n_vocab_; i += 4) {
    unsigned mask =
        unsigned(_mm_movemask_ps(_mm_cmpgt_ps(_mm_loadu_ps(logits + i), _mm_set1_ps(threshold))));
    while (mask != 0) {
      offer(i + __builtin_ctz(mask));
      mask &= mask - 1;
    }
  }
#endif
  for (; i < n_vocab_; ++i) offer(i);
  if (c > k) {
    std::nth_element(buf, buf + k - 1, buf + c, RankOrder());
    c = k;
  }
  std::sort(buf, buf + c, RankOrder());
  // +inf acts as the largest finite value (it would otherwise make every e^(l - max) NaN).
  for (int j = 0; j < c && buf[j].logit == kInf; ++j) buf[j].logit = FLT_MAX;
  return c;
}

bool Sampler::BuildCandidates(float* logits, float* max_logit) {
  segs_.clear();
  const int k = params_.top_k;
  float m;
  if (k > 0 && k <= kSmallTopK && k < n_vocab_) {
    const int c = SelectTopK(logits, k);
    if (c == 0) return false;
    const Cand* buf = cand_.data();
    m = buf[0].logit;
    Segment s{0, c, 0.0, 0.0, true};
    if (params_.top_p < 1.0f) {
      for (int j = 0; j < c; ++j) s.mass += ExpNonPositive(buf[j].logit - m);
    }
    segs_.push_back(s);
    if (params_.top_p < 1.0f) ApplyTopP(s.mass, m);
  } else {
    m = MaxAndSanitize(logits, n_vocab_);
    if (m == -kInf) return false;
    BuildFromHistogram(logits, m);
  }
  if (params_.min_p > 0.0f) ApplyMinP(m);
  *max_logit = m;
  return true;
}

void Sampler::BuildFromHistogram(float* logits, float m) {
  const bool top_p_on = params_.top_p < 1.0f;
  const int k = params_.top_k;
  // Buckets up to this one can hold a token min_p keeps (+1: float rounding of the distance may
  // push a kept token just past the bucket edge).
  const int last_min_p =
      params_.min_p > 0.0f ? std::min(kLastBin, BinOf(float(-log_min_p_)) + 1) : kLastBin;

  if (!top_p_on && !(k > 0 && k < n_vocab_) && last_min_p < kLastBin) {
    // min_p alone: its cut is known before any pass, and it usually keeps a handful of tokens,
    // so gather them directly and rank them as one segment. Fall through to the histogram when
    // it keeps too many to sort cheaply.
    constexpr int32_t kDirectMax = 4096;
    if (cand_.size() < size_t(kDirectMax)) cand_.resize(size_t(kDirectMax));
    int32_t c = 0;
    bool overflow = false;
    ForEachAtLeast(logits, n_vocab_, LowerBoundForBin(m, last_min_p), [&](int i) {
      const float x = logits[i];
      if (overflow || BinOf(m - x) > last_min_p) return;
      if (c == kDirectMax) {
        overflow = true;
        return;
      }
      cand_[size_t(c++)] = {x, i};
    });
    if (!overflow) {
      segs_.push_back({0, c, 0.0, 0.0, c <= 1});
      return;
    }
  }

  double guess_z = -1.0;  // the guess route's total mass, when it ran
  if (top_p_on && !(k > 0 && k < n_vocab_)) {
    const bool done = TopPFromGuess(logits, m, &guess_z);
    if (!done) BuildFromHistogramTail(logits, m, guess_z);
    UpdateTopPGuess(m);
    return;
  }
  BuildFromHistogramTail(logits, m, guess_z);
}

void Sampler::BuildFromHistogramTail(float* logits, float m, double guess_z) {
  const bool top_p_on = params_.top_p < 1.0f;
  const int k = params_.top_k;
  const int last_min_p =
      params_.min_p > 0.0f ? std::min(kLastBin, BinOf(float(-log_min_p_)) + 1) : kLastBin;

  bin_count_.assign(kNumBins + 1, 0);  // + the slot for -inf
  if (top_p_on) {
    bin_mass_.assign(kNumBins + 1, 0.0);
    CountBins<true>(logits, n_vocab_, m, avx2_, bin_count_.data(), bin_mass_.data());
  } else {
    CountBins<false>(logits, n_vocab_, m, avx2_, bin_count_.data(), nullptr);
  }
  int64_t n_finite = 0;
  for (int b = 0; b < kNumBins; ++b) n_finite += bin_count_[b];

  // Each truncation keeps a ranked prefix; find the last bucket any of them can reach, then
  // gather only the buckets up to it.
  const bool top_k_on = k > 0 && int64_t(k) < n_finite;
  int bin_k = kLastBin;
  if (top_k_on) {
    int64_t cum = 0;
    for (int b = 0; b < kNumBins; ++b) {
      cum += bin_count_[b];
      if (cum >= k) {
        bin_k = b;
        break;
      }
    }
  }
  int last = bin_k;
  double total_mass = 0.0;  // what top_p normalises by: the mass of every token top_k kept
  if (top_p_on && top_k_on) {
    // The mass of the top k needs the bucket holding the k-th token, so gather up to it.
  } else {
    last = std::min(last, last_min_p);
    if (top_p_on) {
      // The guess route's total when it ran, so that both routes decide with the same numbers.
      if (guess_z >= 0.0) {
        total_mass = guess_z;
      } else {
        for (int b = 0; b < kNumBins; ++b) total_mass += bin_mass_[b];
      }
      const double target = double(params_.top_p) * total_mass;
      double cum = 0.0;
      for (int b = 0; b < kNumBins; ++b) {
        cum += bin_mass_[b];
        if (cum >= target) {
          // +1: the exact walk sums in another order and may cross one bucket later.
          last = std::min(last, std::min(kLastBin, b + 1));
          break;
        }
      }
    }
  }

  // Counting sort of the buckets 0..last into cand_; bin_count_ becomes each bucket's cursor.
  int32_t pos = 0;
  for (int b = 0; b <= last && pos < n_finite; ++b) {  // buckets past the last token stay empty
    const int32_t c = bin_count_[b];
    if (c > 0) segs_.push_back({pos, pos + c, top_p_on ? bin_mass_[b] : 0.0, 0.0, c == 1});
    bin_count_[b] = pos;
    pos += c;
  }
  if (cand_.size() < size_t(pos)) cand_.resize(size_t(pos));
  Cand* out = cand_.data();
  int32_t* cursor = bin_count_.data();
  ForEachAtLeast(logits, n_vocab_, LowerBoundForBin(m, last), [&](int i) {
    const float x = logits[i];
    if (x == -kInf) return;
    const int b = BinOf(m - x);
    if (b <= last) out[cursor[b]++] = {x, i};
  });

  if (top_k_on && last == bin_k) {
    // The k-th token lies in the last gathered bucket: rank that bucket and cut inside it.
    Segment& s = segs_.back();
    SortSegment(s);
    s.end = k;
    if (top_p_on) {
      s.mass = 0.0;
      for (int32_t j = s.begin; j < s.end; ++j) s.mass += ExpNonPositive(out[j].logit - m);
    }
  }
  if (top_p_on) {
    if (top_k_on) {
      for (const Segment& s : segs_) total_mass += s.mass;
    }
    ApplyTopP(total_mass, m);
  }
}

bool Sampler::TopPFromGuess(const float* logits, float m, double* total_mass) {
  // One vectorised pass computes the exact total mass Z and gathers the tokens within a guessed
  // distance of the max (from the previous call: successive rows of a sequence look alike). If
  // they hold top_p * Z, the cut is among them: bucket them and cut exactly. Their buckets hold
  // the same tokens in the same order as on the histogram route, and Z is the same number there,
  // so the guess only changes the speed, never the result.
  // The cap keeps this scratch far below vocabulary size; a flat row that would exceed it takes
  // the histogram route (which reuses cand_).
  constexpr size_t kMaxGather = size_t(1) << 15;
  gather_.clear();
  const double z = SumExpAndGather(logits, n_vocab_, m, top_p_guess_, kMaxGather, avx2_, gather_);
  *total_mass = z;
  if (gather_.size() == kMaxGather) return false;
  const double target = double(params_.top_p) * z;
  const int n_bins = BinOf(top_p_guess_) + 1;
  bin_count_.assign(size_t(n_bins), 0);
  bin_mass_.assign(size_t(n_bins), 0.0);
  alignas(32) float x[kChunk];
  alignas(32) float e[kChunk];
  alignas(32) int32_t bins[kChunk];
  for (size_t base = 0; base < gather_.size(); base += kChunk) {
    const int len = int(std::min<size_t>(kChunk, gather_.size() - base));
    for (int j = 0; j < len; ++j) x[j] = gather_[base + size_t(j)].logit;
    BinsAndExp(x, len, m, bins, e, avx2_);
    for (int j = 0; j < len; ++j) {
      ++bin_count_[size_t(bins[j])];
      bin_mass_[size_t(bins[j])] += e[j];
    }
  }
  double gathered = 0.0;
  for (const double x : bin_mass_) gathered += x;
  // The margin leaves rounding-level cases (the cut at the very edge) to the histogram route.
  if (gathered < target * (1.0 + 1e-9)) return false;

  int32_t pos = 0;
  for (int b = 0; b < n_bins; ++b) {
    const int32_t c = bin_count_[size_t(b)];
    if (c > 0) segs_.push_back({pos, pos + c, bin_mass_[size_t(b)], 0.0, c == 1});
    bin_count_[size_t(b)] = pos;
    pos += c;
  }
  if (cand_.size() < size_t(pos)) cand_.resize(size_t(pos));
  for (const Cand& c : gather_) cand_[size_t(bin_count_[size_t(BinOf(m - c.logit))]++)] = c;
  ApplyTopP(z, m);
  return true;
}

void Sampler::UpdateTopPGuess(float m) {
  // Distance of the last kept token (the lowest logit of the last segment), with some slack.
  float lowest = m;
  const Segment& s = segs_.back();
  for (int32_t j = s.begin; j < s.end; ++j) lowest = std::min(lowest, cand_[size_t(j)].logit);
  top_p_guess_ = std::clamp((m - lowest) * 1.15f + 0.25f, 0.5f, kBinRange);
}

void Sampler::ApplyTopP(double total_mass, float m) {
  // Keep the shortest ranked prefix whose mass reaches top_p (llama.cpp: cum >= p). Whole buckets
  // below the target are skipped by their sums; only the bucket that crosses it is ranked.
  const double target = double(params_.top_p) * total_mass;
  double cum = 0.0;
  for (size_t si = 0; si < segs_.size(); ++si) {
    Segment& s = segs_[si];
    if (cum + s.mass < target) {
      cum += s.mass;
      continue;
    }
    SortSegment(s);
    for (int32_t j = s.begin; j < s.end; ++j) {
      cum += ExpNonPositive(cand_[j].logit - m);
      if (cum >= target) {
        s.end = j + 1;
        segs_.resize(si + 1);
        return;
      }
    }
    // Rounding: the bucket sum reached the target but the ranked walk fell just short; go on.
  }
  // Never reached (rounding with top_p close to 1): keep everything, as llama.cpp does.
}

void Sampler::ApplyMinP(float m) {
  // Keep p / p_max >= min_p, i.e. logit - max >= log(min_p), decided in double.
  const double dm = double(m);
  for (size_t si = 0; si < segs_.size(); ++si) {
    Segment& s = segs_[si];
    int32_t pass = 0;
    for (int32_t j = s.begin; j < s.end; ++j) {
      pass += (double(cand_[j].logit) - dm >= log_min_p_) ? 1 : 0;
    }
    if (pass == s.end - s.begin) continue;
    if (pass > 0) {
      SortSegment(s);  // the passing tokens are the segment's ranked prefix
      s.end = s.begin + pass;
      ++si;
    }
    segs_.resize(si);  // the max always passes, so at least one segment remains
    return;
  }
}

double Sampler::ComputeWeights(float m) {
  // Per segment: e^((l - m) / T) a chunk at a time, element j of the segment into partial sum
  // j % 4, combined as (s0 + s1) + (s2 + s3).
  alignas(32) float x[kChunk];
  alignas(32) float e[kChunk];
  double total = 0.0;
  for (Segment& s : segs_) {
    double acc[4] = {0, 0, 0, 0};
    for (int32_t base = s.begin; base < s.end; base += kChunk) {
      const int len = int(std::min<int32_t>(kChunk, s.end - base));
      for (int j = 0; j < len; ++j) x[j] = cand_[size_t(base + j)].logit;
      ExpShifted(x, len, m, inv_temperature_, e, avx2_);
      for (int j = 0; j < len; ++j) acc[j & 3] += e[j];
    }
    s.weight = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    total += s.weight;
  }
  return total;
}

int32_t Sampler::LowestAllowed(std::span<const int32_t> suppress) const {
  for (int32_t id = 0; id < n_vocab_; ++id) {
    if (std::find(suppress.begin(), suppress.end(), id) == suppress.end()) return id;
  }
  return 0;
}

SampleResult Sampler::SampleGreedy(float* logits, std::span<const int32_t> suppress) {
  SampleResult res;
  const float m = MaxAndSanitize(logits, n_vocab_);
  if (m == -kInf) {
    res.token = LowestAllowed(suppress);
    res.logprob = -kInf;
    return res;
  }
  res.token = FirstIndexOf(logits, n_vocab_, m);
  const int n_top = params_.top_logprobs;
  if (!params_.logprobs && n_top == 0) return res;

  const double log_z = std::log(SumExp(logits, n_vocab_, m, avx2_));
  res.logprob = float(-log_z);  // the argmax's own term is e^0
  if (n_top > 0) {
    // Ranked over every finite logit (NaN is -inf by now), so n_top >= n_vocab works too.
    const int c = SelectTopK(logits, n_top);
    for (int j = 0; j < c; ++j) {
      res.top.push_back({cand_[j].id, float(double(cand_[j].logit) - double(m) - log_z)});
    }
  }
  return res;
}

SampleResult Sampler::Sample(float* logits, std::span<const int32_t> context,
                             std::span<const int32_t> suppress) {
  avx2_ = UseAvx2();
  ApplyAdjustments(logits, context, suppress);
  if (params_.temperature == 0.0f) return SampleGreedy(logits, suppress);

  // Drawn first and unconditionally: one number per call keeps the stream aligned.
  const double u = rng_.NextDouble();
  SampleResult res;
  float m;
  if (!BuildCandidates(logits, &m)) {
    res.token = LowestAllowed(suppress);
    res.logprob = -kInf;
    return res;
  }
  const double total = ComputeWeights(m);
  const double log_total = std::log(total);
  const double inv_t = 1.0 / double(params_.temperature);
  auto logprob = [&](float l) { return float((double(l) - double(m)) * inv_t - log_total); };

  // Inverse CDF in ranked order: skip whole buckets by their weights, rank only the one the
  // target falls in.
  const double target = u * total;
  const float inv_t_f = inv_temperature_;
  double cum = 0.0;
  int32_t chosen = -1;
  for (size_t si = 0; si < segs_.size() && chosen < 0; ++si) {
    Segment& s = segs_[si];
    if (si + 1 < segs_.size() && cum + s.weight <= target) {
      cum += s.weight;
      continue;
    }
    SortSegment(s);
    chosen = s.end - 1;  // if rounding leaves the walk short, the bucket's last token
    for (int32_t j = s.begin; j < s.end; ++j) {
      cum += ExpNonPositive((cand_[j].logit - m) * inv_t_f);
      if (cum > target) {
        chosen = j;
        break;
      }
    }
  }
  res.token = cand_[chosen].id;
  res.logprob = logprob(cand_[chosen].logit);

  const int n_top = params_.top_logprobs;
  for (size_t si = 0; si < segs_.size() && int(res.top.size()) < n_top; ++si) {
    Segment& s = segs_[si];
    SortSegment(s);
    for (int32_t j = s.begin; j < s.end && int(res.top.size()) < n_top; ++j) {
      res.top.push_back({cand_[j].id, logprob(cand_[j].logit)});
    }
  }
  return res;
}

std::vector<TokenLogprob> Sampler::FinalDistribution(float* logits,
                                                     std::span<const int32_t> context,
                                                     std::span<const int32_t> suppress) {
  avx2_ = UseAvx2();
  ApplyAdjustments(logits, context, suppress);
  std::vector<TokenLogprob> out;
  if (params_.temperature == 0.0f) {
    const float m = MaxAndSanitize(logits, n_vocab_);
    if (m != -kInf) out.push_back({FirstIndexOf(logits, n_vocab_, m), 0.0f});
    return out;
  }
  float m;
  if (!BuildCandidates(logits, &m)) return out;
  const double log_total = std::log(ComputeWeights(m));
  const double inv_t = 1.0 / double(params_.temperature);
  for (Segment& s : segs_) {
    SortSegment(s);
    for (int32_t j = s.begin; j < s.end; ++j) {
      const double lp = (double(cand_[j].logit) - double(m)) * inv_t - log_total;
      out.push_back({cand_[j].id, float(lp)});
    }
  }
  return out;
}

}  // namespace brisk
