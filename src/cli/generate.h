// Text generation for the terminal commands (`run`, `chat`): tokenizer + chat template over the
// serving engine (one request at a time). A chat's earlier turns are found in the engine's prefix
// cache, so a new turn only computes the tokens after the cached full blocks.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "model/model_tokenizer.h"
#include "tokenizer/jinja/chat_template.h"
#include "tokenizer/tokenizer.h"

namespace brisk::cli {

struct GenerationStats {
  int prompt_tokens = 0;
  int cached_tokens = 0;  // prompt tokens reused from the prefix cache
  int generated = 0;
  double ttft_s = 0;       // prompt processing + first token
  double decode_s = 0;     // after the first token
  bool stopped = false;    // end of generation (EOG / stop), not the length limit
  bool cancelled = false;  // `should_stop` said so: the tokens so far are all there is
};

class Generator {
 public:
  // `engine` carries the user's threads, context and KV settings; the generator serves one
  // request at a time and sizes the KV cache for a few contexts unless a budget is given.
  static Result<std::unique_ptr<Generator>> Create(const std::string& model_path,
                                                   EngineConfig engine);

  const Model& model() const { return *model_; }
  const Tokenizer& tokenizer() const { return tokenizer_; }
  // Renders messages with the model's chat template (generation prompt appended).
  Result<std::string> RenderChat(const nlohmann::ordered_json& messages) const;

  // Generates after `prompt` (token ids); on_token sees each token and its decoded text piece
  // (called on the engine thread while this call waits). `should_stop`, when given, is asked on
  // this thread every few milliseconds; once it says true the request is cancelled through the
  // engine (Engine::Cancel) and the call returns what was generated, with stats.cancelled set.
  Result<GenerationStats> Generate(const std::vector<int32_t>& prompt, int max_tokens,
                                   const SamplingParams& sampling,
                                   const std::function<void(const TokenEvent&)>& on_token,
                                   const std::function<bool()>& should_stop = {});

 private:
  std::unique_ptr<Model> model_;
  Tokenizer tokenizer_;
  std::unique_ptr<jinja::ChatTemplate> template_;
  std::unique_ptr<Engine> engine_;
};

}  // namespace brisk::cli
