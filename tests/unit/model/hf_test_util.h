// Building Hugging Face model directories for tests: config.json from a ModelConfig, tensors
// (from a GGUF file, or random) written as one or several safetensors shards with an index.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "formats/gguf.h"
#include "formats/safetensors_writer.h"
#include "model/config.h"
#include "model/hf_names.h"
#include "quant/dequantize.h"
#include "test_paths.h"
#include "util/fp16.h"

namespace brisk::hf_test {

struct HfTensor {
  std::string name;  // HF name
  safetensors::Dtype dtype = safetensors::Dtype::kF32;
  std::vector<int64_t> shape;  // outermost first
  std::vector<uint8_t> bytes;
};

inline void WriteText(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  ASSERT_TRUE(out.good()) << path;
}

// A temporary directory removed (with its contents) at scope exit.
struct ScopedTempDir {
  std::string path = test::TempDir();
  ScopedTempDir() = default;
  ScopedTempDir(const ScopedTempDir&) = delete;
  ScopedTempDir& operator=(const ScopedTempDir&) = delete;
  ~ScopedTempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

inline std::string ReadFileForTest(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// config.json as transformers writes it for this config.
inline nlohmann::json ConfigJson(const ModelConfig& c) {
  const bool q3 = c.arch == Arch::kQwen3;
  nlohmann::json j = {
      {"architectures", {q3 ? "Qwen3ForCausalLM" : "Qwen2ForCausalLM"}},
      {"model_type", q3 ? "qwen3" : "qwen2"},
      {"hidden_size", c.n_embd},
      {"num_hidden_layers", c.n_layer},
      {"num_attention_heads", c.n_head},
      {"num_key_value_heads", c.n_head_kv},
      {"intermediate_size", c.n_ff},
      {"vocab_size", c.n_vocab},
      {"max_position_embeddings", c.context_length},
      {"rope_theta", c.rope_theta},
      {"rms_norm_eps", c.rms_eps},
      {"tie_word_embeddings", c.tied_embeddings},
      {"hidden_act", "silu"},
      {"rope_scaling", nullptr},
      {"sliding_window", nullptr},
      {"use_sliding_window", false},
      {"torch_dtype", "bfloat16"},
      {"bos_token_id", 2048},
  };
  if (q3) {
    j["head_dim"] = c.head_dim;
    j["attention_bias"] = false;
  }
  return j;
}

// Every tensor of a GGUF file under its HF name. F32/F16/BF16 keep their bytes; other types are
// dequantized to F32 (exactly the values the float path computes with).
inline std::vector<HfTensor> TensorsFromGguf(const gguf::File& f) {
  std::vector<HfTensor> out;
  for (const gguf::TensorInfo& t : f.tensors()) {
    HfTensor h;
    h.name = HfNameFromGguf(t.name);
    EXPECT_FALSE(h.name.empty()) << "no HF name for " << t.name;
    if (t.n_dims == 1) {
      h.shape = {t.ne[0]};
    } else {
      EXPECT_EQ(t.n_dims, 2) << t.name;
      h.shape = {t.ne[1], t.ne[0]};
    }
    if (safetensors::GgmlToDtype(t.type, &h.dtype)) {
      h.bytes.assign(t.data, t.data + t.nbytes);
    } else {
      h.dtype = safetensors::Dtype::kF32;
      h.bytes.resize(size_t(t.n_elements) * 4);
      const int64_t rows = t.rows();
      const size_t row_bytes = RowBytes(t.type, t.ne[0]);
      for (int64_t r = 0; r < rows; ++r)
        DequantizeRow(t.type, t.data + r * row_bytes,
                      reinterpret_cast<float*>(h.bytes.data()) + r * t.ne[0], t.ne[0]);
    }
    out.push_back(std::move(h));
  }
  return out;
}

inline HfTensor RandomTensor(const std::string& name, std::vector<int64_t> shape, std::mt19937& rng,
                             float scale, float offset = 0) {
  HfTensor t;
  t.name = name;
  t.shape = std::move(shape);
  size_t n = 1;
  for (int64_t d : t.shape) n *= size_t(d);
  std::vector<float> v(n);
  std::normal_distribution<float> dist(0.f, scale);
  for (float& x : v) x = offset + dist(rng);
  t.bytes.resize(n * 4);
  std::memcpy(t.bytes.data(), v.data(), n * 4);
  return t;
}

// A small random Qwen2 (qkv biases) or Qwen3 (q/k norms) model's tensors for `c`.
inline std::vector<HfTensor> RandomTensors(const ModelConfig& c, uint32_t seed = 1) {
  std::mt19937 rng(seed);
  const int64_t d = c.n_embd, q = c.q_dim(), kv = c.kv_dim(), ff = c.n_ff, hd = c.head_dim;
  std::vector<HfTensor> t;
  t.push_back(RandomTensor("model.embed_tokens.weight", {c.n_vocab, d}, rng, 1.f));
  t.push_back(RandomTensor("model.norm.weight", {d}, rng, 0.1f, 1.f));
  if (!c.tied_embeddings) t.push_back(RandomTensor("lm_head.weight", {c.n_vocab, d}, rng, 0.2f));
  for (int l = 0; l < c.n_layer; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    t.push_back(RandomTensor(p + "input_layernorm.weight", {d}, rng, 0.1f, 1.f));
    t.push_back(RandomTensor(p + "self_attn.q_proj.weight", {q, d}, rng, 0.2f));
    t.push_back(RandomTensor(p + "self_attn.k_proj.weight", {kv, d}, rng, 0.2f));
    t.push_back(RandomTensor(p + "self_attn.v_proj.weight", {kv, d}, rng, 0.2f));
    t.push_back(RandomTensor(p + "self_attn.o_proj.weight", {d, q}, rng, 0.2f));
    if (c.qkv_bias) {
      t.push_back(RandomTensor(p + "self_attn.q_proj.bias", {q}, rng, 0.1f));
      t.push_back(RandomTensor(p + "self_attn.k_proj.bias", {kv}, rng, 0.1f));
      t.push_back(RandomTensor(p + "self_attn.v_proj.bias", {kv}, rng, 0.1f));
    }
    if (c.qk_norm) {
      t.push_back(RandomTensor(p + "self_attn.q_norm.weight", {hd}, rng, 0.1f, 1.f));
      t.push_back(RandomTensor(p + "self_attn.k_norm.weight", {hd}, rng, 0.1f, 1.f));
    }
    t.push_back(RandomTensor(p + "post_attention_layernorm.weight", {d}, rng, 0.1f, 1.f));
    t.push_back(RandomTensor(p + "mlp.gate_proj.weight", {ff, d}, rng, 0.2f));
    t.push_back(RandomTensor(p + "mlp.up_proj.weight", {ff, d}, rng, 0.2f));
    t.push_back(RandomTensor(p + "mlp.down_proj.weight", {d, ff}, rng, 0.2f));
  }
  return t;
}

// Converts F32 tensors to BF16 in place.
inline void ToBf16(std::vector<HfTensor>* ts) {
  for (HfTensor& t : *ts) {
    if (t.dtype != safetensors::Dtype::kF32) continue;
    const size_t n = t.bytes.size() / 4;
    std::vector<uint8_t> b(n * 2);
    for (size_t i = 0; i < n; ++i) {
      float f;
      std::memcpy(&f, t.bytes.data() + 4 * i, 4);
      const uint16_t h = Fp32ToBf16(f);
      std::memcpy(b.data() + 2 * i, &h, 2);
    }
    t.bytes = std::move(b);
    t.dtype = safetensors::Dtype::kBF16;
  }
}

// A small model config for tests that do not need golden data.
inline ModelConfig SmallConfig(bool qwen3 = false, bool tied = true) {
  ModelConfig c;
  c.arch = qwen3 ? Arch::kQwen3 : Arch::kQwen2;
  c.arch_name = qwen3 ? "qwen3" : "qwen2";
  c.n_embd = 32;
  c.n_layer = 2;
  c.n_head = 4;
  c.n_head_kv = 2;
  c.head_dim = qwen3 ? 16 : 8;
  c.n_ff = 48;
  c.n_vocab = 64;
  c.context_length = 128;
  c.rope_theta = 1e6;
  c.rms_eps = 1e-6;
  c.tied_embeddings = tied;
  c.qkv_bias = !qwen3;
  c.qk_norm = qwen3;
  return c;
}

struct WriteOptions {
  int shards = 2;         // 1: model.safetensors without an index
  bool misalign = false;  // a 1-byte tensor first in each shard: every later offset is odd
  std::string chat_template = "{{ messages }}";
};

// Writes config.json, the shards (+ index), tokenizer.json and tokenizer_config.json.
inline void WriteHfDir(const std::string& dir, const nlohmann::json& config,
                       const std::vector<HfTensor>& tensors, const WriteOptions& o = {}) {
  WriteText(dir + "/config.json", config.dump(2));
  nlohmann::json index = {{"metadata", {{"total_size", 0}}},
                          {"weight_map", nlohmann::json::object()}};
  static const uint8_t kPad = 0;
  const size_t per_shard = (tensors.size() + o.shards - 1) / o.shards;
  for (int s = 0; s < o.shards; ++s) {
    char name[64];
    std::snprintf(name, sizeof name, "model-%05d-of-%05d.safetensors", s + 1, o.shards);
    const std::string file = o.shards == 1 ? "model.safetensors" : name;
    safetensors::Writer w;
    w.SetMetadata("format", "pt");
    if (o.misalign) w.AddTensor("brisk_test.pad", safetensors::Dtype::kU8, {1}, &kPad, 1);
    for (size_t i = s * per_shard; i < std::min(tensors.size(), (s + 1) * per_shard); ++i) {
      const HfTensor& t = tensors[i];
      w.AddTensor(t.name, t.dtype, t.shape, t.bytes.data(), t.bytes.size());
      index["weight_map"][t.name] = file;
    }
    Status st = w.Write(dir + "/" + file);
    ASSERT_TRUE(st.ok()) << st.message();
  }
  if (o.shards > 1) WriteText(dir + "/model.safetensors.index.json", index.dump(2));
  WriteText(dir + "/tokenizer.json",
            R"({"version": "1.0", "model": {"type": "BPE", "vocab": {}, "merges": []}})");
  nlohmann::json tc = {{"tokenizer_class", "Qwen2Tokenizer"}, {"eos_token", "<|im_end|>"}};
  if (!o.chat_template.empty()) tc["chat_template"] = o.chat_template;
  WriteText(dir + "/tokenizer_config.json", tc.dump(2));
}

}  // namespace brisk::hf_test
