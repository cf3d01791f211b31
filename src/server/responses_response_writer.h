// Responses API output (ResponseWriter): a `response` body, or a stream of typed events
// (responses_response.h) in which each run of text is one `message` item and each tool call the
// parser completes is one `function_call` item whose arguments come whole in one delta. Tool
// calls are parsed out of the content when the request offers tools, as for chat. A response that
// ends normally is kept in the ResponseStore (when the request asked to store it), with the
// conversation a `previous_response_id` continues from.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <vector>

#include "server/response_store.h"
#include "server/response_writer.h"
#include "server/tool_calls.h"

namespace brisk::server {

struct ResponsesContext {
  nlohmann::ordered_json settings;  // ResponsesRequest::settings
  // The conversation before this response's output (previous responses' and this input), stored
  // with the output appended.
  nlohmann::ordered_json conversation = nlohmann::ordered_json::array();
  ResponseStore* store = nullptr;     // nullptr: `store: false`
  std::optional<uint64_t> tool_seed;  // the call ids' generator when tools are offered
  uint64_t item_seed = 0;             // the message and function-call item ids'
};

class ResponsesResponseWriter : public ResponseWriter {
 public:
  ResponsesResponseWriter(WriterOptions options, ResponsesContext context);

  std::string FilterContent(const std::string& text) override;
  std::string FlushContent() override;
  bool made_tool_calls() const override;

  // response.created, response.in_progress.
  std::string StreamOpening() override;
  // Text: the message item's opening events (when none is open) and an output_text.delta; then
  // each newly completed call as a whole function_call item.
  std::string StreamDelta(const std::string& text, std::span<const TokenEvent> events) override;
  // response.failed, with the error in the response.
  std::string StreamError(const ApiError& e) override;
  // The response: a message (when there is text), then the function calls.
  std::string Body(const std::string& content, std::span<const TokenEvent> events,
                   const char* finish_reason, const FinishInfo& f) override;

 private:
  using Json = nlohmann::ordered_json;

  // The open message's closing events, response.completed or response.incomplete.
  std::vector<Json> FinishChunks(const char* finish_reason, const FinishInfo& f) override;
  std::string Frame(const Json& event) const override;
  std::string_view Terminator() const override { return {}; }

  // Appends the event {type, ...fields, sequence_number} to *out.
  void Emit(std::vector<Json>* out, const char* type, Json fields);
  std::string FrameAll(const std::vector<Json>& events) const;
  void OpenMessage(std::vector<Json>* out);
  void CloseMessage(std::vector<Json>* out, const char* status);
  void FunctionCallEvents(std::vector<Json>* out, const ToolCall& call);
  // The final response object for these output items; stored when asked to be.
  Json Finish(const FinishInfo& f, Json output, const std::string& text);
  std::string NewItemId(const char* prefix) { return NewResponseId(prefix, ids_); }

  ResponsesContext c_;
  std::mt19937_64 ids_;
  std::optional<ToolCallParser> tools_;
  std::vector<ToolCall> calls_;  // every call so far (streams: sent up to calls_sent_)
  size_t calls_sent_ = 0;
  // Streams: the finished output items, the open message, all text so far.
  Json output_ = Json::array();
  bool message_open_ = false;
  std::string message_id_, message_text_, text_;
  int sequence_ = 0;
};

}  // namespace brisk::server
