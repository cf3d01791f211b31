// Weights: views of every tensor a dense Qwen-family model needs, checked against ModelConfig.
// Data stays in the mmap'd file; nothing is copied or converted here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "formats/gguf.h"
#include "model/config.h"
#include "quant/types.h"

namespace brisk {

// A matrix of `rows` rows of `cols` contiguous values (GGUF ne = {cols, rows}), or a vector
// (rows == 1).
struct WeightTensor {
  std::string name;
  GgmlType type = GgmlType::kF32;
  const uint8_t* data = nullptr;
  int64_t cols = 0;
  int64_t rows = 0;
  size_t row_bytes() const { return RowBytes(type, cols); }
  const uint8_t* row(int64_t r) const { return data + size_t(r) * row_bytes(); }
  bool present() const { return data != nullptr; }
};

// Every value of t as floats (empty when t is absent): norms, biases and the reference paths.
std::vector<float> DequantizeAll(const WeightTensor& t);

struct LayerWeights {
  WeightTensor attn_norm, wq, wk, wv, wo, bq, bk, bv, q_norm, k_norm;
  WeightTensor ffn_norm, w_gate, w_up, w_down;
};

struct ModelWeights {
  WeightTensor token_embd;
  WeightTensor output_norm;
  WeightTensor output;  // == token_embd when embeddings are tied
  // Rerankers converted by llama.cpp: the lm_head rows of "yes" and "no", in that order
  // (cls.output.weight, [n_embd, 2]); absent otherwise.
  WeightTensor cls_output;
  std::vector<LayerWeights> layers;
};

// Finds every tensor the architecture needs and checks its shape; errors name the tensor, the
// expected and the found shape.
Result<ModelWeights> WeightsFromGguf(const gguf::File& file, const ModelConfig& config);

}  // namespace brisk
