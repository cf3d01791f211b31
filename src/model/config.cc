#include "model/config.h"

namespace brisk {
namespace {

// Reads "<arch>.<suffix>" as a positive int no larger than `max`.
Status ReadDim(const gguf::File& f, const std::string& arch, const char* suffix, int64_t max,
               int* out) {
  const std::string key = arch + "." + suffix;
  BRISK_ASSIGN_OR_RETURN(uint64_t v, f.GetUInt(key));
  if (v == 0 || v > uint64_t(max))
    return Status::Error("metadata key '" + key + "' = " + std::to_string(v) +
                         " is out of range (1.." + std::to_string(max) + ")");
  *out = int(v);
  return Status::Ok();
}

// "<arch>.pooling_type": absent = none; values outside llama.cpp's enum are refused.
Status ReadPooling(const gguf::File& f, const std::string& arch, Pooling* out) {
  const std::string key = arch + ".pooling_type";
  if (!f.Find(key)) return Status::Ok();
  BRISK_ASSIGN_OR_RETURN(uint64_t v, f.GetUInt(key));
  if (v > uint64_t(Pooling::kRank))
    return Status::Error("metadata key '" + key + "' = " + std::to_string(v) +
                         " is not a pooling type (0 none, 1 mean, 2 cls, 3 last, 4 rank)");
  *out = Pooling(v);
  return Status::Ok();
}

}  // namespace

const char* PoolingName(Pooling p) {
  switch (p) {
    case Pooling::kNone:
      return "none";
    case Pooling::kMean:
      return "mean";
    case Pooling::kCls:
      return "cls";
    case Pooling::kLast:
      return "last";
    case Pooling::kRank:
      return "rank";
  }
  return "?";
}

Result<Pooling> ParsePooling(std::string_view name) {
  if (name == "none") return Pooling::kNone;
  if (name == "last") return Pooling::kLast;
  if (name == "rank") return Pooling::kRank;
  if (name == "mean" || name == "cls")
    return Status::Unimplemented(
        "pooling '" + std::string(name) +
        "' is not supported (brisk pools the last token: none, last, rank)");
  return Status::Error("unknown pooling '" + std::string(name) + "' (none, last, rank)");
}

Result<ModelConfig> ConfigFromGguf(const gguf::File& f) {
  ModelConfig c;
  BRISK_ASSIGN_OR_RETURN(c.arch_name, f.GetString("general.architecture"));
  if (c.arch_name == "qwen2") {
    c.arch = Arch::kQwen2;
    c.qkv_bias = true;
    c.qk_norm = false;
  } else if (c.arch_name == "qwen3") {
    c.arch = Arch::kQwen3;
    c.qkv_bias = false;
    c.qk_norm = true;
  } else {
    return Status::Error("unsupported architecture '" + c.arch_name +
                         "' (supported: " + kSupportedArchitectures + ")");
  }
  if (auto n = f.GetString("general.name"); n.ok()) c.name = *n;

  const std::string& a = c.arch_name;
  constexpr int64_t kMaxDim = 1 << 20;
  BRISK_RETURN_IF_ERROR(ReadDim(f, a, "embedding_length", kMaxDim, &c.n_embd));
  BRISK_RETURN_IF_ERROR(ReadDim(f, a, "block_count", 1024, &c.n_layer));
  BRISK_RETURN_IF_ERROR(ReadDim(f, a, "attention.head_count", 4096, &c.n_head));
  BRISK_RETURN_IF_ERROR(ReadDim(f, a, "attention.head_count_kv", 4096, &c.n_head_kv));
  BRISK_RETURN_IF_ERROR(ReadDim(f, a, "feed_forward_length", kMaxDim, &c.n_ff));
  BRISK_RETURN_IF_ERROR(ReadDim(f, a, "context_length", 1 << 24, &c.context_length));
  if (f.Find(a + ".attention.key_length")) {
    BRISK_RETURN_IF_ERROR(ReadDim(f, a, "attention.key_length", 4096, &c.head_dim));
  } else {
    if (c.n_embd % c.n_head != 0)
      return Status::Error("embedding_length is not a multiple of attention.head_count");
    c.head_dim = c.n_embd / c.n_head;
  }
  if (c.head_dim % 2 != 0) return Status::Error("head dimension must be even for RoPE");
  if (c.n_head % c.n_head_kv != 0)
    return Status::Error("attention.head_count (" + std::to_string(c.n_head) +
                         ") is not a multiple of head_count_kv (" + std::to_string(c.n_head_kv) +
                         ")");
  if (auto v = f.GetFloat(a + ".rope.freq_base"); v.ok()) c.rope_theta = *v;
  if (auto v = f.GetFloat(a + ".attention.layer_norm_rms_epsilon"); v.ok()) c.rms_eps = *v;
  if (!(c.rope_theta > 0) || !(c.rms_eps > 0) || c.rms_eps > 1)
    return Status::Error("rope.freq_base and layer_norm_rms_epsilon must be positive");

  const gguf::TensorInfo* embd = f.FindTensor("token_embd.weight");
  if (!embd) return Status::Error("missing tensor 'token_embd.weight'");
  if (embd->n_dims != 2 || embd->ne[1] > (1 << 24))
    return Status::Error("tensor 'token_embd.weight' must be 2-D [n_embd, n_vocab]");
  c.n_vocab = int(embd->ne[1]);
  c.tied_embeddings = f.FindTensor("output.weight") == nullptr;
  BRISK_RETURN_IF_ERROR(ReadPooling(f, a, &c.pooling));
  return c;
}

}  // namespace brisk
