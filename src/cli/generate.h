// Text generation for the terminal commands (`run -p`, `chat`): tokenizer + chat template +
// greedy decoding on the fast forward pass, keeping the KV cache of the conversation so a new
// turn only computes the tokens after the longest common prefix. (The serving engine replaces
// this for concurrent requests.)
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "model/fast_forward.h"
#include "tokenizer/detokenizer.h"
#include "tokenizer/jinja/chat_template.h"
#include "tokenizer/tokenizer.h"

namespace brisk::cli {

// The tokenizer a model carries: GGUF metadata, or the HF directory's tokenizer.json.
Result<Tokenizer> TokenizerForModel(const Model& model);

struct GenerationStats {
  int prompt_tokens = 0;
  int cached_tokens = 0;  // prompt tokens reused from the previous turn
  int generated = 0;
  double ttft_s = 0;    // prompt processing + first token
  double decode_s = 0;  // after the first token
  bool stopped_by_eog = false;
};

class Generator {
 public:
  static Result<std::unique_ptr<Generator>> Create(const std::string& model_path, int threads,
                                                   int context);

  const Model& model() const { return *model_; }
  const Tokenizer& tokenizer() const { return tokenizer_; }
  // Renders messages with the model's chat template (generation prompt appended).
  Result<std::string> RenderChat(const nlohmann::ordered_json& messages) const;

  // Greedy generation after `prompt` (token ids); calls on_text with each decoded piece.
  Result<GenerationStats> Generate(const std::vector<int32_t>& prompt, int max_tokens,
                                   const std::function<void(const std::string&)>& on_text);

 private:
  std::unique_ptr<Model> model_;
  Tokenizer tokenizer_;
  std::unique_ptr<jinja::ChatTemplate> template_;
  std::unique_ptr<ThreadPool> pool_;
  std::unique_ptr<FastForward> fwd_;
  std::unique_ptr<SeqKvCache> kv_;
  std::vector<int32_t> cached_;  // tokens whose K/V are in kv_
};

}  // namespace brisk::cli
