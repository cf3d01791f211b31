// The reference CPU forward pass of dense Qwen2 / Qwen3 models (DESIGN §4), float math on
// dequantized weights. A call processes a run of consecutive positions of one sequence against
// its KV cache, so prefill(N) followed by decode steps equals one prefill(N + k).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "model/kv_cache.h"
#include "model/model.h"
#include "runtime/thread_pool.h"

namespace brisk {

class ReferenceForward {
 public:
  // Buffers are planned here, once, for up to max_batch_tokens positions per internal step;
  // longer inputs are processed in chunks of that size.
  ReferenceForward(const Model& model, ThreadPool& pool, int max_batch_tokens = 64);

  // Runs tokens at positions [start_pos, start_pos + tokens.size()) and writes the logits of
  // each position index in `logit_rows` (ascending, into `tokens`) as consecutive rows of
  // n_vocab floats. With `hidden`, also the final-normed hidden state of those rows (after the
  // output RMSNorm, before lm_head: what embedding models pool) as rows of n_embd floats;
  // `logits` may then be null to skip lm_head. Fails on token ids outside the vocabulary or
  // positions past the cache.
  Status Run(std::span<const int32_t> tokens, int start_pos, KvCache& kv,
             std::span<const int32_t> logit_rows, float* logits, float* hidden = nullptr);

 private:
  void Layer(int l, int n, int start_pos, KvCache& kv);
  void Attention(int l, int n, int start_pos, const KvCache& kv);

  const Model& model_;
  const ModelConfig& c_;
  ThreadPool& pool_;
  int max_tokens_;
  // Norm weights and biases converted to f32 once (they may be stored as F16/BF16).
  struct LayerVectors {
    std::vector<float> attn_norm, ffn_norm, bq, bk, bv, q_norm, k_norm;
  };
  std::vector<LayerVectors> lv_;
  std::vector<float> output_norm_;
  // Activations for up to max_tokens_ positions.
  std::vector<float> x_, h_, q_, k_, v_, att_, gate_, up_, tmp_, scores_, scratch_;
};

}  // namespace brisk
