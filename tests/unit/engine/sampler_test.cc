// Sampler tests: every result is compared with a straightforward reference written here (full
// sort, double precision) that follows the documented chain literally.
#include "engine/sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "runtime/cpu_features.h"

namespace brisk {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr int kQwenVocab = 151936;

// Under sanitizers (BRISK_TEST_SMALL=1) run fewer and smaller cases.
bool Small() {
  const char* e = std::getenv("BRISK_TEST_SMALL");
  return e != nullptr && *e != '\0' && *e != '0';
}

enum class Kind {
  kNormal,   // N(0, scale^2)
  kTies,     // rounded to multiples of 0.5: many equal logits, ties at the top
  kSpecial,  // normal with NaN and -inf sprinkled in (index 0 is NaN)
};

// Deterministic everywhere: Box-Muller over the sampler's own generator.
std::vector<float> RandomLogits(int n, uint64_t seed, float scale, Kind kind = Kind::kNormal) {
  SamplerRng rng(seed);
  std::vector<float> l(size_t(n), 0.0f);
  for (int i = 0; i < n; ++i) {
    const double u1 = 1.0 - rng.NextDouble();
    const double u2 = rng.NextDouble();
    const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
    float x = float(z * scale);
    if (kind == Kind::kTies) x = std::round(x * 2.0f) / 2.0f;
    if (kind == Kind::kSpecial && (i % 97 == 0)) x = kNaN;
    if (kind == Kind::kSpecial && (i % 89 == 5)) x = -kInf;
    l[size_t(i)] = x;
  }
  return l;
}

// LLM-like row: a few large logits over a wide tail.
std::vector<float> PeakedLogits(int n, uint64_t seed) {
  std::vector<float> l = RandomLogits(n, seed, 2.0f);
  SamplerRng rng(seed);
  for (int j = 0; j < 8; ++j) l[size_t(rng.Next() % uint64_t(n))] += 12.0f + float(j);
  return l;
}

// ---------------------------------------------------------------------------------------------
// Reference implementation.

std::vector<float> RefAdjust(std::vector<float> l, const SamplingParams& p,
                             const std::vector<int32_t>& context,
                             const std::vector<int32_t>& suppress) {
  for (const auto& [id, bias] : p.logit_bias) l[size_t(id)] += bias;
  if (p.penalty_last_n != 0) {
    size_t start = 0;
    if (p.penalty_last_n > 0 && context.size() > size_t(p.penalty_last_n)) {
      start = context.size() - size_t(p.penalty_last_n);
    }
    std::map<int32_t, int> counts;
    for (size_t i = start; i < context.size(); ++i) ++counts[context[i]];
    for (const auto& [token, count] : counts) {
      float& x = l[size_t(token)];
      x = x > 0.0f ? x / p.repetition_penalty : x * p.repetition_penalty;
      x -= float(count) * p.frequency_penalty + float(count > 0) * p.presence_penalty;
    }
  }
  for (const int32_t id : suppress) l[size_t(id)] = -kInf;
  return l;
}

struct RefCand {
  int32_t id;
  float logit;
  double prob;
  double logprob;
};

struct RefDist {
  std::vector<RefCand> cands;
  // How far (as a fraction of the mass) the top_p decision was from going the other way; float
  // exps cannot reproduce a decision closer than about 1e-7.
  double top_p_margin = std::numeric_limits<double>::infinity();
};

// Every finite logit (+inf as the largest float), ranked: logit descending, then id ascending.
std::vector<RefCand> RefRank(const std::vector<float>& adjusted) {
  std::vector<RefCand> v;
  for (size_t i = 0; i < adjusted.size(); ++i) {
    float x = adjusted[i];
    if (std::isnan(x) || x == -kInf) continue;
    if (x == kInf) x = std::numeric_limits<float>::max();
    v.push_back({int32_t(i), x, 0.0, 0.0});
  }
  std::sort(v.begin(), v.end(), [](const RefCand& a, const RefCand& b) {
    return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
  });
  return v;
}

// The chain on a ranked list: top_k, top_p, min_p, temperature, softmax.
RefDist RefDistributionRanked(std::vector<RefCand> v, const SamplingParams& p) {
  RefDist out;
  if (v.empty()) return out;
  if (p.top_k > 0 && size_t(p.top_k) < v.size()) v.resize(size_t(p.top_k));
  const double m = v[0].logit;
  if (p.top_p < 1.0f) {
    double z = 0.0;
    for (const RefCand& c : v) z += std::exp(double(c.logit) - m);
    const double target = double(p.top_p) * z;
    double cum = 0.0;
    for (size_t j = 0; j < v.size(); ++j) {
      const double e = std::exp(double(v[j].logit) - m);
      cum += e;
      if (cum >= target) {
        out.top_p_margin = std::min(cum - target, target - (cum - e)) / z;
        v.resize(j + 1);
        break;
      }
    }
  }
  if (p.min_p > 0.0f) {
    const double threshold = std::log(double(p.min_p));
    size_t keep = 0;
    while (keep < v.size() && double(v[keep].logit) - m >= threshold) ++keep;
    v.resize(keep);
  }
  const double t = p.temperature;
  double s = 0.0;
  for (const RefCand& c : v) s += std::exp((double(c.logit) - m) / t);
  for (RefCand& c : v) {
    c.logprob = (double(c.logit) - m) / t - std::log(s);
    c.prob = std::exp(c.logprob);
  }
  out.cands = std::move(v);
  return out;
}

RefDist RefDistribution(const std::vector<float>& adjusted, const SamplingParams& p) {
  return RefDistributionRanked(RefRank(adjusted), p);
}

struct RefGreedy {
  int32_t token = -1;
  double logprob = 0.0;
  std::vector<RefCand> top;  // the 5 most likely, log-softmax at temperature 1
};

RefGreedy RefArgmax(const std::vector<float>& adjusted) {
  RefGreedy g;
  float m = -kInf;
  for (size_t i = 0; i < adjusted.size(); ++i) {
    if (adjusted[i] > m) {  // strict: the first of equal maxima wins; NaN never compares
      m = adjusted[i];
      g.token = int32_t(i);
    }
  }
  if (g.token < 0) return g;
  double z = 0.0;
  std::vector<RefCand> finite;
  for (size_t i = 0; i < adjusted.size(); ++i) {
    if (std::isnan(adjusted[i]) || adjusted[i] == -kInf) continue;
    z += std::exp(double(adjusted[i]) - double(m));
    finite.push_back({int32_t(i), adjusted[i], 0.0, 0.0});
  }
  g.logprob = -std::log(z);
  const size_t n_top = std::min<size_t>(5, finite.size());
  std::partial_sort(finite.begin(), finite.begin() + long(n_top), finite.end(),
                    [](const RefCand& a, const RefCand& b) {
                      return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
                    });
  for (size_t j = 0; j < n_top; ++j) {
    RefCand c = finite[j];
    c.logprob = double(c.logit) - double(m) - std::log(z);
    g.top.push_back(c);
  }
  return g;
}

bool SameBits(const std::vector<TokenLogprob>& a, const std::vector<TokenLogprob>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].token != b[i].token || std::memcmp(&a[i].logprob, &b[i].logprob, sizeof(float)) != 0) {
      return false;
    }
  }
  return true;
}

