// Anthropic Messages output: the builders (anthropic_response.h) against hand-written JSON of
// what Anthropic's SDKs read, and AnthropicResponseWriter's whole bodies and stream event
// sequences for text, tool_use and both, fed the way GenerationSink feeds a writer.
#include "server/anthropic_response.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "server/anthropic_response_writer.h"

namespace brisk::server {
namespace {

using Json = nlohmann::ordered_json;

ResponseMeta Meta() { return ResponseMeta{"msg_abc", 1700000000, "qwen"}; }

FinishInfo Finished(FinishReason reason = FinishReason::kStop, std::string stop = "") {
  FinishInfo f;
  f.reason = reason;
  f.stop_matched = std::move(stop);
  f.usage.prompt_tokens = 20;
  f.usage.completion_tokens = 5;
  f.usage.cached_tokens = 16;
  return f;
}

TEST(AnthropicResponseTest, StopReasons) {
  EXPECT_STREQ(AnthropicStopReason(Finished(), false), "end_turn");
  EXPECT_STREQ(AnthropicStopReason(Finished(), true), "tool_use");
  EXPECT_STREQ(AnthropicStopReason(Finished(FinishReason::kStop, "END"), false), "stop_sequence");
  EXPECT_STREQ(AnthropicStopReason(Finished(FinishReason::kStop, "END"), true), "tool_use");
  EXPECT_STREQ(AnthropicStopReason(Finished(FinishReason::kLength), false), "max_tokens");
  EXPECT_STREQ(AnthropicStopReason(Finished(FinishReason::kLength), true), "max_tokens");
  for (FinishReason r : {FinishReason::kCancelled, FinishReason::kDeadline, FinishReason::kError})
    EXPECT_EQ(AnthropicStopReason(Finished(r), false), nullptr);
  EXPECT_EQ(AnthropicStopSequence(Finished(FinishReason::kStop, "END"), false), "END");
  EXPECT_TRUE(AnthropicStopSequence(Finished(FinishReason::kStop, "END"), true).is_null());
  EXPECT_TRUE(AnthropicStopSequence(Finished(), false).is_null());
}

TEST(AnthropicResponseTest, TextMessage) {
  const Json j = AnthropicMessage(Meta(), "Hello!", {}, Finished(FinishReason::kStop, "END"));
  EXPECT_EQ(j, Json::parse(R"({"id": "msg_abc", "type": "message", "role": "assistant",
      "model": "qwen", "content": [{"type": "text", "text": "Hello!"}],
      "stop_reason": "stop_sequence", "stop_sequence": "END",
      "usage": {"input_tokens": 20, "output_tokens": 5}})"))
      << j.dump(2);
  // Nothing generated: no blocks (an empty text block is not valid in a request either).
  EXPECT_EQ(AnthropicMessage(Meta(), "", {}, Finished())["content"], Json::array());
}

TEST(AnthropicResponseTest, ToolUseMessage) {
  const std::vector<ToolCall> calls = {{"toolu_1", "get_weather", R"({"city":"Paris"})"},
                                       {"toolu_2", "now", "{}"}};
  const Json j = AnthropicMessage(Meta(), "Let me see.", calls, Finished());
  EXPECT_EQ(j["content"], Json::parse(R"([{"type": "text", "text": "Let me see."},
      {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}},
      {"type": "tool_use", "id": "toolu_2", "name": "now", "input": {}}])"))
      << j.dump(2);
  EXPECT_EQ(j["stop_reason"], "tool_use");
  EXPECT_TRUE(j["stop_sequence"].is_null());
  // A stream's content_block_start carries an empty input; the input follows as deltas.
  EXPECT_EQ(AnthropicToolUseBlock(calls[0], /*with_input=*/false)["input"], Json::object());
}

TEST(AnthropicResponseTest, EventsAndFraming) {
  EXPECT_EQ(MessageStartEvent(Meta(), 12), Json::parse(R"({"type": "message_start", "message": {
      "id": "msg_abc", "type": "message", "role": "assistant", "model": "qwen", "content": [],
      "stop_reason": null, "stop_sequence": null,
      "usage": {"input_tokens": 12, "output_tokens": 0}}})"));
  EXPECT_EQ(ContentBlockStartEvent(0, AnthropicTextBlock("")),
            Json::parse(R"({"type": "content_block_start", "index": 0,
                            "content_block": {"type": "text", "text": ""}})"));
  EXPECT_EQ(TextDeltaEvent(2, "Hi"), Json::parse(R"({"type": "content_block_delta", "index": 2,
      "delta": {"type": "text_delta", "text": "Hi"}})"));
  EXPECT_EQ(InputJsonDeltaEvent(1, R"({"a":1})"),
            Json::parse(R"({"type": "content_block_delta", "index": 1,
                "delta": {"type": "input_json_delta", "partial_json": "{\"a\":1}"}})"));
  EXPECT_EQ(ContentBlockStopEvent(3), Json::parse(R"({"type": "content_block_stop", "index": 3})"));
  EXPECT_EQ(MessageDeltaEvent(Finished(FinishReason::kLength), false),
            Json::parse(R"({"type": "message_delta",
                "delta": {"stop_reason": "max_tokens", "stop_sequence": null},
                "usage": {"output_tokens": 5}})"));
  EXPECT_EQ(MessageStopEvent(), Json::parse(R"({"type": "message_stop"})"));
  EXPECT_EQ(AnthropicSseEvent(MessageStopEvent()),
            "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
  // Invalid UTF-8 from the model never breaks the framing.
  EXPECT_EQ(AnthropicSseEvent(TextDeltaEvent(0, "\xC3")).find("event: content_block_delta\n"), 0u);
}

// An SSE body split into (event name, data) pairs; the name must equal the data's type.
std::vector<std::pair<std::string, Json>> ParseSse(const std::string& sse) {
  std::vector<std::pair<std::string, Json>> out;
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
    const std::string name = ev.substr(7, nl - 7);
    EXPECT_EQ(data["type"], name);
    out.emplace_back(name, std::move(data));
  }
  return out;
}

