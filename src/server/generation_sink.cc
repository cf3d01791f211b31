#include "server/generation_sink.h"

#include <cstdio>

#include "server/api_error.h"
#include "server/metrics.h"

namespace brisk::server {

FinishOutcome ClassifyFinish(const FinishInfo& f, bool gone, bool tool_calls_emitted) {
  FinishOutcome o;
  o.finish_reason = OpenAiFinishReason(f, tool_calls_emitted);
  o.status = gone                                  ? 499
             : o.finish_reason != nullptr          ? 200
             : f.reason == FinishReason::kDeadline ? 504
                                                   : 500;
  o.metrics_label = gone ? "abort" : std::string(FinishedReasonLabel(f.reason));
  o.shown_reason = o.finish_reason ? o.finish_reason : FinishReasonName(f.reason);
  return o;
}

GenerationSink::GenerationSink(ApiServer& server, std::shared_ptr<HttpExchange> ex, bool stream,
                               std::unique_ptr<ResponseWriter> writer,
                               std::shared_ptr<ChoiceGroup> group)
    : server_(server),
      ex_(std::move(ex)),
      stream_(stream),
      writer_(std::move(writer)),
      group_(std::move(group)) {}

bool GenerationSink::StartStreamOnce() {
  if (group_ && group_->failed()) return false;
  if (started_) return true;
  started_ = true;
  if (group_)
    group_->StartStream();
  else
    ex_->StartStream(200, "text/event-stream");
  if (std::string opening = writer_->StreamOpening(); !opening.empty())
    ex_->Write(std::move(opening));
  return true;
}

void GenerationSink::OnPromptLogprobs(std::span<const TokenEvent> prompt) {
  writer_->SetPromptLogprobs(prompt);
}

void GenerationSink::SendPending() {
  if (std::string delta = writer_->StreamDelta(pending_text_, pending_); !delta.empty())
    ex_->Write(std::move(delta));
  pending_text_.clear();
  pending_.clear();
  pending_tokens_ = 0;
}

void GenerationSink::OnToken(const TokenEvent& e) {
  const auto now = std::chrono::steady_clock::now();
  if (any_token_)
    server_.metrics()->OnTokens(1, std::chrono::duration<double>(now - last_token_).count());
  any_token_ = true;
  last_token_ = now;
  if (ex_->disconnected()) return;         // the cancel is on its way
  if (group_ && group_->failed()) return;  // the answer is settled

  const std::string text = writer_->FilterContent(e.text);
  const bool logprobs = writer_->options().logprobs;
  if (!stream_) {
    content_ += text;
    if (logprobs) events_.push_back(e);
    return;
  }
  if (!StartStreamOnce()) return;
  pending_text_ += text;
  if (logprobs) pending_.push_back(e);
  ++pending_tokens_;
  // --stream-interval: while the client is still receiving earlier events, later tokens are
  // coalesced (up to the interval) instead of queueing one event per token.
  const bool client_busy = ex_->queued_bytes() > 0;
  if (pending_tokens_ >= server_.options().stream_interval || !client_busy) SendPending();
}

void GenerationSink::OnFinish(const FinishInfo& f) {
  (stream_ ? pending_text_ : content_) += writer_->FlushContent();
  const FinishOutcome o = ClassifyFinish(f, ex_->disconnected(), writer_->made_tool_calls());
  // Metrics and the log are recorded before the client can see the end, so a client that reads
  // /metrics right after its response always finds its own request counted.
  Record(f, o);
  if (o.status == 499) {
    // Nothing to send: the cancel that ended it came from the disconnect.
  } else if (o.finish_reason == nullptr) {
    SendError(f, o);
  } else {
    SendEnd(f, o);
  }
  server_.GenerationFinished();
}

void GenerationSink::Record(const FinishInfo& f, const FinishOutcome& o) {
  if (group_ && group_->IsCopy(writer_->options().meta.index)) {
    // vLLM counts a request's prompt once however many choices it asked for.
    FinishInfo copy = f;
    copy.usage.prompt_tokens = copy.usage.cached_tokens = 0;
    server_.metrics()->OnRequestFinished(copy, o.metrics_label);
  } else {
    server_.metrics()->OnRequestFinished(f, o.metrics_label);
  }
  if (RequestLog* log = server_.request_log()) {
    const ResponseMeta& meta = writer_->options().meta;
    RequestLogEntry e;
    e.id = meta.id;
    e.model = meta.model;
    e.finish_reason = o.shown_reason;
    e.usage = f.usage;
    e.timings = f.timings;
    e.stream = stream_;
    e.status = o.status;
    e.error = f.message;
    log->Write(e);  // queued: the engine thread never waits for the file
  }
  if (server_.options().log_requests)
    std::fprintf(stderr,
                 "brisk serve: %s %s prompt %d (cached %d) completion %d ttft %.1f ms e2e %.1f ms "
                 "status %d\n",
                 writer_->options().meta.id.c_str(), o.shown_reason.c_str(), f.usage.prompt_tokens,
                 f.usage.cached_tokens, f.usage.completion_tokens, f.timings.ttft_s * 1e3,
                 f.timings.e2e_s * 1e3, o.status);
}

void GenerationSink::SendError(const FinishInfo& f, const FinishOutcome& o) {
  const std::string& message = f.message.empty() ? o.shown_reason : f.message;
  const char* type = f.reason == FinishReason::kDeadline ? "timeout_error" : "server_error";
  const ApiError err = MakeError(o.status, type, message);
  if (group_)
    return group_->ChoiceFailed(ErrorResponse(err, writer_->error_shape()),
                                writer_->StreamError(err));
  if (!stream_) return ex_->Respond(ErrorResponse(err, writer_->error_shape()));
  StartStreamOnce();
  ex_->Write(writer_->StreamError(err));
  ex_->EndStream();
}

void GenerationSink::SendEnd(const FinishInfo& f, const FinishOutcome& o) {
  if (!stream_) {
    std::string body = writer_->Body(content_, events_, o.finish_reason, f);
    if (group_) return group_->ChoiceFinished(writer_->options().meta.index, body, f);
    HttpResponse r;
    r.body = std::move(body);
    return ex_->Respond(std::move(r));
  }
  if (!StartStreamOnce()) return;
  SendPending();
  if (!group_) {
    ex_->Write(writer_->StreamEnd(o.finish_reason, f));
    return ex_->EndStream();
  }
  ex_->Write(writer_->StreamChoiceEnd(o.finish_reason, f));
  group_->ChoiceFinished(writer_->options().meta.index, {}, f);
}

}  // namespace brisk::server
