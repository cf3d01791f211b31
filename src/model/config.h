// ModelConfig: the architecture hyper-parameters of a dense Qwen-family model, read from GGUF
// metadata. Plain data: it crosses every layer boundary.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "formats/gguf.h"
#include "util/status.h"

namespace brisk {

enum class Arch { kQwen2, kQwen3 };

// What the model's last hidden state is for (GGUF `<arch>.pooling_type`, llama.cpp's values):
// none = a generative model; last = an embedding model pooling its last token (Qwen3-Embedding);
// rank = a reranker scoring its last token (Qwen3-Reranker). mean and cls are read so a file that
// names them loads and is refused where it would be served (docs/embeddings.md).
enum class Pooling { kNone = 0, kMean = 1, kCls = 2, kLast = 3, kRank = 4 };
const char* PoolingName(Pooling p);  // "none", "mean", "cls", "last", "rank"
// "none" | "last" | "rank" (what brisk serves; mean and cls are refused by name).
Result<Pooling> ParsePooling(std::string_view name);

struct ModelConfig {
  Arch arch = Arch::kQwen2;
  std::string arch_name;  // "qwen2" / "qwen3" as in general.architecture
  std::string name;       // general.name, may be empty
  int n_embd = 0;
  int n_layer = 0;
  int n_head = 0;
  int n_head_kv = 0;
  int head_dim = 0;
  int n_ff = 0;
  int n_vocab = 0;
  int context_length = 0;
  double rope_theta = 1e6;
  double rms_eps = 1e-6;
  bool tied_embeddings = true;  // no output.weight: lm_head reuses token_embd
  bool qkv_bias = true;         // Qwen2: Q/K/V have biases
  bool qk_norm = false;         // Qwen3: per-head RMSNorm on q and k before RoPE
  Pooling pooling = Pooling::kNone;

  int q_dim() const { return n_head * head_dim; }
  int kv_dim() const { return n_head_kv * head_dim; }
  int group_size() const { return n_head / n_head_kv; }  // query heads per KV head
};

inline constexpr const char* kSupportedArchitectures = "qwen2, qwen3";

// Reads and validates the hyper-parameters. Refuses other architectures, naming the supported
// ones. (Tensor presence and shapes are checked by LoadWeights.)
Result<ModelConfig> ConfigFromGguf(const gguf::File& file);

}  // namespace brisk
