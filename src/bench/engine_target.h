// The in-process LoadTarget: the model, its tokenizer and chat template, and a serving engine,
// all in this process. Requests go the way `brisk serve` sends them (chat template -> tokens ->
// Engine::Submit), minus HTTP; the clock starts before the template is rendered, as a server's
// would when the request arrives.
//
// Engine limits are applied by creating a new engine (its KV cache is sized for the new
// max_num_seqs), so every point starts from an empty cache; a target owns one engine at a time.
#pragma once

#include <memory>
#include <string>

#include "bench/load_target.h"
#include "engine/engine.h"

namespace brisk {

struct EngineTargetOptions {
  std::string model;  // resolved path (with a loaded model: only its name in the report)
  // The engine settings that are not swept (threads, context, KV cache); Configure's limits
  // replace its batch fields.
  EngineConfig engine;
  double request_timeout_s = 600;  // engine deadline of every request
};

// Loads the model, its tokenizer and chat template (errors without them: the sweep sends chat).
Result<std::unique_ptr<LoadTarget>> CreateEngineTarget(const EngineTargetOptions& options);
// With a loaded model (both must outlive the target); `tokenizer` may be null, and without it or
// a chat template only requests with prompt_ids can be sent (bench engine).
Result<std::unique_ptr<LoadTarget>> CreateEngineTarget(const Model& model,
                                                       const Tokenizer* tokenizer,
                                                       const EngineTargetOptions& options);

}  // namespace brisk