double LogprobTolerance(double ref) { return 1e-5 * std::max(1.0, std::fabs(ref)); }

// Compares the sampler's final distribution with the reference; returns false (and counts a
// skip) when the reference's top_p decision is too close to call in float.
bool ExpectMatchesReference(const std::vector<float>& raw, const SamplingParams& p,
                            const std::vector<int32_t>& context,
                            const std::vector<int32_t>& suppress, const std::string& what,
                            const std::vector<RefCand>* ranked = nullptr) {
  const int n = int(raw.size());
  // `ranked`: RefRank(raw), shared by the configurations of one row (no adjustments then).
  const RefDist ref = ranked != nullptr ? RefDistributionRanked(*ranked, p)
                                        : RefDistribution(RefAdjust(raw, p, context, suppress), p);
  if (ref.top_p_margin < 1e-7) return false;
  Sampler sampler(p, n, 1);
  std::vector<float> work = raw;
  const std::vector<TokenLogprob> got = sampler.FinalDistribution(work.data(), context, suppress);
  if (p.top_p < 1.0f && p.top_k <= 0) {
    // The second call starts from the cut the first one saw (another route to the same cut).
    work = raw;
    const std::vector<TokenLogprob> again =
        sampler.FinalDistribution(work.data(), context, suppress);
    EXPECT_TRUE(SameBits(got, again)) << what << ": second call differs";
  }
  if (got.size() != ref.cands.size()) {
    ADD_FAILURE() << what << ": " << got.size() << " candidates, reference has "
                  << ref.cands.size();
    return true;
  }
  for (size_t j = 0; j < got.size(); ++j) {
    const RefCand& r = ref.cands[j];
    if (got[j].token != r.id || std::fabs(std::exp(double(got[j].logprob)) - r.prob) > 1e-6 ||
        std::fabs(double(got[j].logprob) - r.logprob) > LogprobTolerance(r.logprob)) {
      ADD_FAILURE() << what << ": rank " << j << " got token " << got[j].token << " logprob "
                    << got[j].logprob << ", reference token " << r.id << " logprob " << r.logprob;
      return true;
    }
  }
  return true;
}

