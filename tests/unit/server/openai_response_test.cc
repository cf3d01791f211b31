// Response shapes: chat.completion, chat.completion.chunk, text_completion, usage, timings,
// logprobs and the models list, compared with hand-written JSON of what OpenAI clients read.
#include "server/openai_response.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>

namespace brisk::server {
namespace {

using Json = nlohmann::ordered_json;

// A tokenizer-free vocabulary: id -> bytes (3 and 4 are the halves of "你" = E4 BD A0).
std::string FakeBytes(int32_t id) {
  static const std::map<int32_t, std::string> vocab = {
      {1, "Hello"}, {2, " world"}, {3, "\xE4\xBD"}, {4, "\xA0"}, {5, "!"}};
  auto it = vocab.find(id);
  return it == vocab.end() ? std::string() : it->second;
}

ResponseMeta Meta() { return ResponseMeta{"chatcmpl-abc", 1700000000, "qwen"}; }

FinishInfo Finished(FinishReason reason = FinishReason::kStop) {
  FinishInfo f;
  f.reason = reason;
  f.usage.prompt_tokens = 20;
  f.usage.completion_tokens = 5;
  f.usage.cached_tokens = 16;
  f.timings.ttft_s = 0.125;
  f.timings.prefill_s = 0.0625;
  f.timings.decode_s = 0.5;
  return f;
}

const char* kTimings = R"({"prompt_n": 4, "prompt_ms": 62.5, "prompt_per_second": 64.0,
    "predicted_n": 5, "predicted_ms": 500.0, "predicted_per_second": 8.0, "cache_n": 16,
    "ttft_ms": 125.0})";
const char* kUsage = R"({"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25,
    "prompt_tokens_details": {"cached_tokens": 16}})";

TEST(OpenAiResponseTest, FinishReasons) {
  FinishInfo f;
  f.reason = FinishReason::kStop;
  EXPECT_STREQ(OpenAiFinishReason(f, false), "stop");
  EXPECT_STREQ(OpenAiFinishReason(f, true), "tool_calls");
  f.reason = FinishReason::kLength;
  EXPECT_STREQ(OpenAiFinishReason(f, false), "length");
  EXPECT_STREQ(OpenAiFinishReason(f, true), "length");
  for (FinishReason r : {FinishReason::kCancelled, FinishReason::kDeadline, FinishReason::kError}) {
    f.reason = r;
    EXPECT_EQ(OpenAiFinishReason(f, false), nullptr);
  }
}

TEST(OpenAiResponseTest, UsageAndTimings) {
  const FinishInfo f = Finished();
  EXPECT_EQ(UsageJson(f.usage), Json::parse(kUsage));
  EXPECT_EQ(TimingsJson(f), Json::parse(kTimings)) << TimingsJson(f).dump();
  // No time measured: rates are 0, never inf/NaN.
  FinishInfo z;
  z.usage.prompt_tokens = 3;
  z.usage.completion_tokens = 1;
  const Json t = TimingsJson(z);
  EXPECT_EQ(t["prompt_per_second"], 0.0);
  EXPECT_EQ(t["predicted_per_second"], 0.0);
  EXPECT_EQ(t["prompt_n"], 3);
}

TEST(OpenAiResponseTest, ChatCompletion) {
  const Json j = ChatCompletion(Meta(), "Hello world", {}, nullptr, "stop", Finished());
  const Json expected = Json::parse(std::string(R"({"id": "chatcmpl-abc",
      "object": "chat.completion", "created": 1700000000, "model": "qwen",
      "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hello world"},
                   "logprobs": null, "finish_reason": "stop"}],
      "usage": )") + kUsage + R"(, "timings": )" +
                                    kTimings + "}");
  EXPECT_EQ(j, expected) << j.dump(2);
}

TEST(OpenAiResponseTest, ChatCompletionWithToolCalls) {
  const std::vector<ToolCall> calls = {{"call_1", "get_weather", R"({"city":"Paris"})"},
                                       {"call_2", "now", "{}"}};
  const Json j = ChatCompletion(Meta(), "", calls, nullptr, "tool_calls", Finished());
  const Json expected = Json::parse(R"({"role": "assistant", "content": null, "tool_calls": [
      {"id": "call_1", "type": "function",
       "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}},
      {"id": "call_2", "type": "function", "function": {"name": "now", "arguments": "{}"}}]})");
  EXPECT_EQ(j["choices"][0]["message"], expected) << j.dump(2);
  EXPECT_EQ(j["choices"][0]["finish_reason"], "tool_calls");
  // Text next to calls stays.
  EXPECT_EQ(ChatCompletion(Meta(), "Let me see.", calls, nullptr, "tool_calls",
                           Finished())["choices"][0]["message"]["content"],
            "Let me see.");
  // No finish reason: null.
  EXPECT_TRUE(
      ChatCompletion(Meta(), "x", {}, nullptr, nullptr, Finished())["choices"][0]["finish_reason"]
          .is_null());
}

