// Tensor names: Hugging Face (transformers Qwen2/Qwen3) <-> GGUF (llama.cpp), e.g.
//   model.layers.3.self_attn.q_proj.weight  <->  blk.3.attn_q.weight
// HF stores a Linear weight as [out, in] row-major: the same bytes as GGUF's ne = {in, out}, and
// Qwen's RoPE is NeoX-style, so no permutation is involved; only the names differ.
#pragma once

#include <string>
#include <string_view>

namespace brisk {

// The GGUF name of an HF tensor name, or "" when the name is not one brisk uses.
std::string GgufNameFromHf(std::string_view hf_name);
// The HF name of a GGUF tensor name, or "" when unknown.
std::string HfNameFromGguf(std::string_view gguf_name);

}  // namespace brisk
