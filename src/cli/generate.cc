#include "cli/generate.h"

#include <algorithm>

#include "cli/cli_util.h"
#include "engine/collecting_sink.h"

namespace brisk::cli {
Result<std::unique_ptr<Generator>> Generator::Create(const std::string& model_path,
                                                     EngineConfig c) {
  auto g = std::unique_ptr<Generator>(new Generator());
  BRISK_ASSIGN_OR_RETURN(g->model_, Model::Load(model_path));
  BRISK_ASSIGN_OR_RETURN(g->tokenizer_, TokenizerForModel(*g->model_));
  if (!g->model_->chat_template().empty()) {
    auto t = jinja::ChatTemplate::Parse(g->model_->chat_template());
    if (!t.ok()) return t.status().WithContext("chat template");
    g->template_ = std::make_unique<jinja::ChatTemplate>(std::move(t).value());
  }
  c.max_num_seqs = 1;
  c.max_num_batched_tokens = 256;
  // A few contexts' worth of blocks: the current turn plus cached earlier turns.
  if (c.kv_cache_bytes == 0) {
    const int len = ResolveMaxModelLen(c, g->model_->config().context_length);
    c.kv_cache_bytes = 3 * KvStore::BlockBytes(g->model_->config(), c.kv_block_size, c.kv_type) *
                       size_t((len + c.kv_block_size - 1) / c.kv_block_size);
  }
  BRISK_ASSIGN_OR_RETURN(g->engine_, Engine::Create(*g->model_, &g->tokenizer_, c));
  return g;
}

Result<std::string> Generator::RenderChat(const nlohmann::ordered_json& messages) const {
  if (!template_) return Status::Error("the model has no chat template (use --raw)");
  return jinja::RenderChat(*template_, messages, nullptr, true, nlohmann::ordered_json::object());
}

Result<GenerationStats> Generator::Generate(const std::vector<int32_t>& prompt, int max_tokens,
                                            const SamplingParams& sampling,
                                            const std::function<void(const TokenEvent&)>& on_token,
                                            const std::function<bool()>& should_stop) {
  GenerationRequest r;
  r.prompt = prompt;
  r.max_tokens = max_tokens;
  r.sampling = sampling;
  CollectingSink::Callbacks callbacks;
  callbacks.on_token = on_token;
  auto sink = std::make_shared<CollectingSink>(max_tokens, std::move(callbacks));
  r.sink = sink;
  BRISK_ASSIGN_OR_RETURN(const uint64_t id, engine_->Submit(std::move(r)));
  // The sink wakes only its own waiter, so a stop request is looked for between short waits:
  // 20 ms is a fraction of one decode step of the models this runs.
  if (should_stop) {
    while (!sink->WaitFor(0.02)) {
      if (should_stop()) {
        engine_->Cancel(id);
        break;
      }
    }
  }
  const FinishInfo f = sink->Wait();
  if (f.reason == FinishReason::kError) return Status::Error(f.message);
  GenerationStats st;
  st.prompt_tokens = f.usage.prompt_tokens;
  st.cached_tokens = f.usage.cached_tokens;
  st.generated = f.usage.completion_tokens;
  st.ttft_s = f.timings.ttft_s;
  st.decode_s = f.timings.decode_s;
  st.stopped = f.reason == FinishReason::kStop;
  st.cancelled = f.reason == FinishReason::kCancelled;
  return st;
}

}  // namespace brisk::cli
