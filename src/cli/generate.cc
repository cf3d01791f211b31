#include "cli/generate.h"

#include <algorithm>

#include "cli/cli_util.h"

namespace brisk::cli {

Result<Tokenizer> TokenizerForModel(const Model& model) {
  if (model.gguf()) return Tokenizer::FromGguf(*model.gguf());
  if (!model.hf_tokenizer_json().empty()) return Tokenizer::FromHfJson(model.hf_tokenizer_json());
  return Status::Error(model.path() + ": no tokenizer (GGUF metadata or tokenizer.json)");
}

Result<std::unique_ptr<Generator>> Generator::Create(const std::string& model_path, int threads,
                                                     int context) {
  auto g = std::unique_ptr<Generator>(new Generator());
  BRISK_ASSIGN_OR_RETURN(g->model_, Model::Load(model_path));
  BRISK_ASSIGN_OR_RETURN(g->tokenizer_, TokenizerForModel(*g->model_));
  if (!g->model_->chat_template().empty()) {
    auto t = jinja::ChatTemplate::Parse(g->model_->chat_template());
    if (!t.ok()) return t.status().WithContext("chat template");
    g->template_ = std::make_unique<jinja::ChatTemplate>(std::move(t).value());
  }
  g->pool_ = std::make_unique<ThreadPool>(threads);
  g->fwd_ = std::make_unique<FastForward>(*g->model_, *g->pool_, 256);
  const int ctx = std::min(context, g->model_->config().context_length);
  g->kv_ = std::make_unique<SeqKvCache>(g->model_->config(), ctx);
  return g;
}

Result<std::string> Generator::RenderChat(const nlohmann::ordered_json& messages) const {
  if (!template_) return Status::Error("the model has no chat template (use --raw)");
  return jinja::RenderChat(*template_, messages, nullptr, true, nlohmann::ordered_json::object());
}

Result<GenerationStats> Generator::Generate(
    const std::vector<int32_t>& prompt, int max_tokens,
    const std::function<void(const std::string&)>& on_text) {
  GenerationStats st;
  st.prompt_tokens = int(prompt.size());
  if (prompt.empty()) return Status::Error("empty prompt");
  if (int(prompt.size()) + max_tokens > kv_->capacity())
    return Status::Error("prompt of " + std::to_string(prompt.size()) + " tokens plus " +
                         std::to_string(max_tokens) + " to generate exceeds the context of " +
                         std::to_string(kv_->capacity()));
  // Reuse the K/V of the longest common prefix; at least the last prompt token is recomputed
  // so there are logits to sample from.
  size_t common = 0;
  while (common < cached_.size() && common + 1 < prompt.size() && cached_[common] == prompt[common])
    ++common;
  st.cached_tokens = int(common);
  cached_.assign(prompt.begin(), prompt.begin() + common);

  const double t0 = NowSeconds();
  StreamingDetokenizer detok(tokenizer_, /*show_special=*/false);
  const std::span<const int32_t> rest(prompt.data() + common, prompt.size() - common);
  int32_t next = -1;
  // Prefill the rest in chunks; only the last chunk asks for the argmax.
  for (size_t c0 = 0; c0 < rest.size(); c0 += size_t(fwd_->max_batch_tokens())) {
    const size_t len = std::min(rest.size() - c0, size_t(fwd_->max_batch_tokens()));
    const SeqRun run{kv_->blocks(), int(common + c0), int(len)};
    const bool last = c0 + len == rest.size();
    const int32_t row = int32_t(len) - 1;
    BRISK_RETURN_IF_ERROR(
        fwd_->RunBatchArgmax(rest.subspan(c0, len), std::span(&run, 1),
                             last ? std::span(&row, 1) : std::span<const int32_t>(), &next));
  }
  cached_.insert(cached_.end(), rest.begin(), rest.end());
  double t_first = 0;
  for (int i = 0; i < max_tokens; ++i) {
    if (i == 0) {
      t_first = NowSeconds();
      st.ttft_s = t_first - t0;
    }
    st.generated++;
    if (tokenizer_.IsEog(next)) {
      st.stopped_by_eog = true;
      break;
    }
    std::string piece;
    detok.Push(next, &piece);
    if (!piece.empty()) on_text(piece);
    if (i + 1 == max_tokens) break;
    const SeqRun run{kv_->blocks(), int(cached_.size()), 1};
    const int32_t row0 = 0, tok = next;
    cached_.push_back(tok);
    BRISK_RETURN_IF_ERROR(
        fwd_->RunBatchArgmax(std::span(&tok, 1), std::span(&run, 1), std::span(&row0, 1), &next));
  }
  std::string tail;
  detok.Flush(&tail);
  if (!tail.empty()) on_text(tail);
  st.decode_s = NowSeconds() - t_first;
  return st;
}

}  // namespace brisk::cli
