#include "server/generation_sink.h"

#include <cstdio>

#include "server/api_error.h"

namespace brisk::server {

using Json = nlohmann::ordered_json;

GenerationSink::GenerationSink(ApiServer& server, const LoadedModel& model,
                               const OpenAiRequest& request, std::shared_ptr<HttpExchange> ex,
                               ResponseMeta meta, std::string echo_text, uint64_t tool_seed)
    : server_(server),
      model_(model),
      ex_(std::move(ex)),
      meta_(std::move(meta)),
      chat_(request.chat),
      stream_(request.stream),
      include_usage_(request.include_usage),
      logprobs_(request.gen.sampling.logprobs || request.gen.sampling.top_logprobs > 0),
      token_bytes_(TokenizerPieces(model.tokenizer)),
      echo_(std::move(echo_text)) {
  if (ToolCallsEnabled(request)) tools_.emplace(tool_seed);
}

void GenerationSink::StartLocked() {
  if (!stream_) return;
  ex_->StartStream(200, "text/event-stream");
  if (chat_) ex_->Write(SseData(ChatRoleChunk(meta_)));
  if (!echo_.empty()) {
    ex_->Write(SseData(CompletionChunk(meta_, echo_, nullptr, nullptr)));
    echo_.clear();
  }
}

void GenerationSink::EmitPendingLocked() {
  const bool has_logprobs = logprobs_ && !pending_.empty();
  if (!pending_text_.empty() || has_logprobs) {
    Json lp = nullptr;
    if (has_logprobs)
      lp = chat_ ? ChatLogprobs(pending_, token_bytes_)
                 : CompletionLogprobs(pending_, token_bytes_, &text_offset_);
    ex_->Write(SseData(chat_ ? ChatContentChunk(meta_, pending_text_, lp)
                             : CompletionChunk(meta_, pending_text_, lp, nullptr)));
    pending_text_.clear();
    pending_.clear();
  }
  for (; calls_sent_ < int(calls_.size()); ++calls_sent_)
    ex_->Write(SseData(ChatToolCallChunk(meta_, calls_sent_, calls_[calls_sent_])));
  pending_tokens_ = 0;
}

void GenerationSink::OnToken(const TokenEvent& e) {
  std::lock_guard<std::mutex> lock(mu_);
  const auto now = std::chrono::steady_clock::now();
  if (any_token_)
    server_.metrics()->OnTokens(1, std::chrono::duration<double>(now - last_token_).count());
  any_token_ = true;
  last_token_ = now;
  if (ex_->disconnected()) return;  // the cancel is on its way

  std::string text = tools_ ? tools_->Feed(e.text, &calls_) : e.text;
  if (!stream_) {
    content_ += text;
    if (logprobs_) events_.push_back(e);
    return;
  }
  pending_text_ += text;
  if (logprobs_) pending_.push_back(e);
  ++pending_tokens_;
  // --stream-interval: while the client is still receiving earlier events, later tokens are
  // coalesced (up to the interval) instead of queueing one event per token.
  const bool client_busy = ex_->queued_bytes() > 0;
  if (pending_tokens_ >= server_.options().stream_interval || !client_busy) EmitPendingLocked();
}

void GenerationSink::SendError(int status, const std::string& type, const std::string& message) {
  const ApiError err = MakeError(status, type, message);
  if (stream_) {
    ex_->Write("data: " + ErrorJson(err) + "\n\n");
    ex_->EndStream();
  } else {
    ex_->Respond(ErrorResponse(err));
  }
}

void GenerationSink::OnFinish(const FinishInfo& f) {
  std::lock_guard<std::mutex> lock(mu_);
  if (tools_) {
    const std::string rest = tools_->Finish(&calls_);
    (stream_ ? pending_text_ : content_) += rest;
  }
  const bool calls = tools_ && tools_->calls_emitted() > 0;
  const char* reason = OpenAiFinishReason(f, calls);
  // Metrics and the log are recorded before the client can see the end, so a client that reads
  // /metrics right after its response always finds its own request counted.
  const bool gone = ex_->disconnected();
  const int status = gone ? 499  // client closed the request (nginx's convention; log only)
                     : reason != nullptr                   ? 200
                     : f.reason == FinishReason::kDeadline ? 504
                                                           : 500;
  const std::string label = gone ? "abort" : std::string(FinishedReasonLabel(f.reason));
  server_.metrics()->OnRequestFinished(f, label);
  const std::string shown = reason ? reason : FinishReasonName(f.reason);
  if (RequestLog* log = server_.request_log()) {
    RequestLogEntry e;
    e.id = meta_.id;
    e.model = meta_.model;
    e.finish_reason = shown;
    e.usage = f.usage;
    e.timings = f.timings;
    e.stream = stream_;
    e.status = status;
    e.error = f.message;
    if (Status st = log->Write(e); !st.ok())
      std::fprintf(stderr, "brisk serve: request log: %s\n", st.message().c_str());
  }
  if (server_.options().log_requests)
    std::fprintf(stderr,
                 "brisk serve: %s %s prompt %d (cached %d) completion %d ttft %.1f ms e2e %.1f ms "
                 "status %d\n",
                 meta_.id.c_str(), shown.c_str(), f.usage.prompt_tokens, f.usage.cached_tokens,
                 f.usage.completion_tokens, f.timings.ttft_s * 1e3, f.timings.e2e_s * 1e3, status);
  if (gone) {
    // Nothing to send: the cancel that ended it came from the disconnect.
  } else if (reason == nullptr) {
    SendError(status, f.reason == FinishReason::kDeadline ? "timeout_error" : "server_error",
              f.message.empty() ? FinishReasonName(f.reason) : f.message);
  } else if (stream_) {
    EmitPendingLocked();
    const std::vector<Json> end = chat_ ? ChatStreamEnd(meta_, reason, f, include_usage_)
                                        : CompletionStreamEnd(meta_, reason, f, include_usage_);
    std::string tail;
    for (const Json& j : end) tail += SseData(j);
    tail += kSseDone;
    ex_->Write(std::move(tail));
    ex_->EndStream();
  } else {
    Json lp = nullptr;
    if (logprobs_)
      lp = chat_ ? ChatLogprobs(events_, token_bytes_)
                 : CompletionLogprobs(events_, token_bytes_, &text_offset_);
    const Json body = chat_ ? ChatCompletion(meta_, content_, calls_, lp, reason, f)
                            : TextCompletion(meta_, echo_ + content_, lp, reason, f);
    HttpResponse r;
    r.body = body.dump(-1, ' ', false, Json::error_handler_t::replace);
    ex_->Respond(std::move(r));
  }

  server_.GenerationFinished();
}

}  // namespace brisk::server
