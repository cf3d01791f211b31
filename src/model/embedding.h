// Embeddings and rerank scores from a final-normed hidden state (the last token's, after the
// output RMSNorm; docs/embeddings.md). Plain math, shared by the server and the tests' references.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "model/model.h"
#include "tokenizer/tokenizer.h"
#include "util/status.h"

namespace brisk {

// The first `dimensions` components of `hidden` (Matryoshka truncation, as the Qwen3-Embedding
// card defines it), then L2-normalised; all of them when dimensions <= 0. A zero vector stays
// zero.
std::vector<float> PoolEmbedding(std::span<const float> hidden, int dimensions = 0);

// Qwen3-Reranker's score: P("yes") against "no" at the last position, softmax over the two
// lm_head logits = sigmoid(l_yes - l_no). The two rows come from llama.cpp's cls.output.weight
// when the file has it, else from the lm_head (output.weight, or the tied token_embd) rows of the
// tokens "yes" and "no"; they are dequantized once, here.
class RerankHead {
 public:
  static Result<RerankHead> Create(const Model& model, const Tokenizer& tokenizer);

  double Score(std::span<const float> hidden) const;
  // The two logits, for tests and logs.
  double YesLogit(std::span<const float> hidden) const;
  double NoLogit(std::span<const float> hidden) const;
  int32_t yes_id() const { return yes_id_; }
  int32_t no_id() const { return no_id_; }

 private:
  int32_t yes_id_ = -1, no_id_ = -1;
  std::vector<float> yes_, no_;
};

}  // namespace brisk