std::vector<TokenEvent> Events() {
  std::vector<TokenEvent> ev(3);
  ev[0].token = 1;
  ev[0].logprob = -0.5f;
  ev[0].top = {{1, -0.5f}, {2, -1.25f}};
  ev[1].token = 3;  // a partial character
  ev[1].logprob = -std::numeric_limits<float>::infinity();
  ev[2].token = 4;
  ev[2].logprob = -2.0f;
  ev[2].top = {{4, -2.0f}, {3, -3.0f}, {5, -4.0f}};  // 3 and 4 both show as U+FFFD
  return ev;
}

TEST(OpenAiResponseTest, ChatLogprobs) {
  const Json j = ChatLogprobs(Events(), FakeBytes);
  const Json expected = Json::parse(R"({"content": [
      {"token": "Hello", "logprob": -0.5, "bytes": [72, 101, 108, 108, 111], "top_logprobs": [
          {"token": "Hello", "logprob": -0.5, "bytes": [72, 101, 108, 108, 111]},
          {"token": " world", "logprob": -1.25, "bytes": [32, 119, 111, 114, 108, 100]}]},
      {"token": "\ufffd", "logprob": -9999.0, "bytes": [228, 189], "top_logprobs": []},
      {"token": "\ufffd", "logprob": -2.0, "bytes": [160], "top_logprobs": [
          {"token": "\ufffd", "logprob": -2.0, "bytes": [160]},
          {"token": "\ufffd", "logprob": -3.0, "bytes": [228, 189]},
          {"token": "!", "logprob": -4.0, "bytes": [33]}]}]})");
  EXPECT_EQ(j, expected) << j.dump(2);
  EXPECT_EQ(ChatLogprobs({}, FakeBytes), Json::parse(R"({"content": []})"));
}

TEST(OpenAiResponseTest, CompletionLogprobs) {
  size_t offset = 5;
  const Json j = CompletionLogprobs(Events(), FakeBytes, &offset);
  const Json expected = Json::parse(R"({"tokens": ["Hello", "\ufffd", "\ufffd"],
      "token_logprobs": [-0.5, -9999.0, -2.0],
      "top_logprobs": [{"Hello": -0.5, " world": -1.25}, {}, {"\ufffd": -2.0, "!": -4.0}],
      "text_offset": [5, 10, 11]})");
  EXPECT_EQ(j, expected) << j.dump(2);
  EXPECT_EQ(offset, 12u);  // carried on to the next chunk
}

TEST(OpenAiResponseTest, ChatStreamChunks) {
  const std::string head =
      R"("id": "chatcmpl-abc", "object": "chat.completion.chunk", "created": 1700000000,
         "model": "qwen", )";
  EXPECT_EQ(ChatRoleChunk(Meta()), Json::parse("{" + head + R"("choices": [{"index": 0,
      "delta": {"role": "assistant", "content": ""}, "logprobs": null, "finish_reason": null}]})"));
  EXPECT_EQ(ChatContentChunk(Meta(), "Hel"), Json::parse("{" + head + R"("choices": [{"index": 0,
      "delta": {"content": "Hel"}, "logprobs": null, "finish_reason": null}]})"));
  const std::vector<TokenEvent> events = Events();
  const Json lp = ChatLogprobs(std::span<const TokenEvent>(events).first(1), FakeBytes);
  EXPECT_EQ(ChatContentChunk(Meta(), "Hello", lp)["choices"][0]["logprobs"], lp);
  EXPECT_EQ(ChatToolCallChunk(Meta(), 1, {"call_9", "f", R"({"a":1})"}),
            Json::parse("{" + head + R"("choices": [{"index": 0, "delta": {"tool_calls": [
                {"index": 1, "id": "call_9", "type": "function",
                 "function": {"name": "f", "arguments": "{\"a\":1}"}}]},
                "logprobs": null, "finish_reason": null}]})"));
  EXPECT_EQ(ChatFinishChunk(Meta(), "length", nullptr),
            Json::parse("{" + head + R"("choices": [{"index": 0, "delta": {}, "logprobs": null,
                "finish_reason": "length"}]})"));

  const FinishInfo f = Finished();
  // Without usage: one chunk, with the finish reason and the timings.
  std::vector<Json> end = ChatStreamEnd(Meta(), "stop", f, false);
  ASSERT_EQ(end.size(), 1u);
  EXPECT_EQ(end[0]["choices"][0]["finish_reason"], "stop");
  EXPECT_EQ(end[0]["timings"], Json::parse(kTimings));
  EXPECT_FALSE(end[0].contains("usage"));
  // With usage: then a usage-only chunk (choices: []), which carries the timings.
  end = ChatStreamEnd(Meta(), "tool_calls", f, true);
  ASSERT_EQ(end.size(), 2u);
  EXPECT_EQ(end[0]["choices"][0]["finish_reason"], "tool_calls");
  EXPECT_FALSE(end[0].contains("timings"));
  EXPECT_EQ(end[1], Json::parse("{" + head + R"("choices": [], "usage": )" + kUsage +
                                R"(, "timings": )" + kTimings + "}"));
}