std::vector<std::string> Names(const std::vector<std::pair<std::string, Json>>& events) {
  std::vector<std::string> names;
  for (const auto& e : events) names.push_back(e.first);
  return names;
}

WriterOptions Options() {
  WriterOptions o;
  o.meta = Meta();
  return o;
}

// Feeds `pieces` as GenerationSink does for a stream with one token per event, and ends it.
std::string Stream(AnthropicResponseWriter& w, const std::vector<std::string>& pieces,
                   const FinishInfo& f) {
  std::string out = w.StreamOpening();
  for (const std::string& p : pieces) out += w.StreamDelta(w.FilterContent(p), {});
  out += w.StreamDelta(w.FlushContent(), {});
  out += w.StreamEnd("stop", f);
  return out;
}

const std::string kCall =
    "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": 3}}"
    "\n</tool_call>";

TEST(AnthropicResponseWriterTest, TextStream) {
  AnthropicResponseWriter w(Options(), 20, std::nullopt);
  const auto ev = ParseSse(Stream(w, {"Hel", "lo", "", "!"}, Finished()));
  EXPECT_EQ(Names(ev),
            (std::vector<std::string>{"message_start", "content_block_start", "content_block_delta",
                                      "content_block_delta", "content_block_delta",
                                      "content_block_stop", "message_delta", "message_stop"}));
  EXPECT_EQ(ev[0].second["message"]["usage"]["input_tokens"], 20);
  EXPECT_EQ(ev[0].second["message"]["id"], "msg_abc");
  EXPECT_EQ(ev[1].second["content_block"], Json::parse(R"({"type": "text", "text": ""})"));
  std::string text;
  for (size_t i = 2; i <= 4; ++i) {
    EXPECT_EQ(ev[i].second["index"], 0);
    text += ev[i].second["delta"]["text"].get<std::string>();
  }
  EXPECT_EQ(text, "Hello!");
  EXPECT_EQ(ev[5].second["index"], 0);
  EXPECT_EQ(ev[6].second["delta"]["stop_reason"], "end_turn");
  EXPECT_EQ(ev[6].second["usage"]["output_tokens"], 5);
}

TEST(AnthropicResponseWriterTest, EmptyStreamHasNoBlocksAndNoDone) {
  AnthropicResponseWriter w(Options(), 20, std::nullopt);
  const std::string sse = Stream(w, {}, Finished(FinishReason::kLength));
  EXPECT_EQ(sse.find("[DONE]"), std::string::npos);
  const auto ev = ParseSse(sse);
  EXPECT_EQ(Names(ev),
            (std::vector<std::string>{"message_start", "message_delta", "message_stop"}));
  EXPECT_EQ(ev[1].second["delta"]["stop_reason"], "max_tokens");
}

