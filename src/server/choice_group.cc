#include "server/choice_group.h"

#include <nlohmann/json.hpp>

namespace brisk::server {

using Json = nlohmann::ordered_json;

ChoiceGroup::ChoiceGroup(std::shared_ptr<HttpExchange> ex, ChoiceGroupOptions options)
    : ex_(std::move(ex)),
      o_(std::move(options)),
      bodies_(size_t(o_.n_choices)),
      finishes_(size_t(o_.n_choices)) {}

void ChoiceGroup::SetEngineIds(Engine* engine, std::vector<uint64_t> ids) {
  std::lock_guard<std::mutex> lock(mu_);
  engine_ = engine;
  ids_ = std::move(ids);
  if (cancel_pending_)
    for (uint64_t id : ids_) engine_->Cancel(id);
}

bool ChoiceGroup::StartStream() {
  std::lock_guard<std::mutex> lock(mu_);
  if (failed_) return false;
  if (!started_) ex_->StartStream(200, "text/event-stream");
  started_ = true;
  return true;
}

bool ChoiceGroup::failed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return failed_;
}

void ChoiceGroup::ChoiceFinished(int index, const std::string& body, const FinishInfo& f) {
  std::lock_guard<std::mutex> lock(mu_);
  if (failed_) return;
  bodies_[size_t(index)] = body;
  finishes_[size_t(index)] = f;
  if (++finished_ == o_.n_choices) FinishLocked();
}

void ChoiceGroup::ChoiceFailed(const HttpResponse& error, const std::string& stream_event) {
  std::lock_guard<std::mutex> lock(mu_);
  if (failed_) return;
  failed_ = true;
  if (!o_.stream) {
    ex_->Respond(error);
  } else {
    if (!started_) ex_->StartStream(200, "text/event-stream");
    started_ = true;
    ex_->Write(stream_event);
    ex_->EndStream();
  }
  if (!engine_) cancel_pending_ = true;
  for (uint64_t id : ids_) engine_->Cancel(id);
}

// Each distinct prompt once (the first of its n choices), every choice's generated tokens; the
// timings of the last choice to end.
FinishInfo ChoiceGroup::TotalsLocked() const {
  FinishInfo total = finishes_.back();
  total.usage = Usage{};
  for (size_t i = 0; i < finishes_.size(); ++i) {
    const Usage& u = finishes_[i].usage;
    if (i % size_t(o_.choices_per_prompt) == 0) {
      total.usage.prompt_tokens += u.prompt_tokens;
      total.usage.cached_tokens += u.cached_tokens;
    }
    total.usage.completion_tokens += u.completion_tokens;
  }
  return total;
}

void ChoiceGroup::FinishLocked() {
  const FinishInfo total = TotalsLocked();
  if (o_.stream) {
    if (!started_) ex_->StartStream(200, "text/event-stream");
    started_ = true;
    if (o_.include_usage) ex_->Write(SseData(UsageChunk(o_.meta, o_.chat, total)));
    ex_->Write(std::string(kSseDone));
    ex_->EndStream();
    return;
  }
  Json out = Json::parse(bodies_[0]);
  Json choices = Json::array();
  for (const std::string& b : bodies_) choices.push_back(Json::parse(b)["choices"][0]);
  out["choices"] = std::move(choices);
  out["usage"] = UsageJson(total.usage);
  HttpResponse r;
  r.body = out.dump(-1, ' ', false, Json::error_handler_t::replace);
  ex_->Respond(std::move(r));
}

}  // namespace brisk::server