SamplingParams Params(float temperature, int top_k = 0, float top_p = 1.0f, float min_p = 0.0f) {
  SamplingParams p;
  p.temperature = temperature;
  p.top_k = top_k;
  p.top_p = top_p;
  p.min_p = min_p;
  return p;
}

std::string Describe(const SamplingParams& p, int n, uint64_t seed, Kind kind) {
  char buf[200];
  std::snprintf(buf, sizeof(buf), "n=%d seed=%llu kind=%d T=%g top_k=%d top_p=%g min_p=%g", n,
                static_cast<unsigned long long>(seed), int(kind), double(p.temperature), p.top_k,
                double(p.top_p), double(p.min_p));
  return buf;
}

// ---------------------------------------------------------------------------------------------

TEST(SamplerTest, GreedyMatchesArgmax) {
  const std::vector<int> sizes = {1, 7, 1000, kQwenVocab};
  const int seeds = Small() ? 2 : 4;
  int checked = 0;
  for (const int n : sizes) {
    for (uint64_t seed = 1; seed <= uint64_t(seeds); ++seed) {
      for (const Kind kind : {Kind::kNormal, Kind::kTies, Kind::kSpecial}) {
        if (n == 1 && kind == Kind::kSpecial) continue;  // its only logit would be NaN
        const std::vector<float> raw = RandomLogits(n, seed * 31 + uint64_t(n), 3.0f, kind);
        SamplingParams p = Params(0.0f);
        p.logprobs = true;
        p.top_logprobs = 5;
        Sampler sampler(p, n, 0);
        std::vector<float> work = raw;
        const SampleResult res = sampler.Sample(work.data(), {});
        const RefGreedy ref = RefArgmax(raw);
        const std::string what = Describe(p, n, seed, kind);
        ASSERT_EQ(res.token, ref.token) << what;
        EXPECT_NEAR(res.logprob, ref.logprob, LogprobTolerance(ref.logprob)) << what;
        ASSERT_EQ(res.top.size(), ref.top.size()) << what;
        for (size_t j = 0; j < res.top.size(); ++j) {
          EXPECT_EQ(res.top[j].token, ref.top[j].id) << what << " rank " << j;
          EXPECT_NEAR(res.top[j].logprob, ref.top[j].logprob, LogprobTolerance(ref.top[j].logprob))
              << what << " rank " << j;
        }
        // Without logprobs the answer is the same (the cheap path).
        SamplingParams plain = Params(0.0f);
        Sampler fast(plain, n, 0);
        std::vector<float> work2 = raw;
        EXPECT_EQ(fast.Sample(work2.data(), {}).token, ref.token) << what;
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, int(sizes.size()) * seeds * 3 - seeds);  // n = 1 skips one kind
}

TEST(SamplerTest, GreedyTiesPickLowestIdAndSkipNaN) {
  std::vector<float> l = {kNaN, 1.0f, 3.0f, kNaN, 3.0f, 2.0f};
  Sampler sampler(Params(0.0f), int(l.size()), 0);
  EXPECT_EQ(sampler.Sample(l.data(), {}).token, 2);
  std::vector<float> l2 = {kNaN, -kInf, 5.0f};
  Sampler s2(Params(0.0f), 3, 0);
  EXPECT_EQ(s2.Sample(l2.data(), {}).token, 2);
}

TEST(SamplerTest, TruncationsMatchReference) {
  const std::vector<SamplingParams> configs = {
      Params(1.0f),                       // the whole vocabulary
      Params(0.8f, 40),                   // small top_k (selection path)
      Params(0.8f, 0, 0.9f),              // top_p over the whole vocabulary
      Params(1.0f, 0, 1.0f, 0.05f),       // min_p
      Params(0.7f, 2000, 0.95f),          // large top_k then top_p (histogram path)
      Params(1.3f, 50, 0.5f, 0.1f),       // all three
      Params(0.5f, 0, 0.3f, 0.02f),       // top_p then min_p
      Params(2.0f, 5000),                 // large top_k alone
      Params(0.9f, 1),                    // top_k 1
      Params(1.0f, 0, 0.999f),            // top_p close to 1
      Params(0.05f, 0, 0.9f),             // low temperature
      Params(1.0f, 3000, 1.0f, 0.001f),   // large top_k then min_p
      Params(1.0f, 0, 0.02f),             // top_p so low only the max survives
      Params(1.0f, 0, 1.0f, 1.0f),        // min_p 1: only the max (and its ties)
      Params(0.8f, 200000, 0.9f, 0.01f),  // top_k beyond the vocabulary: disabled
      Params(1.0f, 0, 1.0f, 1e-6f),       // min_p keeping thousands (histogram route)
  };
  struct Size {
    int n;
    int seeds;
  };
  std::vector<Size> sizes = {{7, 8}, {1000, 4}, {kQwenVocab, 2}};
  if (Small()) sizes = {{7, 3}, {1000, 2}, {kQwenVocab, 1}};
  int checked = 0, skipped = 0;
  for (const Size& size : sizes) {
    for (int seed = 1; seed <= size.seeds; ++seed) {
      for (const Kind kind : {Kind::kNormal, Kind::kTies, Kind::kSpecial}) {
        if (size.n == kQwenVocab && kind == Kind::kSpecial && Small()) continue;
        const std::vector<float> raw =
            RandomLogits(size.n, uint64_t(seed) * 1000 + uint64_t(size.n), 3.0f, kind);
        const std::vector<RefCand> ranked = RefRank(raw);
        for (const SamplingParams& p : configs) {
          if (ExpectMatchesReference(raw, p, {}, {}, Describe(p, size.n, uint64_t(seed), kind),
                                     &ranked)) {
            ++checked;
          } else {
            ++skipped;
          }
          if (testing::Test::HasFailure()) return;
        }
      }
    }
  }
  EXPECT_GT(checked, 100);
  EXPECT_LE(skipped, checked / 50) << "too many top_p decisions too close to call";
}

TEST(SamplerTest, TruncationsMatchReferenceOnOtherShapes) {
  // LLM-like rows (a few large logits over a wide tail: tiny candidate sets) and very wide rows
  // (logits spread over hundreds of units: the last histogram bucket, d >= 64, is populated).
  const int n = Small() ? 5000 : kQwenVocab;
  for (uint64_t seed = 1; seed <= 2; ++seed) {
    for (const bool wide : {false, true}) {
      const std::vector<float> raw =
          wide ? RandomLogits(n, seed + 50, 40.0f) : PeakedLogits(n, seed);
      const std::vector<RefCand> ranked = RefRank(raw);
      for (const SamplingParams& p :
           {Params(1.0f, 0, 0.9f), Params(0.7f, 0, 0.95f, 0.05f), Params(1.0f, 40, 0.9f),
            Params(1.0f, 0, 1.0f, 0.1f), Params(1.5f), Params(30.0f, 0, 0.999f),
            Params(20.0f, 3000), Params(1.0f, 0, 1.0f, 1e-30f)}) {
        ExpectMatchesReference(raw, p, {}, {},
                               Describe(p, n, seed, Kind::kNormal) + (wide ? " wide" : " peaked"),
                               &ranked);
      }
    }
  }
}

TEST(SamplerTest, PenaltiesAndBiasChangeExactlyTheExpectedLogits) {
  // Hand-computed case first, so the reference itself is pinned.
  {
    SamplingParams p = Params(1.0f);
    p.repetition_penalty = 2.0f;
    p.presence_penalty = 0.5f;
    p.frequency_penalty = 0.25f;
    p.penalty_last_n = 4;
    p.logit_bias = {{4, 1.5f}, {0, -1.0f}};
    std::vector<float> l = {2.0f, -1.0f, 3.0f, 0.5f, -4.0f};
    // Window = last 4: {1, 1, 3, 1}; token 2 is outside it.
    const std::vector<int32_t> context = {2, 2, 1, 1, 3, 1};
    Sampler sampler(p, 5, 0);
    sampler.ApplyAdjustments(l.data(), context, {});
    EXPECT_EQ(l[0], 1.0f);    // bias only
    EXPECT_EQ(l[1], -3.25f);  // negative: * 2, then - (3 * 0.25 + 0.5): count 3
    EXPECT_EQ(l[2], 3.0f);    // outside the window
    EXPECT_EQ(l[3], -0.5f);   // positive: / 2, then - (1 * 0.25 + 0.5): count 1
    EXPECT_EQ(l[4], -2.5f);   // bias only
  }
  // Random cases against the reference, bit for bit.
  const int n = 500;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    SamplerRng rng(seed);
    SamplingParams p = Params(1.0f);
    p.repetition_penalty = 0.5f + float(rng.NextDouble()) * 1.5f;
    p.presence_penalty = float(rng.NextDouble() * 4.0 - 2.0);
    p.frequency_penalty = float(rng.NextDouble() * 4.0 - 2.0);
    const int last_n_choices[] = {-1, 0, 1, 8, 64, 1000};
    p.penalty_last_n = last_n_choices[seed % 6];
    for (int j = 0; j < 5; ++j) {
      p.logit_bias.push_back({int32_t(rng.Next() % n), float(rng.NextDouble() * 20 - 10)});
    }
    std::vector<int32_t> context;
    const int len = int(rng.Next() % 300);
    for (int j = 0; j < len; ++j) context.push_back(int32_t(rng.Next() % 40));  // many repeats
    std::vector<int32_t> suppress = {int32_t(rng.Next() % n), int32_t(rng.Next() % 40)};
    const std::vector<float> raw = RandomLogits(n, seed, 3.0f);
    const std::vector<float> want = RefAdjust(raw, p, context, suppress);
    std::vector<float> got = raw;
    Sampler sampler(p, n, 0);
    sampler.ApplyAdjustments(got.data(), context, suppress);
    int changed = 0;
    for (int i = 0; i < n; ++i) {
      ASSERT_EQ(std::memcmp(&got[size_t(i)], &want[size_t(i)], sizeof(float)), 0)
          << "seed " << seed << " token " << i << ": " << got[size_t(i)] << " vs "
          << want[size_t(i)];
      changed += got[size_t(i)] != raw[size_t(i)];
    }
    EXPECT_GT(changed, 0);
    // The whole chain sees the adjusted logits.
    p.temperature = 0.9f;
    p.top_p = 0.95f;
    ExpectMatchesReference(raw, p, context, suppress, "penalised seed " + std::to_string(seed));
  }
}

TEST(SamplerTest, PenaltyOffLeavesLogitsAlone) {
  SamplingParams p = Params(1.0f);
  p.repetition_penalty = 1.3f;
  p.frequency_penalty = 1.0f;
  p.penalty_last_n = 0;
  std::vector<float> l = RandomLogits(50, 3, 3.0f);
  const std::vector<float> before = l;
  Sampler sampler(p, 50, 0);
  sampler.ApplyAdjustments(l.data(), std::vector<int32_t>{1, 2, 3, 3}, {});
  EXPECT_EQ(l, before);
}

TEST(SamplerTest, SuppressedTokensAreNeverChosen) {
  const int n = 50;
  std::vector<float> raw = RandomLogits(n, 5, 1.0f);
  raw[7] = 20.0f;
  raw[8] = 19.0f;
  raw[30] = 19.5f;
  const std::vector<int32_t> suppress = {7, 8, 30};
  for (const SamplingParams& p : {Params(0.0f), Params(1.0f), Params(2.0f, 3),
                                  Params(1.0f, 0, 0.5f), Params(5.0f, 0, 1.0f, 0.01f)}) {
    Sampler sampler(p, n, 9);
    for (int i = 0; i < 500; ++i) {
      std::vector<float> work = raw;
      const int32_t t = sampler.Sample(work.data(), {}, suppress).token;
      ASSERT_TRUE(t != 7 && t != 8 && t != 30) << Describe(p, n, 9, Kind::kNormal);
      ASSERT_TRUE(t >= 0 && t < n);
    }
  }
}

TEST(SamplerTest, NoFiniteLogitFallsBackToLowestAllowedId) {
  for (const SamplingParams& p :
       {Params(0.0f), Params(1.0f), Params(1.0f, 2), Params(1.0f, 0, 0.5f)}) {
    std::vector<float> l = {-kInf, kNaN, -kInf, -kInf, 1.0f};
    Sampler sampler(p, 5, 0);
    const SampleResult r = sampler.Sample(l.data(), {}, std::vector<int32_t>{4, 0, 1});
    EXPECT_EQ(r.token, 2);
    EXPECT_EQ(r.logprob, -kInf);
    EXPECT_TRUE(r.top.empty());
    std::vector<float> l2 = {1.0f, 2.0f};
    Sampler s2(p, 2, 0);
    EXPECT_EQ(s2.Sample(l2.data(), {}, std::vector<int32_t>{0, 1}).token, 0);
  }
}

TEST(SamplerTest, InfiniteLogitTakesAllTheMass) {
  std::vector<float> raw = RandomLogits(300, 4, 3.0f);
  raw[123] = kInf;
  for (const SamplingParams& p :
       {Params(0.0f), Params(1.0f), Params(1.0f, 10), Params(1.0f, 0, 0.9f)}) {
    std::vector<float> work = raw;
    Sampler sampler(p, 300, 0);
    EXPECT_EQ(sampler.Sample(work.data(), {}).token, 123);
  }
}

// A 200-token run where each step's logits depend on the step and the context, as in decoding.
std::vector<int32_t> Generate(const SamplingParams& p, uint64_t ctor_seed, int steps, int n) {
  Sampler sampler(p, n, ctor_seed);
  std::vector<int32_t> context = {1, 2, 3};
  std::vector<int32_t> out;
  for (int step = 0; step < steps; ++step) {
    std::vector<float> logits =
        RandomLogits(n, uint64_t(step) * 7919 + uint64_t(context.back()), 2.0f);
    const int32_t t = sampler.Sample(logits.data(), context).token;
    context.push_back(t);
    out.push_back(t);
  }
  return out;
}

TEST(SamplerTest, SeededRunsReproduce) {
  const int n = 1000;
  const int steps = 200;
  SamplingParams p = Params(0.8f, 0, 0.9f);
  p.repetition_penalty = 1.1f;
  p.seed = 42;
  const std::vector<int32_t> a = Generate(p, 1, steps, n);
  EXPECT_EQ(a, Generate(p, 2, steps, n)) << "params.seed must override the engine's seed";
  SamplingParams q = p;
  q.seed = 43;
  const std::vector<int32_t> b = Generate(q, 1, steps, n);
  EXPECT_NE(a, b);
  int same = 0;
  for (int i = 0; i < steps; ++i) same += a[size_t(i)] == b[size_t(i)];
  EXPECT_LT(same, steps / 2);
  // Without params.seed the engine's seed decides.
  SamplingParams r = p;
  r.seed.reset();
  EXPECT_EQ(Generate(r, 5, steps, n), Generate(r, 5, steps, n));
  EXPECT_NE(Generate(r, 5, steps, n), Generate(r, 6, steps, n));
  EXPECT_EQ(Sampler(r, n, 5).seed(), 5u);
  EXPECT_EQ(Sampler(p, n, 5).seed(), 42u);
  // Other paths reproduce as well (selection and histogram).
  for (const SamplingParams& base :
       {Params(1.0f, 40), Params(1.2f), Params(1.0f, 0, 1.0f, 0.02f)}) {
    SamplingParams s = base;
    s.seed = 7;
    EXPECT_EQ(Generate(s, 0, 50, n), Generate(s, 1, 50, n));
  }
}

TEST(SamplerRngTest, PinnedStream) {
  // Pinned so a change of generator (which would change every seeded request) is noticed.
  // (splitmix64 seeding; values checked against an independent implementation of the published
  // algorithms.)
  SamplerRng a(0);
  EXPECT_EQ(a.Next(), 0x99ec5f36cb75f2b4ULL);
  EXPECT_EQ(a.Next(), 0xbf6e1f784956452aULL);
  EXPECT_EQ(a.Next(), 0x1a5f849d4933e6e0ULL);
  SamplerRng c(12345);
  EXPECT_EQ(c.Next(), 0xbe6a36374160d49bULL);
  EXPECT_EQ(c.Next(), 0x214aaa0637a688c6ULL);
  SamplerRng e(12345);
  EXPECT_EQ(e.NextDouble(), double(0xbe6a36374160d49bULL >> 11) * 0x1.0p-53);
  SamplerRng d(1);
  for (int i = 0; i < 1000; ++i) {
    const double u = d.NextDouble();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
  }
}

// Draws `draws` tokens and checks each frequency against `want` within 5 sigma.
void ExpectFrequencies(const SamplingParams& p, const std::vector<float>& logits,
                       const std::vector<double>& want, int draws) {
  const int n = int(logits.size());
  Sampler sampler(p, n, 2024);
  std::vector<int> counts(size_t(n), 0);
  for (int i = 0; i < draws; ++i) {
    std::vector<float> work = logits;
    ++counts[size_t(sampler.Sample(work.data(), {}).token)];
  }
  for (int t = 0; t < n; ++t) {
    const double expect = want[size_t(t)] * draws;
    const double sigma = std::sqrt(draws * want[size_t(t)] * (1.0 - want[size_t(t)]));
    if (want[size_t(t)] == 0.0) {
      EXPECT_EQ(counts[size_t(t)], 0) << "token " << t;
    } else {
      EXPECT_NEAR(counts[size_t(t)], expect, 5.0 * sigma + 1.0)
          << "token " << t << " " << Describe(p, n, 2024, Kind::kNormal);
    }
  }
}

TEST(SamplerTest, EmpiricalFrequenciesMatchTheDistribution) {
  const std::vector<double> probs = {0.05, 0.5, 0.01, 0.2, 0.15, 0.09};
  std::vector<float> logits;
  for (const double q : probs) logits.push_back(float(std::log(q) + 3.0));
  const int draws = Small() ? 5000 : 20000;
  ExpectFrequencies(Params(1.0f), logits, probs, draws);
  // Temperature 0.5 squares the probabilities.
  std::vector<double> squared;
  double s = 0.0;
  for (const double q : probs) s += q * q;
  for (const double q : probs) squared.push_back(q * q / s);
  ExpectFrequencies(Params(0.5f), logits, squared, draws);
  // top_k 3 renormalises the three largest (0.5, 0.2, 0.15).
  ExpectFrequencies(Params(1.0f, 3), logits, {0, 0.5 / 0.85, 0, 0.2 / 0.85, 0.15 / 0.85, 0}, draws);
  // top_p 0.75 keeps 0.5 + 0.2 + 0.15 as well (0.7 < 0.75 <= 0.85).
  ExpectFrequencies(Params(1.0f, 0, 0.75f), logits, {0, 0.5 / 0.85, 0, 0.2 / 0.85, 0.15 / 0.85, 0},
                    draws);
}

TEST(SamplerTest, SampleAgreesWithFinalDistribution) {
  const std::vector<SamplingParams> configs = {Params(0.8f, 40), Params(0.8f, 0, 0.9f),
                                               Params(1.0f, 0, 1.0f, 0.05f), Params(1.0f)};
  const int n = Small() ? 20000 : kQwenVocab;
  for (SamplingParams p : configs) {
    p.logprobs = true;
    p.top_logprobs = 20;
    const std::vector<float> raw = RandomLogits(n, 99, 3.0f);
    Sampler dist_sampler(p, n, 0);
    std::vector<float> work = raw;
    const std::vector<TokenLogprob> dist = dist_sampler.FinalDistribution(work.data(), {});
    const RefDist ref = RefDistribution(raw, p);
    ASSERT_EQ(dist.size(), ref.cands.size());
    Sampler sampler(p, n, 11);
    for (int draw = 0; draw < 5; ++draw) {
      std::vector<float> w = raw;
      const SampleResult r = sampler.Sample(w.data(), {});
      const auto it = std::find_if(dist.begin(), dist.end(),
                                   [&](const TokenLogprob& c) { return c.token == r.token; });
      ASSERT_NE(it, dist.end()) << "sampled a token outside the candidates";
      const RefCand& rc = ref.cands[size_t(it - dist.begin())];
      EXPECT_NEAR(r.logprob, rc.logprob, LogprobTolerance(rc.logprob));
      ASSERT_EQ(r.top.size(), std::min<size_t>(20, ref.cands.size()));
      for (size_t j = 0; j < r.top.size(); ++j) {
        EXPECT_EQ(r.top[j].token, ref.cands[j].id);
        EXPECT_NEAR(r.top[j].logprob, ref.cands[j].logprob, LogprobTolerance(ref.cands[j].logprob));
      }
    }
  }
  // Fewer candidates than top_logprobs: only the candidates are listed.
  SamplingParams p = Params(1.0f, 2);
  p.top_logprobs = 5;
  std::vector<float> l = {1.0f, 3.0f, 2.0f, 0.0f};
  Sampler sampler(p, 4, 0);
  const SampleResult r = sampler.Sample(l.data(), {});
  ASSERT_EQ(r.top.size(), 2u);
  EXPECT_EQ(r.top[0].token, 1);
  EXPECT_EQ(r.top[1].token, 2);
  EXPECT_NEAR(r.top[0].logprob, -std::log1p(std::exp(-1.0)), 1e-6);
}

TEST(SamplerTest, HistoryOnlyChangesTheRouteNotTheResult) {
  // top_p remembers how far below the max its last cut was and gathers that far first; a sampler
  // that has seen peaked rows (short guess) or flat ones (long guess) must give the same bits as a
  // fresh one.
  const int n = Small() ? 20000 : kQwenVocab;
  const std::vector<float> flat = RandomLogits(n, 5, 3.0f);
  const std::vector<float> peaked = PeakedLogits(n, 6);
  for (const SamplingParams& p : {Params(0.8f, 0, 0.9f), Params(1.0f, 0, 0.5f, 0.01f)}) {
    for (const std::vector<float>* target : {&flat, &peaked}) {
      std::vector<std::vector<TokenLogprob>> results;
      for (const std::vector<float>* history :
           {(const std::vector<float>*)nullptr, &peaked, &flat}) {
        Sampler sampler(p, n, 3);
        for (int i = 0; history != nullptr && i < 2; ++i) {
          std::vector<float> w = *history;
          sampler.FinalDistribution(w.data(), {});
        }
        std::vector<float> w = *target;
        results.push_back(sampler.FinalDistribution(w.data(), {}));
      }
      EXPECT_TRUE(SameBits(results[0], results[1]));
      EXPECT_TRUE(SameBits(results[0], results[2]));
      EXPECT_FALSE(results[0].empty());
    }
  }
}

TEST(SamplerTest, SimdTiersAgreeBitForBit) {
  if (!IsaSupported(Isa::kAvx2)) GTEST_SKIP() << "no AVX2 on this machine";
  const Isa saved = ActiveIsa();
  const int n = Small() ? 20000 : kQwenVocab;
  const std::vector<std::vector<float>> rows = {RandomLogits(n, 8, 3.0f, Kind::kSpecial),
                                                PeakedLogits(n, 9)};
  std::vector<SamplingParams> configs = {Params(0.0f),
                                         Params(1.0f),
                                         Params(0.8f, 40),
                                         Params(0.8f, 0, 0.9f),
                                         Params(1.0f, 0, 1, 0.05f),
                                         Params(0.7f, 2000, 0.95f)};
  for (SamplingParams& p : configs) {
    p.logprobs = true;
    p.top_logprobs = 5;
  }
  auto run = [&](Isa isa) {
    SetIsaForTesting(isa);
    std::vector<std::vector<TokenLogprob>> out;
    for (const SamplingParams& p : configs) {
      Sampler sampler(p, n, 77);
      for (const std::vector<float>& row : rows) {
        std::vector<float> w = row;
        out.push_back(sampler.FinalDistribution(w.data(), {}));
        for (int draw = 0; draw < 3; ++draw) {
          w = row;
          const SampleResult r = sampler.Sample(w.data(), {});
          out.push_back({{r.token, r.logprob}});
          out.push_back(r.top);
        }
      }
    }
    return out;
  };
  const auto scalar = run(Isa::kScalar);
  const auto avx2 = run(Isa::kAvx2);
  SetIsaForTesting(saved);
  ASSERT_EQ(scalar.size(), avx2.size());
  for (size_t i = 0; i < scalar.size(); ++i) {
    EXPECT_TRUE(SameBits(scalar[i], avx2[i])) << "result " << i;
  }
}

TEST(SamplerTest, ValidateRejectsEachBadField) {
  const int n = 100;
  EXPECT_TRUE(ValidateSamplingParams(SamplingParams(), n).ok());
  {
    SamplingParams edge;
    edge.temperature = 0.0f;
    edge.top_p = 1.0f;
    edge.min_p = 1.0f;
    edge.presence_penalty = -2.0f;
    edge.frequency_penalty = 2.0f;
    edge.penalty_last_n = -1;
    edge.top_logprobs = 20;
    edge.top_k = -5;
    edge.logit_bias = {{0, -100.0f}, {99, 100.0f}};
    const Status st = ValidateSamplingParams(edge, n);
    EXPECT_TRUE(st.ok()) << st.message();
  }
  struct Bad {
    std::function<void(SamplingParams&)> mutate;
    std::string field, value;
  };
  const std::vector<Bad> bads = {
      {[](SamplingParams& p) { p.temperature = -0.5f; }, "temperature", "-0.5"},
      {[](SamplingParams& p) { p.temperature = kInf; }, "temperature", "inf"},
      {[](SamplingParams& p) { p.temperature = kNaN; }, "temperature", "nan"},
      {[](SamplingParams& p) { p.top_p = 0.0f; }, "top_p", "0"},
      {[](SamplingParams& p) { p.top_p = 1.5f; }, "top_p", "1.5"},
      {[](SamplingParams& p) { p.top_p = kNaN; }, "top_p", "nan"},
      {[](SamplingParams& p) { p.min_p = -0.1f; }, "min_p", "-0.1"},
      {[](SamplingParams& p) { p.min_p = 1.25f; }, "min_p", "1.25"},
      {[](SamplingParams& p) { p.repetition_penalty = 0.0f; }, "repetition_penalty", "0"},
      {[](SamplingParams& p) { p.repetition_penalty = kInf; }, "repetition_penalty", "inf"},
      {[](SamplingParams& p) { p.presence_penalty = 2.5f; }, "presence_penalty", "2.5"},
      {[](SamplingParams& p) { p.presence_penalty = kNaN; }, "presence_penalty", "nan"},
      {[](SamplingParams& p) { p.frequency_penalty = -3.0f; }, "frequency_penalty", "-3"},
      {[](SamplingParams& p) { p.penalty_last_n = -2; }, "penalty_last_n", "-2"},
      {[](SamplingParams& p) { p.top_logprobs = 21; }, "top_logprobs", "21"},
      {[](SamplingParams& p) { p.top_logprobs = -1; }, "top_logprobs", "-1"},
      {[](SamplingParams& p) {
         p.logit_bias = {{100, 1.0f}};
       },
       "logit_bias", "100"},
      {[](SamplingParams& p) {
         p.logit_bias = {{-1, 1.0f}};
       },
       "logit_bias", "-1"},
      {[](SamplingParams& p) {
         p.logit_bias = {{5, kNaN}};
       },
       "logit_bias", "nan"},
  };
  for (const Bad& bad : bads) {
    SamplingParams p;
    bad.mutate(p);
    const Status st = ValidateSamplingParams(p, n);
    ASSERT_FALSE(st.ok()) << bad.field << " = " << bad.value;
    EXPECT_NE(st.message().find(bad.field), std::string::npos) << st.message();
    EXPECT_NE(st.message().find(bad.value), std::string::npos) << st.message();
  }
}

}  // namespace
}  // namespace brisk
