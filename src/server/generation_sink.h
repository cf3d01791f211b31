// The engine's view of one HTTP generation request: token events become OpenAI chunks (SSE) or
// accumulate into one response; the finish sends the end of the stream or the response, records
// metrics and the request log, and releases the server's in-flight count. Runs on the engine
// thread, so it only formats and queues (the exchange writes on its own I/O strand).
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "engine/request.h"
#include "server/api_server.h"
#include "server/openai_request.h"
#include "server/openai_response.h"
#include "server/tool_calls.h"

namespace brisk::server {

class GenerationSink : public RequestSink {
 public:
  GenerationSink(ApiServer& server, const LoadedModel& model, const OpenAiRequest& request,
                 std::shared_ptr<HttpExchange> ex, ResponseMeta meta, std::string echo_text,
                 uint64_t tool_seed);

  // Held by the submitter around Engine::Submit and Start(), so no event reaches the client
  // before the stream's header (the engine thread waits on it for microseconds at most).
  std::mutex& mutex() { return mu_; }
  // After a successful Submit (mutex held): opens the stream (header and role chunk).
  void StartLocked();

  void OnToken(const TokenEvent& e) override;
  void OnFinish(const FinishInfo& f) override;

 private:
  void EmitPendingLocked();  // stream: pending text/logprobs and tool calls
  void SendError(int status, const std::string& type, const std::string& message);

  ApiServer& server_;
  const LoadedModel& model_;
  std::shared_ptr<HttpExchange> ex_;
  ResponseMeta meta_;
  const bool chat_, stream_, include_usage_, logprobs_;
  TokenBytesFn token_bytes_;
  std::optional<ToolCallParser> tools_;
  std::mutex mu_;

  std::string echo_;                 // completions echo: the prompt text, sent first
  std::string pending_text_;         // stream: content not yet sent
  std::vector<TokenEvent> pending_;  // logprobs of tokens not yet sent (stream)
  int pending_tokens_ = 0;           // tokens coalesced into the next event
  std::string content_;              // non-stream: the whole content
  std::vector<TokenEvent> events_;   // non-stream: logprobs of every token
  std::vector<ToolCall> calls_;      // non-stream: every call; stream: calls not yet sent
  int calls_sent_ = 0;
  size_t text_offset_ = 0;  // completions logprobs text_offset
  std::chrono::steady_clock::time_point last_token_;
  bool any_token_ = false;
};

}  // namespace brisk::server