TEST(AnthropicResponseWriterTest, ToolUseStream) {
  AnthropicResponseWriter w(Options(), 20, /*tool_seed=*/7);
  // The call arrives in pieces, tags split; text before it is its own block.
  std::vector<std::string> pieces = {"Checking.", "\n<tool_", "call>\n{\"name\": \"get_weather\", ",
                                     "\"arguments\": {\"city\": \"Paris\", \"days\": 3}}\n</tool",
                                     "_call>"};
  const auto ev = ParseSse(Stream(w, pieces, Finished()));
  EXPECT_EQ(Names(ev),
            (std::vector<std::string>{"message_start", "content_block_start", "content_block_delta",
                                      "content_block_delta", "content_block_stop",
                                      "content_block_start", "content_block_delta",
                                      "content_block_stop", "message_delta", "message_stop"}));
  EXPECT_EQ(ev[2].second["delta"]["text"].get<std::string>() +
                ev[3].second["delta"]["text"].get<std::string>(),
            "Checking.\n");
  EXPECT_EQ(ev[4].second["index"], 0);
  const Json& start = ev[5].second;
  EXPECT_EQ(start["index"], 1);
  EXPECT_EQ(start["content_block"]["type"], "tool_use");
  EXPECT_EQ(start["content_block"]["name"], "get_weather");
  EXPECT_EQ(start["content_block"]["input"], Json::object());
  const std::string id = start["content_block"]["id"];
  EXPECT_EQ(id.rfind("toolu_", 0), 0u) << id;
  EXPECT_EQ(id.size(), 6u + 24u);
  EXPECT_EQ(ev[6].second["index"], 1);
  EXPECT_EQ(ev[6].second["delta"]["type"], "input_json_delta");
  EXPECT_EQ(Json::parse(ev[6].second["delta"]["partial_json"].get<std::string>()),
            Json::parse(R"({"city": "Paris", "days": 3})"));
  EXPECT_EQ(ev[7].second["index"], 1);
  EXPECT_EQ(ev[8].second["delta"]["stop_reason"], "tool_use");
  EXPECT_TRUE(w.made_tool_calls());
}

TEST(AnthropicResponseWriterTest, TextAfterACallOpensANewBlock) {
  AnthropicResponseWriter w(Options(), 20, /*tool_seed=*/7);
  const auto ev = ParseSse(Stream(w, {kCall, kCall, "Done."}, Finished()));
  EXPECT_EQ(Names(ev), (std::vector<std::string>{
                           "message_start", "content_block_start", "content_block_delta",
                           "content_block_stop", "content_block_start", "content_block_delta",
                           "content_block_stop", "content_block_start", "content_block_delta",
                           "content_block_stop", "message_delta", "message_stop"}));
  EXPECT_EQ(ev[1].second["index"], 0);
  EXPECT_EQ(ev[4].second["index"], 1);
  EXPECT_NE(ev[1].second["content_block"]["id"], ev[4].second["content_block"]["id"]);
  EXPECT_EQ(ev[7].second["index"], 2);
  EXPECT_EQ(ev[7].second["content_block"]["type"], "text");
  EXPECT_EQ(ev[8].second["delta"]["text"], "Done.");
}

TEST(AnthropicResponseWriterTest, WithoutToolsTheMarkupIsText) {
  AnthropicResponseWriter w(Options(), 20, std::nullopt);
  std::string content;
  for (const std::string& p : {kCall}) content += w.FilterContent(p);
  content += w.FlushContent();
  const Json j = Json::parse(w.Body(content, {}, "stop", Finished()));
  ASSERT_EQ(j["content"].size(), 1u);
  EXPECT_EQ(j["content"][0]["text"], kCall);
  EXPECT_EQ(j["stop_reason"], "end_turn");
  EXPECT_FALSE(w.made_tool_calls());
}

TEST(AnthropicResponseWriterTest, WholeBodyWithToolUse) {
  AnthropicResponseWriter w(Options(), 20, /*tool_seed=*/7);
  std::string content;
  for (const std::string& p : {std::string("Sure. "), kCall}) content += w.FilterContent(p);
  content += w.FlushContent();
  const Json j = Json::parse(w.Body(content, {}, "tool_calls", Finished()));
  EXPECT_EQ(j["type"], "message");
  EXPECT_EQ(j["id"], "msg_abc");
  ASSERT_EQ(j["content"].size(), 2u) << j.dump(2);
  EXPECT_EQ(j["content"][0], Json::parse(R"({"type": "text", "text": "Sure. "})"));
  EXPECT_EQ(j["content"][1]["type"], "tool_use");
  EXPECT_EQ(j["content"][1]["input"], Json::parse(R"({"city": "Paris", "days": 3})"));
  EXPECT_EQ(j["stop_reason"], "tool_use");
  EXPECT_EQ(j["usage"], Json::parse(R"({"input_tokens": 20, "output_tokens": 5})"));
}

TEST(AnthropicResponseWriterTest, ErrorsAreAnthropicShaped) {
  AnthropicResponseWriter w(Options(), 20, std::nullopt);
  EXPECT_EQ(w.error_shape(), ErrorShape::kAnthropic);
  const std::string sse = w.StreamError(MakeError(500, "server_error", "engine failed"));
  const auto ev = ParseSse(sse);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].second, Json::parse(R"({"type": "error",
      "error": {"type": "api_error", "message": "engine failed"}})"));
}

}  // namespace
}  // namespace brisk::server
