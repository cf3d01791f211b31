// The engine's view of one HTTP generation request: token events become content for the client
// (streamed as SSE, coalesced while the client is still receiving, or accumulated into one
// response), and the finish records metrics and the request log, sends the end, and releases the
// server's in-flight count. The API's shape is the ResponseWriter's (chat or completion).
//
// Every method runs on the engine thread and nothing here is shared with the HTTP side: the
// stream's header goes out with the first event, so the submitter never touches the exchange
// after Engine::Submit and no lock is needed (the exchange queues writes for its I/O strand).
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "engine/request.h"
#include "server/api_server.h"
#include "server/choice_group.h"
#include "server/response_writer.h"

namespace brisk::server {

// How a finished request is reported: HTTP status, the OpenAI finish_reason (nullptr: the
// request failed and is answered with an error), and the labels for metrics and logs.
struct FinishOutcome {
  const char* finish_reason = nullptr;
  int status = 200;
  std::string metrics_label;  // finished_reason label ("stop", "length", "abort", ...)
  std::string shown_reason;   // the log's finish reason
};

// gone: the client disconnected first (499, nginx's convention; log only).
FinishOutcome ClassifyFinish(const FinishInfo& f, bool gone, bool tool_calls_emitted);

class GenerationSink : public RequestSink {
 public:
  // group: the request's other choices (n > 1, batched prompts), or null for a single choice.
  GenerationSink(ApiServer& server, std::shared_ptr<HttpExchange> ex, bool stream,
                 std::unique_ptr<ResponseWriter> writer,
                 std::shared_ptr<ChoiceGroup> group = nullptr);

  void OnPromptLogprobs(std::span<const TokenEvent> prompt) override;
  void OnToken(const TokenEvent& e) override;
  void OnFinish(const FinishInfo& f) override;

 private:
  bool StartStreamOnce();  // false: a group's other choice failed, nothing more goes out
  void SendPending();      // stream: the content and logprobs not yet sent
  void Record(const FinishInfo& f, const FinishOutcome& o);
  void SendError(const FinishInfo& f, const FinishOutcome& o);
  void SendEnd(const FinishInfo& f, const FinishOutcome& o);

  ApiServer& server_;
  std::shared_ptr<HttpExchange> ex_;
  const bool stream_;
  std::unique_ptr<ResponseWriter> writer_;
  const std::shared_ptr<ChoiceGroup> group_;

  bool started_ = false;             // stream: header sent
  std::string pending_text_;         // stream: content not yet sent
  std::vector<TokenEvent> pending_;  // stream: token events not yet sent (for logprobs)
  int pending_tokens_ = 0;           // tokens coalesced into the next event
  std::string content_;              // whole response: the content
  std::vector<TokenEvent> events_;   // whole response: every token event (for logprobs)
  std::chrono::steady_clock::time_point last_token_;
  bool any_token_ = false;
};

}  // namespace brisk::server
