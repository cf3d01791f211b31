#include "server/responses_response_writer.h"

#include <memory>
#include <utility>

#include "server/responses_response.h"

namespace brisk::server {

using Json = nlohmann::ordered_json;

ResponsesResponseWriter::ResponsesResponseWriter(WriterOptions options, ResponsesContext context)
    : ResponseWriter(std::move(options)), c_(std::move(context)), ids_(c_.item_seed) {
  if (c_.tool_seed) tools_.emplace(*c_.tool_seed, "call_");
}

std::string ResponsesResponseWriter::FilterContent(const std::string& text) {
  return tools_ ? tools_->Feed(text, &calls_) : text;
}

std::string ResponsesResponseWriter::FlushContent() {
  return tools_ ? tools_->Finish(&calls_) : "";
}

bool ResponsesResponseWriter::made_tool_calls() const {
  return tools_ && tools_->calls_emitted() > 0;
}

void ResponsesResponseWriter::Emit(std::vector<Json>* out, const char* type, Json fields) {
  Json e = ResponsesEvent(type, std::move(fields));
  e["sequence_number"] = sequence_++;
  out->push_back(std::move(e));
}

std::string ResponsesResponseWriter::FrameAll(const std::vector<Json>& events) const {
  std::string s;
  for (const Json& e : events) s += Frame(e);
  return s;
}

std::string ResponsesResponseWriter::Frame(const Json& event) const {
  return ResponsesSseEvent(event);
}

std::string ResponsesResponseWriter::StreamOpening() {
  std::vector<Json> events;
  const Json response =
      ResponseObject(o_.meta, c_.settings, "in_progress", Json::array(), nullptr, nullptr, nullptr);
  Emit(&events, "response.created", Json{{"response", response}});
  Emit(&events, "response.in_progress", Json{{"response", response}});
  return FrameAll(events);
}

void ResponsesResponseWriter::OpenMessage(std::vector<Json>* out) {
  message_open_ = true;
  message_id_ = NewItemId("msg_");
  message_text_.clear();
  const int index = int(output_.size());
  Emit(out, "response.output_item.added",
       Json{{"output_index", index},
            {"item", MessageItem(message_id_, "", "in_progress", /*with_text=*/false)}});
  Emit(out, "response.content_part.added",
       Json{{"item_id", message_id_},
            {"output_index", index},
            {"content_index", 0},
            {"part", OutputTextPart("")}});
}

void ResponsesResponseWriter::CloseMessage(std::vector<Json>* out, const char* status) {
  if (!message_open_) return;
  message_open_ = false;
  const int index = int(output_.size());
  Emit(out, "response.output_text.done",
       Json{{"item_id", message_id_},
            {"output_index", index},
            {"content_index", 0},
            {"text", message_text_},
            {"logprobs", Json::array()}});
  Emit(out, "response.content_part.done",
       Json{{"item_id", message_id_},
            {"output_index", index},
            {"content_index", 0},
            {"part", OutputTextPart(message_text_)}});
  Json item = MessageItem(message_id_, message_text_, status);
  Emit(out, "response.output_item.done", Json{{"output_index", index}, {"item", item}});
  output_.push_back(std::move(item));
}

void ResponsesResponseWriter::FunctionCallEvents(std::vector<Json>* out, const ToolCall& call) {
  CloseMessage(out, "completed");
  const std::string id = NewItemId("fc_");
  const int index = int(output_.size());
  Emit(out, "response.output_item.added",
       Json{{"output_index", index}, {"item", FunctionCallItem(id, call, "in_progress")}});
  Emit(out, "response.function_call_arguments.delta",
       Json{{"item_id", id}, {"output_index", index}, {"delta", call.arguments}});
  Emit(out, "response.function_call_arguments.done",
       Json{{"item_id", id},
            {"output_index", index},
            {"name", call.name},
            {"arguments", call.arguments}});
  Json item = FunctionCallItem(id, call, "completed");
  Emit(out, "response.output_item.done", Json{{"output_index", index}, {"item", item}});
  output_.push_back(std::move(item));
}

std::string ResponsesResponseWriter::StreamDelta(const std::string& text,
                                                 std::span<const TokenEvent> /*events*/) {
  std::vector<Json> events;
  if (!text.empty()) {
    if (!message_open_) OpenMessage(&events);
    message_text_ += text;
    text_ += text;
    Emit(&events, "response.output_text.delta",
         Json{{"item_id", message_id_},
              {"output_index", int(output_.size())},
              {"content_index", 0},
              {"delta", text},
              {"logprobs", Json::array()}});
  }
  for (; calls_sent_ < calls_.size(); ++calls_sent_)
    FunctionCallEvents(&events, calls_[calls_sent_]);
  return FrameAll(events);
}

std::vector<Json> ResponsesResponseWriter::FinishChunks(const char* /*finish_reason*/,
                                                        const FinishInfo& f) {
  std::vector<Json> events;
  const char* status = ResponseStatusOf(f);
  CloseMessage(&events,
               status && std::string_view(status) == "incomplete" ? "incomplete" : "completed");
  Json response = Finish(f, output_, text_);
  Emit(&events,
       status && std::string_view(status) == "incomplete" ? "response.incomplete"
                                                          : "response.completed",
       Json{{"response", std::move(response)}});
  return events;
}

std::string ResponsesResponseWriter::StreamError(const ApiError& e) {
  std::vector<Json> events;
  CloseMessage(&events, "incomplete");
  const Json error = {{"code", e.code.empty() ? e.type : e.code}, {"message", e.message}};
  Emit(&events, "response.failed",
       Json{{"response",
             ResponseObject(o_.meta, c_.settings, "failed", output_, nullptr, nullptr, error)}});
  return FrameAll(events);
}

std::string ResponsesResponseWriter::Body(const std::string& content,
                                          std::span<const TokenEvent> /*events*/,
                                          const char* /*finish_reason*/, const FinishInfo& f) {
  Json output = Json::array();
  const char* status = ResponseStatusOf(f);
  if (!content.empty())
    output.push_back(MessageItem(NewItemId("msg_"), content, status ? status : "incomplete"));
  for (const ToolCall& call : calls_)
    output.push_back(FunctionCallItem(NewItemId("fc_"), call, "completed"));
  return Finish(f, std::move(output), content).dump(-1, ' ', false, Json::error_handler_t::replace);
}

Json ResponsesResponseWriter::Finish(const FinishInfo& f, Json output, const std::string& text) {
  const char* status = ResponseStatusOf(f);
  Json response =
      ResponseObject(o_.meta, c_.settings, status ? status : "failed", std::move(output),
                     ResponsesUsage(f.usage), IncompleteDetails(f), nullptr);
  if (!c_.store || !status) return response;
  // The assistant turn as the chat route keeps it: text and tool calls in one message.
  Json turn = {{"role", "assistant"}, {"content", text}};
  if (!calls_.empty()) {
    Json tool_calls = Json::array();
    for (const ToolCall& call : calls_) {
      tool_calls.push_back(
          Json{{"id", call.id},
               {"type", "function"},
               {"function", {{"name", call.name}, {"arguments", call.arguments}}}});
    }
    turn["tool_calls"] = std::move(tool_calls);
  }
  auto stored = std::make_shared<StoredResponse>();
  stored->id = o_.meta.id;
  stored->response = response;
  stored->conversation = std::move(c_.conversation);
  stored->conversation.push_back(std::move(turn));
  c_.store->Put(std::move(stored));
  return response;
}

}  // namespace brisk::server
