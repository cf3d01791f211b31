#include "model/hf_names.h"

#include <charconv>

namespace brisk {
namespace {

struct NamePair {
  std::string_view hf;
  std::string_view gguf;
};

// Whole-model tensors.
constexpr NamePair kGlobal[] = {
    {"model.embed_tokens.weight", "token_embd.weight"},
    {"model.norm.weight", "output_norm.weight"},
    {"lm_head.weight", "output.weight"},
};

// Per-layer tensors: "model.layers.N." + hf <-> "blk.N." + gguf.
constexpr NamePair kLayer[] = {
    {"input_layernorm.weight", "attn_norm.weight"},
    {"self_attn.q_proj.weight", "attn_q.weight"},
    {"self_attn.k_proj.weight", "attn_k.weight"},
    {"self_attn.v_proj.weight", "attn_v.weight"},
    {"self_attn.o_proj.weight", "attn_output.weight"},
    {"self_attn.q_proj.bias", "attn_q.bias"},
    {"self_attn.k_proj.bias", "attn_k.bias"},
    {"self_attn.v_proj.bias", "attn_v.bias"},
    {"self_attn.q_norm.weight", "attn_q_norm.weight"},
    {"self_attn.k_norm.weight", "attn_k_norm.weight"},
    {"post_attention_layernorm.weight", "ffn_norm.weight"},
    {"mlp.gate_proj.weight", "ffn_gate.weight"},
    {"mlp.up_proj.weight", "ffn_up.weight"},
    {"mlp.down_proj.weight", "ffn_down.weight"},
};

// Splits "<prefix>N.<rest>" into N and rest; false when the name does not have that form.
bool SplitLayer(std::string_view name, std::string_view prefix, std::string_view* layer,
                std::string_view* rest) {
  if (!name.starts_with(prefix)) return false;
  name.remove_prefix(prefix.size());
  const size_t dot = name.find('.');
  if (dot == 0 || dot == std::string_view::npos || dot > 9) return false;
  int n = 0;
  auto [p, ec] = std::from_chars(name.data(), name.data() + dot, n);
  if (ec != std::errc() || p != name.data() + dot || n < 0) return false;
  if (dot > 1 && name[0] == '0') return false;  // "01" is not a layer index
  *layer = name.substr(0, dot);
  *rest = name.substr(dot + 1);
  return true;
}

std::string Map(std::string_view name, bool to_gguf) {
  for (const NamePair& p : kGlobal)
    if ((to_gguf ? p.hf : p.gguf) == name) return std::string(to_gguf ? p.gguf : p.hf);
  const std::string_view from_prefix = to_gguf ? "model.layers." : "blk.";
  const std::string_view to_prefix = to_gguf ? "blk." : "model.layers.";
  std::string_view layer, rest;
  if (!SplitLayer(name, from_prefix, &layer, &rest)) return "";
  for (const NamePair& p : kLayer) {
    if ((to_gguf ? p.hf : p.gguf) == rest)
      return std::string(to_prefix) + std::string(layer) + "." +
             std::string(to_gguf ? p.gguf : p.hf);
  }
  return "";
}

}  // namespace

std::string GgufNameFromHf(std::string_view hf_name) { return Map(hf_name, true); }
std::string HfNameFromGguf(std::string_view gguf_name) { return Map(gguf_name, false); }

}  // namespace brisk
