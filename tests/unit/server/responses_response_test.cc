// Responses API output: the builders (responses_response.h) against hand-written JSON of what
// openai-node's Response types hold, and ResponsesResponseWriter's bodies, stream event
// sequences (numbered, named, indexed), failures and what it keeps in the ResponseStore.
#include "server/responses_response.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "server/responses_response_writer.h"

namespace brisk::server {
namespace {

using Json = nlohmann::ordered_json;

ResponseMeta Meta() { return ResponseMeta{"resp_abc", 1700000000, "qwen"}; }

FinishInfo Finished(FinishReason reason = FinishReason::kStop) {
  FinishInfo f;
  f.reason = reason;
  f.usage.prompt_tokens = 20;
  f.usage.completion_tokens = 5;
  f.usage.cached_tokens = 16;
  return f;
}

Json Settings() {
  return Json{{"instructions", nullptr},
              {"max_output_tokens", 64},
              {"parallel_tool_calls", true},
              {"previous_response_id", nullptr},
              {"store", true},
              {"temperature", 1.0},
              {"text", {{"format", {{"type", "text"}}}}},
              {"tool_choice", "auto"},
              {"tools", Json::array()},
              {"top_p", 1.0},
              {"truncation", "disabled"},
              {"metadata", Json::object()}};
}

TEST(ResponsesResponseTest, UsageAndStatus) {
  EXPECT_EQ(ResponsesUsage(Finished().usage), Json::parse(R"({"input_tokens": 20,
      "input_tokens_details": {"cached_tokens": 16}, "output_tokens": 5,
      "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 25})"));
  EXPECT_STREQ(ResponseStatusOf(Finished()), "completed");
  EXPECT_STREQ(ResponseStatusOf(Finished(FinishReason::kLength)), "incomplete");
  for (FinishReason r : {FinishReason::kCancelled, FinishReason::kDeadline, FinishReason::kError})
    EXPECT_EQ(ResponseStatusOf(Finished(r)), nullptr);
  EXPECT_TRUE(IncompleteDetails(Finished()).is_null());
  EXPECT_EQ(IncompleteDetails(Finished(FinishReason::kLength)),
            Json::parse(R"({"reason": "max_output_tokens"})"));
}

TEST(ResponsesResponseTest, ItemsAndObject) {
  EXPECT_EQ(MessageItem("msg_1", "Hi", "completed"), Json::parse(R"({"id": "msg_1",
      "type": "message", "status": "completed", "role": "assistant", "content": [
      {"type": "output_text", "text": "Hi", "annotations": [], "logprobs": []}]})"));
  EXPECT_EQ(MessageItem("msg_1", "", "in_progress", false)["content"], Json::array());
  const ToolCall call{"call_1", "f", R"({"a":1})"};
  EXPECT_EQ(FunctionCallItem("fc_1", call, "completed"), Json::parse(R"({"id": "fc_1",
      "type": "function_call", "status": "completed", "call_id": "call_1", "name": "f",
      "arguments": "{\"a\":1}"})"));
  EXPECT_EQ(FunctionCallItem("fc_1", call, "in_progress")["arguments"], "");
  const Json r = ResponseObject(Meta(), Settings(), "completed", Json::array(),
                                ResponsesUsage(Finished().usage), nullptr, nullptr);
  EXPECT_EQ(r["id"], "resp_abc");
  EXPECT_EQ(r["object"], "response");
  EXPECT_EQ(r["created_at"], 1700000000);
  EXPECT_EQ(r["model"], "qwen");
  EXPECT_EQ(r["status"], "completed");
  EXPECT_TRUE(r["error"].is_null());
  EXPECT_TRUE(r.contains("incomplete_details"));
  EXPECT_EQ(r["max_output_tokens"], 64);
  EXPECT_EQ(r["tool_choice"], "auto");
  EXPECT_EQ(r["usage"]["total_tokens"], 25);
  EXPECT_FALSE(r.contains("user"));
}

// An SSE body split into events; each has an `event:` line equal to its data's type.
std::vector<Json> ParseSse(const std::string& sse) {
  std::vector<Json> out;
  size_t at = 0;
  while (at < sse.size()) {
    const size_t end = sse.find("\n\n", at);
    EXPECT_NE(end, std::string::npos) << "unterminated event: " << sse.substr(at);
    if (end == std::string::npos) break;
    const std::string ev = sse.substr(at, end - at);
    at = end + 2;
    const size_t nl = ev.find('\n');
    EXPECT_EQ(ev.rfind("event: ", 0), 0u) << ev;
    EXPECT_EQ(ev.compare(nl + 1, 6, "data: "), 0) << ev;
    Json data = Json::parse(ev.substr(nl + 7));
    EXPECT_EQ(data["type"], ev.substr(7, nl - 7));
    out.push_back(std::move(data));
  }
  return out;
}

std::vector<std::string> Types(const std::vector<Json>& events) {
  std::vector<std::string> types;
  for (size_t i = 0; i < events.size(); ++i) {
    EXPECT_EQ(events[i]["sequence_number"], i) << events[i].dump();
    types.push_back(events[i]["type"]);
  }
  return types;
}

WriterOptions Options() {
  WriterOptions o;
  o.meta = Meta();
  return o;
}

ResponsesContext Context(ResponseStore* store = nullptr, bool tools = false) {
  ResponsesContext c;
  c.settings = Settings();
  c.conversation = Json::parse(R"([{"role": "user", "content": "hi"}])");
  c.store = store;
  if (tools) c.tool_seed = 7;
  c.item_seed = 3;
  return c;
}

// Feeds `pieces` as GenerationSink does for a stream, and ends it.
std::string Stream(ResponsesResponseWriter& w, const std::vector<std::string>& pieces,
                   const FinishInfo& f) {
  std::string out = w.StreamOpening();
  for (const std::string& p : pieces) out += w.StreamDelta(w.FilterContent(p), {});
  out += w.StreamDelta(w.FlushContent(), {});
  out += w.StreamEnd("stop", f);
  return out;
}

const std::string kCall =
    "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>";

TEST(ResponsesResponseWriterTest, TextStream) {
  ResponsesResponseWriter w(Options(), Context());
  const std::string sse = Stream(w, {"Hel", "lo", "", "!"}, Finished());
  EXPECT_EQ(sse.find("[DONE]"), std::string::npos);
  const auto ev = ParseSse(sse);
  ASSERT_EQ(Types(ev), (std::vector<std::string>{
                           "response.created", "response.in_progress", "response.output_item.added",
                           "response.content_part.added", "response.output_text.delta",
                           "response.output_text.delta", "response.output_text.delta",
                           "response.output_text.done", "response.content_part.done",
                           "response.output_item.done", "response.completed"}));
  EXPECT_EQ(ev[0]["response"]["status"], "in_progress");
  EXPECT_EQ(ev[0]["response"]["output"], Json::array());
  EXPECT_TRUE(ev[0]["response"]["usage"].is_null());
  const std::string item_id = ev[2]["item"]["id"];
  EXPECT_EQ(item_id.rfind("msg_", 0), 0u);
  std::string text;
  for (size_t i = 4; i <= 6; ++i) {
    EXPECT_EQ(ev[i]["item_id"], item_id);
    EXPECT_EQ(ev[i]["output_index"], 0);
    EXPECT_EQ(ev[i]["content_index"], 0);
    text += ev[i]["delta"].get<std::string>();
  }
  EXPECT_EQ(text, "Hello!");
  EXPECT_EQ(ev[7]["text"], "Hello!");
  EXPECT_EQ(ev[8]["part"]["text"], "Hello!");
  EXPECT_EQ(ev[9]["item"], MessageItem(item_id, "Hello!", "completed"));
  const Json& done = ev[10]["response"];
  EXPECT_EQ(done["status"], "completed");
  EXPECT_EQ(done["output"], Json::array({ev[9]["item"]}));
  EXPECT_EQ(done["usage"]["output_tokens"], 5);
}

TEST(ResponsesResponseWriterTest, IncompleteStreamAndEmptyOutput) {
  ResponsesResponseWriter w(Options(), Context());
  auto ev = ParseSse(Stream(w, {"abc"}, Finished(FinishReason::kLength)));
  EXPECT_EQ(ev.back()["type"], "response.incomplete");
  EXPECT_EQ(ev.back()["response"]["status"], "incomplete");
  EXPECT_EQ(ev.back()["response"]["incomplete_details"]["reason"], "max_output_tokens");
  EXPECT_EQ(ev.back()["response"]["output"][0]["status"], "incomplete");
  ResponsesResponseWriter empty(Options(), Context());
  ev = ParseSse(Stream(empty, {}, Finished()));
  ASSERT_EQ(Types(ev), (std::vector<std::string>{"response.created", "response.in_progress",
                                                 "response.completed"}));
  EXPECT_EQ(ev.back()["response"]["output"], Json::array());
}

TEST(ResponsesResponseWriterTest, FunctionCallStream) {
  ResponsesResponseWriter w(Options(), Context(nullptr, /*tools=*/true));
  // Text, then the call in pieces with its tags split.
  const auto ev = ParseSse(Stream(w,
                                  {"Let me see. <tool", "_call>\n{\"name\": \"get_weather\", ",
                                   "\"arguments\": {\"city\": \"Paris\"}}\n</tool_", "call>"},
                                  Finished()));
  const auto types = Types(ev);
  ASSERT_EQ(types.size(), 13u) << Json(types).dump();
  EXPECT_EQ(std::vector<std::string>(types.begin() + 7, types.end()),
            (std::vector<std::string>{"response.output_item.done", "response.output_item.added",
                                      "response.function_call_arguments.delta",
                                      "response.function_call_arguments.done",
                                      "response.output_item.done", "response.completed"}))
      << Json(types).dump();
  const Json& added = ev[8];
  EXPECT_EQ(added["output_index"], 1);
  EXPECT_EQ(added["item"]["type"], "function_call");
  EXPECT_EQ(added["item"]["status"], "in_progress");
  EXPECT_EQ(added["item"]["arguments"], "");
  const std::string fc_id = added["item"]["id"];
  EXPECT_EQ(fc_id.rfind("fc_", 0), 0u);
  EXPECT_EQ(ev[9]["item_id"], fc_id);
  EXPECT_EQ(ev[9]["delta"], R"({"city":"Paris"})");
  EXPECT_EQ(ev[10]["arguments"], R"({"city":"Paris"})");
  EXPECT_EQ(ev[10]["name"], "get_weather");
  const Json& item = ev[11]["item"];
  EXPECT_EQ(item["status"], "completed");
  EXPECT_EQ(item["call_id"].get<std::string>().rfind("call_", 0), 0u);
  const Json& output = ev.back()["response"]["output"];
  ASSERT_EQ(output.size(), 2u);
  EXPECT_EQ(output[0]["content"][0]["text"], "Let me see. ");
  EXPECT_EQ(output[1], item);
}

TEST(ResponsesResponseWriterTest, WholeBodyAndWithoutToolsTheMarkupIsText) {
  ResponsesResponseWriter w(Options(), Context(nullptr, /*tools=*/true));
  std::string content = w.FilterContent("Sure. " + kCall);
  content += w.FlushContent();
  const Json r = Json::parse(w.Body(content, {}, "tool_calls", Finished()));
  EXPECT_EQ(r["status"], "completed");
  ASSERT_EQ(r["output"].size(), 2u) << r.dump(2);
  EXPECT_EQ(r["output"][0]["content"][0]["text"], "Sure. ");
  EXPECT_EQ(r["output"][1]["name"], "get_weather");
  EXPECT_EQ(r["output"][1]["arguments"], R"({"city":"Paris"})");
  EXPECT_EQ(r["usage"]["input_tokens_details"]["cached_tokens"], 16);
  ResponsesResponseWriter plain(Options(), Context());
  const Json p = Json::parse(plain.Body(plain.FilterContent(kCall), {}, "stop", Finished()));
  EXPECT_EQ(p["output"][0]["content"][0]["text"], kCall);
}

TEST(ResponsesResponseWriterTest, FailureIsResponseFailed) {
  ResponsesResponseWriter w(Options(), Context());
  std::string sse = w.StreamOpening();  // one call per statement: events are numbered in order
  sse += w.StreamDelta("par", {});
  sse += w.StreamError(MakeError(504, "timeout_error", "deadline exceeded"));
  const auto ev = ParseSse(sse);
  const auto types = Types(ev);
  EXPECT_EQ(types.back(), "response.failed");
  const Json& r = ev.back()["response"];
  EXPECT_EQ(r["status"], "failed");
  EXPECT_EQ(r["error"],
            Json::parse(R"({"code": "timeout_error", "message": "deadline exceeded"})"));
  EXPECT_EQ(r["output"][0]["status"], "incomplete");
}

TEST(ResponsesResponseWriterTest, StoresTheConversationWithTheOutput) {
  ResponseStore store({});
  ResponsesResponseWriter w(Options(), Context(&store, /*tools=*/true));
  const std::string content = w.FilterContent("Ok. " + kCall) + w.FlushContent();
  const Json body = Json::parse(w.Body(content, {}, "tool_calls", Finished()));
  auto stored = store.Get("resp_abc");
  ASSERT_NE(stored, nullptr);
  EXPECT_EQ(stored->response, body);
  const std::string call_id = body["output"][1]["call_id"];
  EXPECT_EQ(stored->conversation, Json::parse(R"([{"role": "user", "content": "hi"},
      {"role": "assistant", "content": "Ok. ", "tool_calls": [{"id": ")" +
                                              call_id +
                                              R"(", "type": "function", "function": {
      "name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}}]}])"))
      << stored->conversation.dump(2);
  // Streams store the same; store: false (no store) and failures store nothing.
  ResponseStore streamed({});
  ResponsesResponseWriter s(Options(), Context(&streamed));
  const auto ev = ParseSse(Stream(s, {"Hi"}, Finished()));
  ASSERT_NE(streamed.Get("resp_abc"), nullptr);
  EXPECT_EQ(streamed.Get("resp_abc")->response, ev.back()["response"]);
  EXPECT_EQ(streamed.Get("resp_abc")->conversation.back(),
            Json::parse(R"({"role": "assistant", "content": "Hi"})"));
  ResponseStore failed({});
  ResponsesResponseWriter f(Options(), Context(&failed));
  f.StreamOpening();
  f.StreamError(MakeError(500, "server_error", "boom"));
  EXPECT_EQ(failed.stats().responses, 0u);
}

}  // namespace
}  // namespace brisk::server
