// Hugging Face model-directory JSON files: config.json (the hyper-parameters, as a plain struct;
// model/hf_loader maps it to ModelConfig) and the chat template of tokenizer_config.json.
// Everything is untrusted: a missing or mistyped field is an error naming the file and the key.
// No exceptions escape.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace brisk::hf {

// The config.json fields a dense Qwen2/Qwen3 checkpoint uses. Optional fields are empty when the
// key is absent or null (the loader applies transformers' defaults).
struct Config {
  std::vector<std::string> architectures;  // e.g. {"Qwen2ForCausalLM"}
  std::string model_type;                  // e.g. "qwen2"; "" when absent
  int64_t hidden_size = 0;                 // required
  int64_t num_hidden_layers = 0;           // required
  int64_t num_attention_heads = 0;         // required
  int64_t intermediate_size = 0;           // required
  int64_t vocab_size = 0;                  // required
  std::optional<int64_t> num_key_value_heads;
  std::optional<int64_t> head_dim;
  std::optional<int64_t> max_position_embeddings;
  std::optional<double> rope_theta;  // also read from rope_parameters.rope_theta
  std::optional<double> rms_norm_eps;
  std::optional<bool> tie_word_embeddings;
  std::optional<bool> attention_bias;
  std::optional<bool> use_sliding_window;
  std::string hidden_act;    // "" when absent
  std::string rope_scaling;  // a non-default rope_scaling / rope_parameters type as JSON, or ""
  std::string torch_dtype;   // "" when absent (informational)
};

Result<Config> ParseConfigJson(std::string_view text, const std::string& origin);
Result<Config> ReadConfigJson(const std::string& path);

// The chat template of a tokenizer_config.json: "chat_template" as a string, or a list of
// {"name", "template"} objects (the one named "default", else the first). "" when absent.
Result<std::string> ParseChatTemplate(std::string_view text, const std::string& origin);
Result<std::string> ReadChatTemplate(const std::string& path);

// Reads a whole (small) file as text; the error names the path.
Result<std::string> ReadTextFile(const std::string& path, size_t max_bytes = size_t(1) << 30);

}  // namespace brisk::hf