TEST(OpenAiResponseTest, TextCompletionAndChunks) {
  ResponseMeta m = Meta();
  m.id = "cmpl-xyz";
  const std::string head =
      R"("id": "cmpl-xyz", "object": "text_completion", "created": 1700000000, "model": "qwen", )";
  const FinishInfo f = Finished(FinishReason::kLength);
  EXPECT_EQ(TextCompletion(m, "Once upon", nullptr, "length", f),
            Json::parse("{" + head + R"("choices": [{"text": "Once upon", "index": 0,
                "logprobs": null, "finish_reason": "length"}], "usage": )" +
                        kUsage + R"(, "timings": )" + kTimings + "}"));
  EXPECT_EQ(CompletionChunk(m, " a", nullptr, nullptr),
            Json::parse("{" + head + R"("choices": [{"text": " a", "index": 0, "logprobs": null,
                "finish_reason": null}]})"));
  std::vector<Json> end = CompletionStreamEnd(m, "length", f, true);
  ASSERT_EQ(end.size(), 2u);
  EXPECT_EQ(end[0], Json::parse("{" + head + R"("choices": [{"text": "", "index": 0,
      "logprobs": null, "finish_reason": "length"}]})"));
  EXPECT_EQ(end[1], Json::parse("{" + head + R"("choices": [], "usage": )" + kUsage +
                                R"(, "timings": )" + kTimings + "}"));
  end = CompletionStreamEnd(m, "stop", f, false);
  ASSERT_EQ(end.size(), 1u);
  EXPECT_EQ(end[0]["timings"], Json::parse(kTimings));
}

TEST(OpenAiResponseTest, SseFraming) {
  EXPECT_EQ(SseData(Json{{"a", "é"}}), "data: {\"a\":\"é\"}\n\n");
  // Invalid UTF-8 in a value is replaced, never thrown.
  EXPECT_EQ(SseData(Json{{"a", "x\xFF"}}), "data: {\"a\":\"x\xEF\xBF\xBD\"}\n\n");
  EXPECT_EQ(kSseDone, "data: [DONE]\n\n");
}

TEST(OpenAiResponseTest, ModelsList) {
  EXPECT_EQ(ModelsList("qwen", 1700000000, "brisk", 32768), Json::parse(R"({"object": "list",
      "data": [{"id": "qwen", "object": "model", "created": 1700000000, "owned_by": "brisk",
                "max_model_len": 32768}]})"));
}

TEST(OpenAiResponseTest, ResponseIdsAndPieces) {
  std::mt19937_64 rng(3);
  const std::string a = NewResponseId("chatcmpl-", rng), b = NewResponseId("chatcmpl-", rng);
  EXPECT_EQ(a.size(), 9u + 24u);
  EXPECT_EQ(a.rfind("chatcmpl-", 0), 0u);
  EXPECT_NE(a, b);
  // Without a tokenizer, token text is empty (the caller's fake is used in the tests above).
  EXPECT_EQ(TokenizerPieces(nullptr)(42), "");
}

}  // namespace
}  // namespace brisk::server
