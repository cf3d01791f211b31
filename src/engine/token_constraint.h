// Constrained decoding: a per-request rule about which tokens may come next (a JSON Schema, a
// regex, a grammar: engine/grammar_constraint.h). The engine samples as usual and checks the
// token; only when the rule refuses it does it mask every refused token and sample once more —
// or masks first when the rule has the mask at hand (cheaper than a draw that may be wasted).
#pragma once

#include <cstdint>
#include <limits>

namespace brisk {

class TokenConstraint {
 public:
  virtual ~TokenConstraint() = default;
  // Whether `token` may be generated next (end-of-generation tokens included). Must not change
  // the state. A request's constraint is used by one thread at a time (a compute-pool thread
  // while its row is sampled).
  virtual bool Allows(int32_t token) const = 0;
  // `token` was generated (Allows returned true for it).
  virtual void Accept(int32_t token) = 0;
  // The request may generate at most max_tokens more tokens (the engine says so before the
  // first step): a constraint that can plan for it keeps its output complete at the length limit.
  virtual void SetMaxTokens(int max_tokens) { (void)max_tokens; }
  // Sets logits[t] to -inf for every token t < n_vocab that Allows refuses. This default asks
  // Allows for each; constraints with a faster way override it.
  virtual void MaskLogits(float* logits, int n_vocab) const {
    for (int32_t t = 0; t < n_vocab; ++t)
      if (!Allows(t)) logits[t] = -std::numeric_limits<float>::infinity();
  }
  // MaskLogits is cheap now (e.g. cached for this position): the engine masks before the first
  // draw instead of drawing, checking and maybe drawing again.
  virtual bool MaskReady() const { return false; }
};

}  // namespace brisk
