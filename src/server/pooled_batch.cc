#include "server/pooled_batch.h"

#include <algorithm>
#include <mutex>
#include <string>

#include "server/metrics.h"

namespace brisk::server {
namespace {

// The state the requests of one HTTP request share. Every method may run on any thread.
class PooledBatch {
 public:
  PooledBatch(ApiServer& server, Engine& engine, size_t n, PooledDone done)
      : server_(server), engine_(engine), done_(std::move(done)), hidden_(n), remaining_(n) {}

  // The engine's ids, once SubmitAll returned them. False when the request has already ended (a
  // failure or a disconnect came first): the caller cancels them.
  bool SetIds(std::vector<uint64_t> ids) {
    std::lock_guard<std::mutex> lock(mu_);
    ids_ = std::move(ids);
    return !ended_;
  }

  void Finished(size_t index, const FinishInfo& f) {
    std::unique_lock<std::mutex> lock(mu_);
    if (ended_) return;
    const int n_embd = engine_.model_config().n_embd;
    const bool ok = f.reason == FinishReason::kLength || f.reason == FinishReason::kStop;
    if (ok && f.hidden.size() == size_t(n_embd)) {
      hidden_[index] = f.hidden;
      if (--remaining_ > 0) return;
      ended_ = true;
      lock.unlock();
      End(std::move(hidden_));
      return;
    }
    lock.unlock();
    Fail(ErrorOf(f, ok));
  }

  // Ends the request with `e` (unless it already ended) and cancels every submitted prompt.
  void Fail(ApiError e) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (ended_) return;
      ended_ = true;
    }
    CancelAll();
    End(std::move(e));
  }

  void CancelAll() {
    std::vector<uint64_t> ids;
    {
      std::lock_guard<std::mutex> lock(mu_);
      ids = ids_;
    }
    for (uint64_t id : ids) engine_.Cancel(id);
  }

 private:
  static ApiError ErrorOf(const FinishInfo& f, bool finished) {
    if (finished)  // an engine without hidden states, or a model of another width
      return MakeError(500, "server_error", "the engine returned no hidden state");
    if (f.reason == FinishReason::kDeadline)
      return MakeError(504, "timeout_error", "the request timed out: " + f.message);
    if (f.reason == FinishReason::kCancelled)
      return MakeError(503, "unavailable_error", "the request was cancelled: " + f.message);
    return MakeError(500, "server_error", f.message.empty() ? "engine error" : f.message);
  }

  void End(std::variant<PooledHidden, ApiError> outcome) {
    done_(std::move(outcome));
    server_.GenerationFinished();
  }

  ApiServer& server_;
  Engine& engine_;
  PooledDone done_;
  std::mutex mu_;
  std::vector<uint64_t> ids_;
  PooledHidden hidden_;
  size_t remaining_;
  bool ended_ = false;
};

class PooledSink : public RequestSink {
 public:
  PooledSink(std::shared_ptr<PooledBatch> batch, size_t index)
      : batch_(std::move(batch)), index_(index) {}
  void OnToken(const TokenEvent&) override {}  // max_tokens 0: none come
  void OnFinish(const FinishInfo& f) override { batch_->Finished(index_, f); }

 private:
  std::shared_ptr<PooledBatch> batch_;
  size_t index_;
};

}  // namespace

PoolingLimits PoolingLimitsOf(const ApiServer& server, const Engine& engine) {
  PoolingLimits l;
  l.n_embd = engine.model_config().n_embd;
  l.n_vocab = engine.model_config().n_vocab;
  l.model_id = server.options().model_id;
  // SubmitAll refuses a group larger than the queue (429): refuse it as the client's mistake.
  l.max_inputs = std::min(kMaxPoolingInputs, size_t(std::max(1, engine.config().max_waiting)));
  return l;
}

std::optional<ApiError> CheckPromptsFit(const std::vector<std::vector<int32_t>>& prompts,
                                        int max_model_len, const std::string& field) {
  for (size_t i = 0; i < prompts.size(); ++i) {
    if (prompts[i].size() <= size_t(max_model_len)) continue;
    const std::string name = field + "[" + std::to_string(i) + "]";
    return ToApiError(Status::OutOfRange("This model's maximum context length is " +
                                             std::to_string(max_model_len) + " tokens. However, " +
                                             name + " has " + std::to_string(prompts[i].size()) +
                                             " tokens. Please reduce its length.",
                                         name));
  }
  return std::nullopt;
}

HttpResponse PooledErrorResponse(ApiServer& server, const ApiError& e) {
  HttpResponse r = ErrorResponse(e);
  if (e.status == 429) {
    if (server.metrics()) server.metrics()->OnRequestRejected();
    r.headers.emplace_back("Retry-After",
                           std::to_string(std::max(1, int(server.options().retry_after_s + 0.5))));
  }
  return r;
}

void RunPooled(ApiServer& server, Engine& engine, std::vector<std::vector<int32_t>> prompts,
               const std::shared_ptr<HttpExchange>& ex, PooledDone done) {
  server.GenerationStarted();
  auto batch = std::make_shared<PooledBatch>(server, engine, prompts.size(), std::move(done));
  std::vector<GenerationRequest> requests(prompts.size());
  for (size_t i = 0; i < prompts.size(); ++i) {
    GenerationRequest& r = requests[i];
    r.prompt = std::move(prompts[i]);
    r.max_tokens = 0;
    r.return_hidden = true;
    r.sink = std::make_shared<PooledSink>(batch, i);
  }
  // All or none, in one group: the scheduler batches them, and equal inputs are computed once.
  auto ids = engine.SubmitAll(std::move(requests));
  if (!ids.ok()) return batch->Fail(ToApiError(ids.status()));
  if (!batch->SetIds(*ids)) {
    for (uint64_t id : *ids) engine.Cancel(id);
    return;
  }
  // A client that goes away cancels every prompt (at once if it is already gone).
  ex->OnDisconnect([batch] { batch->CancelAll(); });
}

}  // namespace brisk::server
