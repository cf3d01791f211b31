// A contiguous float32 KV cache for one sequence: K and V of every layer for positions
// [0, capacity). (The paged, shared cache of the serving engine builds on the same layout.)
#pragma once

#include <vector>

#include "model/config.h"

namespace brisk {

class KvCache {
 public:
  KvCache(const ModelConfig& config, int capacity)
      : capacity_(capacity),
        n_layer_(config.n_layer),
        kv_dim_(config.kv_dim()),
        k_(size_t(config.n_layer) * capacity * config.kv_dim()),
        v_(k_.size()) {}

  int capacity() const { return capacity_; }
  int kv_dim() const { return kv_dim_; }
  float* k(int layer, int pos) { return &k_[Index(layer, pos)]; }
  float* v(int layer, int pos) { return &v_[Index(layer, pos)]; }
  const float* k(int layer, int pos) const { return &k_[Index(layer, pos)]; }
  const float* v(int layer, int pos) const { return &v_[Index(layer, pos)]; }

 private:
  size_t Index(int layer, int pos) const {
    return (size_t(layer) * capacity_ + size_t(pos)) * kv_dim_;
  }
  int capacity_, n_layer_, kv_dim_;
  std::vector<float> k_, v_;
};

}  // namespace brisk
