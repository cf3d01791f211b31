// Synthetic models: the real architecture and the real Qwen2.5 vocabulary with seeded random
// weights, quantized with llama.cpp's per-tensor recipe. Compute does not depend on weight values,
// so a synthetic file runs at exactly the real model's speed; its text is noise.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "model/config.h"
#include "model/model.h"
#include "quant/recipe.h"
#include "util/status.h"

namespace brisk {

struct SynthShape {
  std::string name;  // "qwen2.5-0.5b", ...
  Arch arch;
  int n_embd, n_layer, n_head, n_head_kv, head_dim, n_ff, context_length;
  Pooling pooling = Pooling::kNone;  // written as <arch>.pooling_type unless none
};

// The shapes `brisk synth --shape` knows: qwen2.5-0.5b, qwen2.5-1.5b, qwen3-0.6b, tiny, and the
// tiny Qwen3 embedding model and reranker (qwen3-embedding-tiny, qwen3-reranker-tiny).
const std::vector<SynthShape>& SynthShapes();
Result<SynthShape> FindSynthShape(const std::string& name);

struct SynthOptions {
  std::string shape = "qwen2.5-0.5b";
  FileType type = FileType::kQ4_K_M;
  uint64_t seed = 1;
  // Replaces the shape's pooling. A rank model gets llama.cpp's cls.output.weight: copies of the
  // tied lm_head rows of "yes" and "no", so its scores are the lm_head's.
  std::optional<Pooling> pooling;
  int threads = 0;  // 0: all cores
  // Called with the fraction done (0..1) as tensors are generated.
  std::function<void(double)> progress;
};

// Writes the model to `path`. The same options give the same bytes (independent of threads).
Status WriteSynthModel(const SynthOptions& options, const std::string& path);

// GGUF key that marks synthetic files; every output made from such a model says so.
inline constexpr const char* kSyntheticKey = "brisk.synthetic";
bool IsSynthetic(const Model& model);
// The label every output made from a synthetic model carries.
inline constexpr const char* kSyntheticNotice =
    "note: synthetic model (random weights): its output is noise, its speed is real";

}  // namespace brisk
