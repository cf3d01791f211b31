// How one generation's output is shaped for its API (DESIGN §6): chat.completion,
// text_completion or an Anthropic message, streamed as SSE events or sent as one body.
// GenerationSink owns the flow (metrics, coalescing, the finish); a writer only formats, so each
// API is one small type (chat_response_writer.h, completion_response_writer.h,
// anthropic_response_writer.h). The defaults below are OpenAI's framing and error shape.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/request.h"
#include "server/api_error.h"
#include "server/openai_response.h"

namespace brisk::server {

struct WriterOptions {
  ResponseMeta meta;
  TokenBytesFn token_bytes;
  bool logprobs = false;       // logprobs or top_logprobs were asked for
  bool include_usage = false;  // streams: stream_options.include_usage
};

class ResponseWriter {
 public:
  explicit ResponseWriter(WriterOptions options) : o_(std::move(options)) {}
  virtual ~ResponseWriter() = default;
  const WriterOptions& options() const { return o_; }

  // The part of a token's text that is content (chat: tool-call markup is taken out and kept as
  // calls), and at the end the content still held back.
  virtual std::string FilterContent(const std::string& text) { return text; }
  virtual std::string FlushContent() { return {}; }
  virtual bool made_tool_calls() const { return false; }

  // Streams, as SSE bytes: what follows the header; the content (and logprobs of `events`) that
  // arrived since the last delta, "" if nothing is to be sent.
  virtual std::string StreamOpening() = 0;
  virtual std::string StreamDelta(const std::string& text, std::span<const TokenEvent> events) = 0;

  // The end of a stream: the API's finish chunks (finish_reason, then usage when asked for),
  // each framed as the API frames events, and its terminator.
  std::string StreamEnd(const char* finish_reason, const FinishInfo& f) {
    std::string out = StreamChoiceEnd(finish_reason, f);
    out += Terminator();
    return out;
  }
  // The finish chunks alone: one choice of several (ChoiceGroup ends the stream).
  std::string StreamChoiceEnd(const char* finish_reason, const FinishInfo& f) {
    std::string out;
    for (const nlohmann::ordered_json& j : FinishChunks(finish_reason, f)) out += Frame(j);
    return out;
  }

  // The prompt's logprobs (GenerationRequest::prompt_logprobs), before any token: only completions
  // with echo ask for them.
  virtual void SetPromptLogprobs(std::span<const TokenEvent> prompt) { (void)prompt; }

  // A failure after the stream started: the error as the stream's last event.
  std::string StreamError(const ApiError& e) { return Frame(ErrorObject(e, error_shape())); }
  // The error body of a failed request (before a stream or instead of a whole response).
  virtual ErrorShape error_shape() const { return ErrorShape::kOpenAi; }

  // Whole responses: the JSON body.
  virtual std::string Body(const std::string& content, std::span<const TokenEvent> events,
                           const char* finish_reason, const FinishInfo& f) = 0;

 protected:
  virtual std::vector<nlohmann::ordered_json> FinishChunks(const char* finish_reason,
                                                           const FinishInfo& f) = 0;

  // One event of a stream. OpenAI sends bare `data:` lines and ends with [DONE]; Anthropic names
  // every event (an `event:` line) and has no terminator, so both are the writer's to choose.
  virtual std::string Frame(const nlohmann::ordered_json& event) const { return SseData(event); }
  virtual std::string_view Terminator() const { return kSseDone; }

  const WriterOptions o_;
};

}  // namespace brisk::server
