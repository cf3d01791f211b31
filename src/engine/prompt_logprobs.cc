#include "engine/prompt_logprobs.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "engine/vocab_ops.h"

namespace brisk {
namespace {

float Clean(float x) { return std::isnan(x) ? -std::numeric_limits<float>::infinity() : x; }

// The `top` largest logits, best first, by one pass with a small sorted list.
std::vector<vocab::LogitId> TopLogits(const float* logits, int n_vocab, int top) {
  std::vector<vocab::LogitId> best;
  if (top <= 0) return best;
  best.reserve(size_t(top) + 1);
  const vocab::RankOrder before;
  for (int32_t id = 0; id < n_vocab; ++id) {
    const vocab::LogitId c{Clean(logits[id]), id};
    if (int(best.size()) == top && !before(c, best.back())) continue;
    best.insert(std::upper_bound(best.begin(), best.end(), c, before), c);
    if (int(best.size()) > top) best.pop_back();
  }
  return best;
}

// log of the sum of e^l over the row (vocab::SumExp: fast exps, summed in double). Model logits
// are finite; a row without any finite logit gives -inf.
double LogSumExp(const float* logits, int n_vocab) {
  float m = -std::numeric_limits<float>::infinity();
  for (int i = 0; i < n_vocab; ++i) m = std::max(m, Clean(logits[i]));
  if (!std::isfinite(m)) return -std::numeric_limits<double>::infinity();
  return double(m) + std::log(vocab::SumExp(logits, n_vocab, m, vocab::UseAvx2()));
}

}  // namespace

TokenEvent ScoreToken(const float* logits, int n_vocab, int32_t token, int top) {
  const double lse = LogSumExp(logits, n_vocab);
  TokenEvent e;
  e.token = token;
  auto logprob = [&](float l) {
    return std::isfinite(lse) ? float(double(Clean(l)) - lse)
                              : -std::numeric_limits<float>::infinity();
  };
  e.logprob = logprob(logits[token]);
  for (const vocab::LogitId& c : TopLogits(logits, n_vocab, top))
    e.top.push_back({c.id, logprob(c.logit)});
  return e;
}

}  // namespace brisk
