// Request parsing for /v1/chat/completions and /v1/completions: every field, the presets, and one
// case per validation error (status, type, param).
#include "server/openai_request.h"

#include <gtest/gtest.h>

#include <limits>
#include <optional>
#include <random>
#include <string>
#include <variant>

#include "server_test_util.h"

namespace brisk::server {
namespace {

using testutil::kUser;
using testutil::Limits;

// A chat body: the user message plus `fields` (a JSON members fragment, may be empty).
std::string Chat(const std::string& fields) {
  return "{" + std::string(kUser) + (fields.empty() ? "" : ", " + fields) + "}";
}

OpenAiRequest ChatOk(const std::string& body, const RequestLimits& l = Limits()) {
  auto r = ParseChatRequest(body, l);
  if (auto* e = std::get_if<ApiError>(&r)) {
    ADD_FAILURE() << "unexpected error for " << body << ": " << e->message;
    return {};
  }
  return std::get<OpenAiRequest>(r);
}

ApiError ChatErr(const std::string& body, const RequestLimits& l = Limits()) {
  auto r = ParseChatRequest(body, l);
  if (!std::holds_alternative<ApiError>(r)) {
    ADD_FAILURE() << "expected an error for " << body;
    return {};
  }
  return std::get<ApiError>(r);
}

OpenAiRequest CompletionOk(const std::string& body) {
  auto r = ParseCompletionRequest(body, Limits());
  if (auto* e = std::get_if<ApiError>(&r)) {
    ADD_FAILURE() << "unexpected error for " << body << ": " << e->message;
    return {};
  }
  return std::get<OpenAiRequest>(r);
}

ApiError CompletionErr(const std::string& body) {
  auto r = ParseCompletionRequest(body, Limits());
  if (!std::holds_alternative<ApiError>(r)) {
    ADD_FAILURE() << "expected an error for " << body;
    return {};
  }
  return std::get<ApiError>(r);
}

struct ErrCase {
  std::string body;  // a whole body, or with `fields` true the members added to a user message
  bool fields;
  std::string param;       // expected param ("" = null)
  std::string in_message;  // a piece the message must contain
};

TEST(OpenAiRequestTest, ChatValidationErrors) {
  const ErrCase cases[] = {
      // Body.
      {"", false, "", "invalid JSON"},
      {R"({"messages": [)", false, "", "invalid JSON"},
      {R"({"a": 1,})", false, "", "invalid JSON"},
      {"[1, 2]", false, "", "must be a JSON object, got array"},
      {"\"hello\"", false, "", "must be a JSON object, got string"},
      {"{\"messages\": [{\"role\": \"user\", \"content\": \"\xC3\x28\"}]}", false, "",
       "not valid UTF-8"},
      {"{\"messages\": [{\"role\": \"user\", \"content\": \"ok\xF0\x9F\x98\"}]}", false, "",
       "offset"},
      {R"({"messages": [{"role": "user", "content": "\ud800"}]})", false, "", "invalid JSON"},
      {std::string(100, '[') + std::string(100, ']'), false, "", "nested deeper"},
      // model.
      {R"("model": 5)", true, "model", "must be a string, got integer"},
      // messages.
      {"{}", false, "messages", "missing required parameter 'messages'"},
      {R"({"messages": "hi"})", false, "messages", "must be an array, got string"},
      {R"({"messages": []})", false, "messages", "must not be empty"},
      {R"({"messages": ["hi"]})", false, "messages[0]", "must be an object"},
      {R"({"messages": [{"content": "hi"}]})", false, "messages[0].role", "is required"},
      {R"({"messages": [{"role": 1, "content": "hi"}]})", false, "messages[0].role",
       "must be a string"},
      {R"({"messages": [{"role": "user", "content": "a"}, {"role": "robot", "content": "b"}]})",
       false, "messages[1].role", "must be one of system, user, assistant, tool; got 'robot'"},
      {R"({"messages": [{"role": "user"}]})", false, "messages[0].content", "is required"},
      {R"({"messages": [{"role": "user", "content": null}]})", false, "messages[0].content",
       "is required"},
      {R"({"messages": [{"role": "assistant", "content": null}]})", false, "messages[0].content",
       "is required"},
      {R"({"messages": [{"role": "user", "content": 5}]})", false, "messages[0].content",
       "a string or an array of content parts"},
      {R"({"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {}}]}]})",
       false, "messages[0].content[0].type", "only text content parts"},
      {R"({"messages": [{"role": "user", "content": [{"type": "text", "text": 3}]}]})", false,
       "messages[0].content[0].text", "must be a string"},
      {R"({"messages": [{"role": "user", "content": ["x"]}]})", false, "messages[0].content[0]",
       "must be an object"},
      {R"({"messages": [{"role": "user", "content": "x", "name": 7}]})", false, "messages[0].name",
       "must be a string"},
      {R"({"messages": [{"role": "tool", "content": "x", "tool_call_id": 7}]})", false,
       "messages[0].tool_call_id", "must be a string"},
      {R"({"messages": [{"role": "assistant", "content": null, "tool_calls": {}}]})", false,
       "messages[0].tool_calls", "must be an array"},
      {R"({"messages": [{"role": "assistant", "tool_calls": [{"type": "function"}]}]})", false,
       "messages[0].tool_calls[0].function", "must be an object"},
      {R"({"messages": [{"role": "assistant", "tool_calls": [{"function": {"name": ""}}]}]})",
       false, "messages[0].tool_calls[0].function.name", "must not be empty"},
      {R"({"messages": [{"role": "assistant", "tool_calls": [{"type": "x", "function": {}}]}]})",
       false, "messages[0].tool_calls[0].type", "must be 'function'"},
      {R"({"messages": [{"role": "assistant", "tool_calls":
          [{"function": {"name": "f", "arguments": 5}}]}]})",
       false, "messages[0].tool_calls[0].function.arguments", "must be a string"},
      // Lengths and sampling.
      {R"("max_tokens": 0)", true, "max_tokens", "in [1, 2147483647], got 0"},
      {R"("max_tokens": -5)", true, "max_tokens", "in [1, 2147483647], got -5"},
      {R"("max_tokens": "10")", true, "max_tokens", "must be an integer, got string"},
      {R"("max_tokens": 1.5)", true, "max_tokens", "must be an integer, got number"},
      {R"("max_tokens": 1e20)", true, "max_tokens", "must be an integer"},
      {R"("max_tokens": 3000000000)", true, "max_tokens", "got 3000000000"},
      {R"("max_tokens": 18446744073709551615)", true, "max_tokens", "got 18446744073709551615"},
      {R"("max_completion_tokens": 0)", true, "max_completion_tokens", "in [1, "},
      {R"("temperature": -0.1)", true, "temperature", "must be in [0, 2], got -0.1"},
      {R"("temperature": 2.5)", true, "temperature", "must be in [0, 2]"},
      {R"("temperature": 1e300)", true, "temperature", "must be in [0, 2], got 1e+300"},
      {R"("temperature": 1e999)", true, "", "invalid JSON: number overflow"},
      {R"("repetition_penalty": 1e300)", true, "repetition_penalty", "at most 3.40282e+38"},
      {R"("temperature": "hot")", true, "temperature", "must be a number, got string"},
      {R"("top_p": 0)", true, "top_p", "must be in (0, 1]"},
      {R"("top_p": 1.01)", true, "top_p", "must be in (0, 1]"},
      {R"("top_k": -2)", true, "top_k", "in [-1, "},
      {R"("top_k": 2.5)", true, "top_k", "must be an integer"},
      {R"("min_p": 1.5)", true, "min_p", "[0, 1]"},
      {R"("n": 0)", true, "n", "in [1, 128], got 0"},
      {R"("n": 129)", true, "n", "in [1, 128], got 129"},
      {R"("stop": ["a", "b", "c", "d", "e"])", true, "stop", "at most 4"},
      {R"("stop": 3)", true, "stop", "a string or an array of strings"},
      {R"("stop": ["a", 1])", true, "stop[1]", "must be a string"},
      {R"("stop": "")", true, "stop", "must not be empty"},
      {R"("seed": "x")", true, "seed", "must be an integer"},
      {R"("seed": 1.5)", true, "seed", "must be an integer"},
      {R"("presence_penalty": 2.5)", true, "presence_penalty", "[-2, 2]"},
      {R"("frequency_penalty": -3)", true, "frequency_penalty", "[-2, 2]"},
      {R"("repetition_penalty": 0)", true, "repetition_penalty", "must be > 0, got 0"},
      {R"("repeat_penalty": -1)", true, "repeat_penalty", "must be > 0, got -1"},
      {R"("logit_bias": [1])", true, "logit_bias", "must be an object"},
      {R"("logit_bias": {"abc": 1})", true, "logit_bias", "decimal integers"},
      {R"("logit_bias": {"12x": 1})", true, "logit_bias", "decimal integers"},
      {R"("logit_bias": {"1000": 1})", true, "logit_bias", "out of range [0, 1000)"},
      {R"("logit_bias": {"-1": 1})", true, "logit_bias", "out of range"},
      {R"("logit_bias": {"5": 101})", true, "logit_bias", "[-100, 100]"},
      {R"("logit_bias": {"5": "x"})", true, "logit_bias[5]", "must be a number"},
      {R"("logprobs": "yes")", true, "logprobs", "must be a boolean"},
      {R"("top_logprobs": 21, "logprobs": true)", true, "top_logprobs", "[0, 20]"},
      {R"("top_logprobs": 5)", true, "top_logprobs", "requires logprobs"},
      {R"("top_logprobs": 5, "logprobs": false)", true, "top_logprobs", "requires logprobs"},
      {R"("min_tokens": -1)", true, "min_tokens", "in [0, "},
      {R"("min_tokens": 20, "max_tokens": 10)", true, "min_tokens", "must not exceed"},
      {R"("ignore_eos": 1)", true, "ignore_eos", "must be a boolean"},
      {R"("priority": "high")", true, "priority", "must be an integer"},
      {R"("stop_token_ids": 5)", true, "stop_token_ids", "must be an array"},
      {R"("stop_token_ids": [5000])", true, "stop_token_ids", "out of range"},
      // Tools.
      {R"("tools": {})", true, "tools", "must be an array"},
      {R"("tools": [1])", true, "tools[0]", "must be an object"},
      {R"("tools": [{"type": "retrieval"}])", true, "tools[0].type", "must be 'function'"},
      {R"("tools": [{"type": "function"}])", true, "tools[0].function", "must be an object"},
      {R"("tools": [{"type": "function", "function": {}}])", true, "tools[0].function.name",
       "is required"},
      {R"("tools": [{"type": "function", "function": {"name": ""}}])", true,
       "tools[0].function.name", "must not be empty"},
      {R"("tools": [{"type": "function", "function": {"name": "f", "parameters": "x"}}])", true,
       "tools[0].function.parameters", "must be an object"},
      {R"("tools": [{"type": "function", "function": {"name": "f", "description": 1}}])", true,
       "tools[0].function.description", "must be a string"},
      {R"("tool_choice": "sometimes")", true, "tool_choice", "'none', 'auto', 'required'"},
      {R"("tool_choice": "required")", true, "tool_choice", "needs tools"},
      {R"("tool_choice": 5)", true, "tool_choice", "must be a string or an object"},
      {R"("tools": [{"type": "function", "function": {"name": "f"}}],
          "tool_choice": {"type": "function", "function": {"name": "g"}})",
       true, "tool_choice", "'g', which is not in tools"},
      {R"("tools": [{"type": "function", "function": {"name": "f"}}],
          "tool_choice": {"type": "function"})",
       true, "tool_choice", "must be an object"},
      // Output format, streaming, extras.
      {R"("response_format": "json")", true, "response_format", "must be an object"},
      {R"("response_format": {})", true, "response_format", "'json_object' or 'json_schema'"},
      {R"("response_format": {"type": "xml"})", true, "response_format", "got 'xml'"},
      {R"("response_format": {"type": "json_schema"})", true, "response_format",
       "json_schema must be an object"},
      {R"("response_format": {"type": "json_schema", "json_schema": {"schema": 3}})", true,
       "response_format", "must be a JSON Schema"},
      {R"("response_format": {"type": "json_schema", "json_schema": {"strict": 1}})", true,
       "response_format.json_schema.strict", "must be a boolean"},
      {R"("guided_json": "{not json")", true, "guided_json", "not valid JSON"},
      {R"("guided_regex": 5)", true, "guided_regex", "must be a string"},
      {R"("regex": "")", true, "regex", "must not be empty"},
      {R"("grammar": ["root ::= x"])", true, "grammar", "must be a string"},
      {R"("guided_choice": [])", true, "guided_choice", "non-empty array"},
      {R"("guided_choice": ["a", 2])", true, "guided_choice[]", "must be a string"},
      {R"("guided_regex": "a+", "grammar": "root ::= \"a\"")", true, "grammar",
       "only one of guided_regex and grammar"},
      {R"("response_format": {"type": "json_object"}, "guided_choice": ["a"])", true,
       "guided_choice", "only one of response_format and guided_choice"},
      {R"("stream": "true")", true, "stream", "must be a boolean"},
      {R"("stream": true, "stream_options": 5)", true, "stream_options", "must be an object"},
      {R"("stream": true, "stream_options": {"include_usage": "yes"})", true,
       "stream_options.include_usage", "must be a boolean"},
      {R"("user": 5)", true, "user", "must be a string"},
      {R"("mode": "poetry")", true, "mode", "qa, code, copywriting; got 'poetry'"},
      {R"("mode": 1)", true, "mode", "must be a string"},
      {R"("chat_template_kwargs": "x")", true, "chat_template_kwargs", "must be an object"},
      // Usage chunks exist only in streams: the option anywhere else is a mistake to report.
      {R"("stream_options": {"include_usage": true})", true, "stream_options",
       "only allowed with stream: true"},
      {R"("stream": false, "stream_options": {})", true, "stream_options", "stream: true"},
      {R"("add_generation_prompt": 1)", true, "add_generation_prompt", "must be a boolean"},
      {R"("continue_final_message": "yes")", true, "continue_final_message", "must be a boolean"},
      // Continuing needs an assistant message to continue, and no new turn after it.
      {R"("continue_final_message": true)", true, "continue_final_message",
       "last message to be an assistant message"},
      {R"({"messages": [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}],
          "continue_final_message": true, "add_generation_prompt": true})",
       false, "continue_final_message", "cannot both be true"},
      {R"({"messages": [{"role": "user", "content": "a"}, {"role": "assistant", "content": ""}],
          "continue_final_message": true})",
       false, "continue_final_message", "with text to continue"},
  };
  for (const ErrCase& c : cases) {
    const std::string body = c.fields ? Chat(c.body) : c.body;
    SCOPED_TRACE(body);
    const ApiError e = ChatErr(body);
    EXPECT_EQ(e.status, 400);
    EXPECT_EQ(e.type, "invalid_request_error");
    EXPECT_EQ(e.param, c.param);
    EXPECT_NE(e.message.find(c.in_message), std::string::npos) << e.message;
    // Every error must serialise (the server sends it as is).
    EXPECT_NE(ErrorJson(e).find("\"error\""), std::string::npos);
  }
}

TEST(OpenAiRequestTest, UnknownModelIs404) {
  const ApiError e = ChatErr(Chat(R"("model": "gpt-4o")"));
  EXPECT_EQ(e.status, 404);
  EXPECT_EQ(e.type, "not_found_error");
  EXPECT_EQ(e.param, "model");
  EXPECT_EQ(e.code, "model_not_found");
  EXPECT_EQ(e.message, "The model `gpt-4o` does not exist.");
  EXPECT_EQ(CompletionErr(R"({"prompt": "x", "model": "other"})").status, 404);
}

TEST(OpenAiRequestTest, ModelMayBeAbsentEmptyOrTheServedOne) {
  EXPECT_EQ(ChatOk(Chat("")).model, "");
  EXPECT_EQ(ChatOk(Chat(R"("model": "")")).model, "");
  EXPECT_EQ(ChatOk(Chat(R"("model": null)")).model, "");
  EXPECT_EQ(ChatOk(Chat(R"("model": "qwen2.5-0.5b")")).model, "qwen2.5-0.5b");
}

TEST(OpenAiRequestTest, TooManyMessages) {
  RequestLimits l = Limits();
  l.max_messages = 2;
  const std::string three = R"({"messages": [{"role": "user", "content": "a"},
      {"role": "assistant", "content": "b"}, {"role": "user", "content": "c"}]})";
  const ApiError e = ChatErr(three, l);
  EXPECT_EQ(e.status, 400);
  EXPECT_EQ(e.param, "messages");
  EXPECT_NE(e.message.find("too many messages: 3 (at most 2)"), std::string::npos);
  l.max_messages = 3;
  EXPECT_EQ(ChatOk(three, l).messages.size(), 3u);
}

TEST(OpenAiRequestTest, StopCountFollowsTheLimit) {
  RequestLimits l = Limits();
  l.max_stop = 2;
  EXPECT_EQ(ChatErr(Chat(R"("stop": ["a", "b", "c"])"), l).param, "stop");
  EXPECT_EQ(ChatOk(Chat(R"("stop": ["a", "b"])"), l).gen.stop.size(), 2u);
}

TEST(OpenAiRequestTest, DefaultsWithoutAPreset) {
  const OpenAiRequest r = ChatOk(Chat(""));
  EXPECT_TRUE(r.chat);
  EXPECT_EQ(r.gen.max_tokens, kNoMaxTokensCap);  // cut to the context after tokenising
  EXPECT_EQ(r.max_tokens_field, "");
  EXPECT_FLOAT_EQ(r.gen.sampling.temperature, 1.0f);
  EXPECT_FLOAT_EQ(r.gen.sampling.top_p, 1.0f);
  EXPECT_EQ(r.gen.sampling.top_k, 0);
  EXPECT_FALSE(r.gen.sampling.seed.has_value());
  EXPECT_FALSE(r.gen.sampling.logprobs);
  EXPECT_FALSE(r.stream);
  EXPECT_FALSE(r.include_usage);
  EXPECT_EQ(r.structured.kind, StructuredOutput::Kind::kNone);
  EXPECT_TRUE(r.gen.stop.empty());
  EXPECT_TRUE(r.tools.is_null());
  EXPECT_EQ(r.tool_choice, "none");
  EXPECT_TRUE(r.gen.prompt.empty());
  EXPECT_EQ(r.gen.sink, nullptr);
}

TEST(OpenAiRequestTest, PresetsAndOverrides) {
  struct P {
    const char* mode;
    int max_tokens;
    float temperature, top_p;
  };
  for (const P& p : {P{"qa", 512, 0.7f, 0.9f}, P{"code", 1024, 0.2f, 0.95f},
                     P{"copywriting", 1024, 0.9f, 0.95f}}) {
    SCOPED_TRACE(p.mode);
    const OpenAiRequest r = ChatOk(Chat(std::string(R"("mode": ")") + p.mode + "\""));
    EXPECT_EQ(r.mode, p.mode);
    EXPECT_EQ(r.gen.max_tokens, p.max_tokens);
    EXPECT_FLOAT_EQ(r.gen.sampling.temperature, p.temperature);
    EXPECT_FLOAT_EQ(r.gen.sampling.top_p, p.top_p);
    // Explicit fields win, each on its own.
    const OpenAiRequest t =
        ChatOk(Chat(std::string(R"("temperature": 0, "mode": ")") + p.mode + "\""));
    EXPECT_FLOAT_EQ(t.gen.sampling.temperature, 0.0f);
    EXPECT_EQ(t.gen.max_tokens, p.max_tokens);
    EXPECT_FLOAT_EQ(t.gen.sampling.top_p, p.top_p);
    const OpenAiRequest m =
        ChatOk(Chat(std::string(R"("mode": ")") + p.mode + R"(", "max_tokens": 7, "top_p": 0.5)"));
    EXPECT_EQ(m.gen.max_tokens, 7);
    EXPECT_FLOAT_EQ(m.gen.sampling.top_p, 0.5f);
    EXPECT_FLOAT_EQ(m.gen.sampling.temperature, p.temperature);
  }
  // Presets apply to completions too.
  EXPECT_EQ(CompletionOk(R"({"prompt": "x", "mode": "code"})").gen.max_tokens, 1024);
  // An empty or null mode is no preset.
  EXPECT_EQ(ChatOk(Chat(R"("mode": "")")).gen.max_tokens, kNoMaxTokensCap);
  EXPECT_EQ(ChatOk(Chat(R"("mode": null)")).gen.max_tokens, kNoMaxTokensCap);
}

TEST(OpenAiRequestTest, EveryFieldReachesTheRequest) {
  const OpenAiRequest r = ChatOk(Chat(R"(
      "model": "qwen2.5-0.5b", "max_tokens": 64, "temperature": 0.3, "top_p": 0.8, "top_k": 40,
      "min_p": 0.05, "n": 1, "stop": ["END", "###"], "seed": 42, "presence_penalty": 0.5,
      "frequency_penalty": -0.25, "repetition_penalty": 1.1,
      "logit_bias": {"5": -100, "17": 2.5}, "logprobs": true, "top_logprobs": 3,
      "min_tokens": 4, "ignore_eos": true, "priority": -2, "stop_token_ids": [7, 9],
      "response_format": {"type": "json_object"}, "stream": true,
      "stream_options": {"include_usage": true}, "user": "u-1", "mode": "qa",
      "chat_template_kwargs": {"enable_thinking": false})"));
  const GenerationRequest& g = r.gen;
  const SamplingParams& s = g.sampling;
  EXPECT_EQ(r.model, "qwen2.5-0.5b");
  EXPECT_EQ(g.max_tokens, 64);
  EXPECT_FLOAT_EQ(s.temperature, 0.3f);
  EXPECT_FLOAT_EQ(s.top_p, 0.8f);
  EXPECT_EQ(s.top_k, 40);
  EXPECT_FLOAT_EQ(s.min_p, 0.05f);
  EXPECT_EQ(g.stop, (std::vector<std::string>{"END", "###"}));
  ASSERT_TRUE(s.seed.has_value());
  EXPECT_EQ(*s.seed, 42u);
  EXPECT_FLOAT_EQ(s.presence_penalty, 0.5f);
  EXPECT_FLOAT_EQ(s.frequency_penalty, -0.25f);
  EXPECT_FLOAT_EQ(s.repetition_penalty, 1.1f);
  ASSERT_EQ(s.logit_bias.size(), 2u);
  EXPECT_EQ(s.logit_bias[0].first, 5);
  EXPECT_FLOAT_EQ(s.logit_bias[0].second, -100.0f);
  EXPECT_EQ(s.logit_bias[1].first, 17);
  EXPECT_FLOAT_EQ(s.logit_bias[1].second, 2.5f);
  EXPECT_TRUE(s.logprobs);
  EXPECT_EQ(s.top_logprobs, 3);
  EXPECT_EQ(g.min_tokens, 4);
  EXPECT_TRUE(g.ignore_eos);
  EXPECT_EQ(g.priority, -2);
  EXPECT_EQ(g.stop_token_ids, (std::vector<int32_t>{7, 9}));
  EXPECT_EQ(r.structured.kind, StructuredOutput::Kind::kJsonObject);
  EXPECT_TRUE(r.stream);
  EXPECT_TRUE(r.include_usage);
  EXPECT_EQ(r.user, "u-1");
  EXPECT_EQ(r.mode, "qa");
  EXPECT_EQ(r.chat_template_kwargs, nlohmann::ordered_json({{"enable_thinking", false}}));
}

TEST(OpenAiRequestTest, FieldVariants) {
  // max_completion_tokens wins over max_tokens.
  EXPECT_EQ(ChatOk(Chat(R"("max_tokens": 5, "max_completion_tokens": 9)")).gen.max_tokens, 9);
  // An integral float is an integer (JavaScript numbers).
  EXPECT_EQ(ChatOk(Chat(R"("max_tokens": 12.0)")).gen.max_tokens, 12);
  // repeat_penalty is llama.cpp's name for repetition_penalty.
  EXPECT_FLOAT_EQ(ChatOk(Chat(R"("repeat_penalty": 1.3)")).gen.sampling.repetition_penalty, 1.3f);
  // Negative and huge seeds wrap into 64 bits.
  EXPECT_EQ(*ChatOk(Chat(R"("seed": -1)")).gen.sampling.seed, std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(*ChatOk(Chat(R"("seed": 18446744073709551615)")).gen.sampling.seed,
            std::numeric_limits<uint64_t>::max());
  // A single stop string.
  EXPECT_EQ(ChatOk(Chat(R"("stop": "\n\n")")).gen.stop, std::vector<std::string>{"\n\n"});
  // include_usage only with stream; stream_options null is "not given", stream or not.
  EXPECT_TRUE(
      ChatOk(Chat(R"("stream": true, "stream_options": {"include_usage": true})")).include_usage);
  EXPECT_FALSE(ChatOk(Chat(R"("stream": true, "stream_options": {})")).include_usage);
  // The generation prompt: a new assistant turn unless the final message is continued.
  EXPECT_TRUE(ChatOk(Chat("")).add_generation_prompt);
  EXPECT_FALSE(ChatOk(Chat(R"("add_generation_prompt": false)")).add_generation_prompt);
  const std::string prefill = R"({"messages": [{"role": "user", "content": "a"},
      {"role": "assistant", "content": "b"}], "continue_final_message": true)";
  for (const char* more : {"}", R"(, "add_generation_prompt": false})"}) {
    const OpenAiRequest r = ChatOk(prefill + more);
    EXPECT_TRUE(r.continue_final_message);
    EXPECT_FALSE(r.add_generation_prompt);
  }
  // response_format text is the default.
  EXPECT_EQ(ChatOk(Chat(R"("response_format": {"type": "text"})")).structured.kind,
            StructuredOutput::Kind::kNone);
  // null means "not given" for every optional field.
  const OpenAiRequest n = ChatOk(Chat(R"("temperature": null, "max_tokens": null, "stop": null,
      "seed": null, "tools": null, "tool_choice": null, "logit_bias": null, "n": null,
      "response_format": null, "stream_options": null, "user": null)"));
  EXPECT_FLOAT_EQ(n.gen.sampling.temperature, 1.0f);
  EXPECT_EQ(n.gen.max_tokens, kNoMaxTokensCap);
  // Unknown fields are ignored.
  EXPECT_EQ(ChatOk(Chat(R"("parallel_tool_calls": false, "store": true, "foo": {"x": [1]})"))
                .gen.max_tokens,
            kNoMaxTokensCap);
  // The bounds themselves are accepted.
  const OpenAiRequest b = ChatOk(Chat(R"("temperature": 2, "top_p": 1, "min_p": 1,
      "presence_penalty": -2, "frequency_penalty": 2, "top_k": -1, "top_logprobs": 20,
      "logprobs": true, "logit_bias": {"999": 100, "0": -100}, "min_tokens": 300)"));
  EXPECT_FLOAT_EQ(b.gen.sampling.temperature, 2.0f);
  EXPECT_EQ(b.gen.sampling.top_logprobs, 20);
  EXPECT_EQ(b.gen.min_tokens, 300);
}

TEST(OpenAiRequestTest, MessagesAreNormalised) {
  const OpenAiRequest r = ChatOk(R"({"messages": [
      {"role": "developer", "content": "Be brief."},
      {"role": "user", "content": [{"type": "text", "text": "Hello"},
                                   {"type": "text", "text": "world"}], "name": "ann"},
      {"role": "assistant", "content": null, "tool_calls": [
          {"id": "call_1", "type": "function",
           "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}},
          {"function": {"name": "now", "arguments": {"tz": "UTC"}}}]},
      {"role": "tool", "content": "{\"temp\": 3}", "tool_call_id": "call_1", "extra": 1},
      {"role": "assistant", "content": "It is 3 degrees.", "tool_calls": []}]})");
  const nlohmann::ordered_json expected = nlohmann::ordered_json::parse(R"([
      {"role": "system", "content": "Be brief."},
      {"role": "user", "content": "Hello\nworld", "name": "ann"},
      {"role": "assistant", "content": "", "tool_calls": [
          {"id": "call_1", "type": "function",
           "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}},
          {"type": "function", "function": {"name": "now", "arguments": "{\"tz\":\"UTC\"}"}}]},
      {"role": "tool", "content": "{\"temp\": 3}", "tool_call_id": "call_1"},
      {"role": "assistant", "content": "It is 3 degrees."}])");
  EXPECT_EQ(r.messages, expected) << r.messages.dump(2);
}

TEST(OpenAiRequestTest, ToolsAndToolChoice) {
  const std::string tools =
      R"("tools": [{"type": "function", "function": {"name": "get_weather",
          "parameters": {"type": "object"}}}, {"type": "function", "function": {"name": "now"}}])";
  const OpenAiRequest a = ChatOk(Chat(tools));
  ASSERT_TRUE(a.tools.is_array());
  EXPECT_EQ(a.tools.size(), 2u);
  EXPECT_EQ(a.tools[0]["function"]["name"], "get_weather");
  EXPECT_EQ(a.tool_choice, "auto");
  EXPECT_TRUE(ToolCallsEnabled(a));

  const OpenAiRequest none = ChatOk(Chat(tools + R"(, "tool_choice": "none")"));
  EXPECT_EQ(none.tool_choice, "none");
  EXPECT_FALSE(ToolCallsEnabled(none));
  EXPECT_EQ(ChatOk(Chat(tools + R"(, "tool_choice": "required")")).tool_choice, "required");
  const OpenAiRequest named =
      ChatOk(Chat(tools + R"(, "tool_choice": {"type": "function", "function": {"name": "now"}})"));
  EXPECT_EQ(named.tool_choice, "now");
  EXPECT_TRUE(ToolCallsEnabled(named));

  // No tools (or an empty list): nothing to call.
  const OpenAiRequest empty = ChatOk(Chat(R"("tools": [], "tool_choice": "auto")"));
  EXPECT_TRUE(empty.tools.is_null());
  EXPECT_FALSE(ToolCallsEnabled(empty));
  EXPECT_FALSE(ToolCallsEnabled(ChatOk(Chat(""))));
}

TEST(OpenAiRequestTest, CompletionPrompts) {
  EXPECT_EQ(CompletionOk(R"({"prompt": "Once upon"})").prompts.at(0).text, "Once upon");
  EXPECT_EQ(CompletionOk(R"({"prompt": ["Once upon"]})").prompts.at(0).text, "Once upon");
  const OpenAiRequest ids = CompletionOk(R"({"prompt": [1, 2, 999]})");
  ASSERT_EQ(ids.prompts.size(), 1u);
  EXPECT_TRUE(ids.prompts[0].text.empty());
  EXPECT_EQ(ids.prompts[0].tokens, (std::vector<int32_t>{1, 2, 999}));
  EXPECT_EQ(CompletionOk(R"({"prompt": [[4, 5]]})").prompts.at(0).tokens,
            (std::vector<int32_t>{4, 5}));
  // Batched prompts (LangChain's completion class, lm-eval): one entry each, n choices each.
  const OpenAiRequest batch = CompletionOk(R"({"prompt": ["a", "bc"], "n": 3, "best_of": 3})");
  ASSERT_EQ(batch.prompts.size(), 2u);
  EXPECT_EQ(batch.prompts[1].text, "bc");
  EXPECT_EQ(batch.n, 3);
  const OpenAiRequest id_batch = CompletionOk(R"({"prompt": [[1, 2], [3]]})");
  ASSERT_EQ(id_batch.prompts.size(), 2u);
  EXPECT_EQ(id_batch.prompts[1].tokens, (std::vector<int32_t>{3}));
  // Prompt scoring: max_tokens 0 is a completions request (lm-eval's loglikelihood shape).
  EXPECT_EQ(CompletionOk(R"({"prompt": "x", "echo": true, "max_tokens": 0})").gen.max_tokens, 0);
  const OpenAiRequest r = CompletionOk(R"({"prompt": "x", "echo": true, "logprobs": 3})");
  EXPECT_FALSE(r.chat);
  EXPECT_TRUE(r.echo);
  EXPECT_TRUE(r.gen.sampling.logprobs);
  EXPECT_EQ(r.gen.sampling.top_logprobs, 3);
  const OpenAiRequest zero = CompletionOk(R"({"prompt": "x", "logprobs": 0})");
  EXPECT_TRUE(zero.gen.sampling.logprobs);
  EXPECT_EQ(zero.gen.sampling.top_logprobs, 0);
  EXPECT_TRUE(CompletionOk(R"({"prompt": "x", "logprobs": true})").gen.sampling.logprobs);
  EXPECT_FALSE(CompletionOk(R"({"prompt": "x", "logprobs": null})").gen.sampling.logprobs);
  EXPECT_EQ(CompletionOk(R"({"prompt": "x", "best_of": 1, "suffix": ""})").gen.max_tokens,
            kNoMaxTokensCap);
  // Chat-only fields mean nothing here.
  EXPECT_TRUE(CompletionOk(R"({"prompt": "x", "messages": 5, "tools": 1})").tools.is_null());
}

TEST(OpenAiRequestTest, CompletionValidationErrors) {
  const ErrCase cases[] = {
      {R"({})", false, "prompt", "missing required parameter 'prompt'"},
      {R"({"prompt": ""})", false, "prompt", "must not be empty"},
      {R"({"prompt": []})", false, "prompt", "must not be empty"},
      {R"({"prompt": [[]]})", false, "prompt[0]", "must not be empty"},
      {R"({"prompt": 5})", false, "prompt", "got integer"},
      {R"({"prompt": ["a", [2]]})", false, "prompt[1]", "not a mix"},
      {R"({"prompt": ["a", ""]})", false, "prompt[1]", "must not be empty"},
      {R"({"prompt": [[1], []]})", false, "prompt[1]", "must not be empty"},
      {R"({"prompt": ["a", "b"], "n": 65})", false, "n", "n x prompts may be at most 128"},
      {R"({"prompt": [1, "a"]})", false, "prompt[1]", "must be a token id"},
      {R"({"prompt": [1000]})", false, "prompt", "out of range [0, 1000)"},
      {R"({"prompt": [-1]})", false, "prompt", "out of range"},
      {R"({"prompt": [[1, 1.5]]})", false, "prompt[0][1]", "must be a token id"},
      {R"({"prompt": [true]})", false, "prompt", "array of token ids"},
      {R"({"prompt": "x", "echo": 1})", false, "echo", "must be a boolean"},
      {R"({"prompt": "x", "logprobs": 21})", false, "logprobs", "[0, 20]"},
      {R"({"prompt": "x", "logprobs": "2"})", false, "logprobs", "must be an integer"},
      {R"({"prompt": "x", "suffix": "end"})", false, "suffix", "not supported"},
      {R"({"prompt": "x", "best_of": 3})", false, "best_of", "best_of must equal n (1)"},
      {R"({"prompt": "x", "temperature": 3})", false, "temperature", "[0, 2]"},
      {"{\"prompt\": \"\xFF\"}", false, "", "not valid UTF-8"},
      {R"(["x"])", false, "", "must be a JSON object"},
  };
  for (const ErrCase& c : cases) {
    SCOPED_TRACE(c.body);
    const ApiError e = CompletionErr(c.body);
    EXPECT_EQ(e.status, 400);
    EXPECT_EQ(e.type, "invalid_request_error");
    EXPECT_EQ(e.param, c.param);
    EXPECT_NE(e.message.find(c.in_message), std::string::npos) << e.message;
  }
}

// CheckPromptLength over a parsed chat request with `fields` and a prompt of `prompt` tokens in
// 4096: the engine's max_tokens, or -1 and *error.
int MaxTokensFor(const std::string& fields, int prompt, std::optional<ApiError>* error = nullptr,
                 const RequestLimits& l = Limits()) {
  int max_tokens = -1;
  auto e = CheckPromptLength(prompt, ChatOk(Chat(fields), l), l.max_model_len, &max_tokens);
  if (error) *error = e;
  return e ? -1 : max_tokens;
}

TEST(OpenAiRequestTest, WithoutMaxTokensTheRestOfTheContext) {
  EXPECT_EQ(MaxTokensFor("", 100), 3996);
  EXPECT_EQ(MaxTokensFor("", 4095), 1);
  EXPECT_EQ(MaxTokensFor(R"("max_tokens": null)", 100), 3996);
  // A server default and a preset are caps, cut to the room left, never errors.
  RequestLimits capped = Limits();
  capped.default_max_tokens = 300;
  EXPECT_EQ(MaxTokensFor("", 100, nullptr, capped), 300);
  EXPECT_EQ(MaxTokensFor("", 4000, nullptr, capped), 96);
  EXPECT_EQ(MaxTokensFor(R"("mode": "code")", 100), 1024);
  EXPECT_EQ(MaxTokensFor(R"("mode": "code")", 4000), 96);
}

TEST(OpenAiRequestTest, ExplicitMaxTokensMustFit) {
  EXPECT_EQ(MaxTokensFor(R"("max_tokens": 50)", 100), 50);
  EXPECT_EQ(MaxTokensFor(R"("max_tokens": 50)", 4046), 50);  // exactly fits
  std::optional<ApiError> e;
  EXPECT_EQ(MaxTokensFor(R"("max_tokens": 200)", 4000, &e), -1);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->status, 400);
  EXPECT_EQ(e->type, "invalid_request_error");
  EXPECT_EQ(e->param, "max_tokens");
  EXPECT_EQ(e->code, "context_length_exceeded");
  EXPECT_EQ(e->message,
            "'max_tokens' is too large: 200. This model's maximum context length is 4096 tokens "
            "and your request has 4000 input tokens (200 > 4096 - 4000).");
  // The field is named as the client sent it; a mode's default does not excuse an explicit value.
  MaxTokensFor(R"("max_completion_tokens": 97, "mode": "qa")", 4000, &e);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->param, "max_completion_tokens");
  EXPECT_EQ(MaxTokensFor(R"("max_completion_tokens": 96)", 4000), 96);
}

TEST(OpenAiRequestTest, PromptAloneOverTheContext) {
  std::optional<ApiError> e;
  MaxTokensFor(R"("max_tokens": 200)", 4096, &e);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->status, 400);
  EXPECT_EQ(e->type, "invalid_request_error");
  EXPECT_EQ(e->code, "context_length_exceeded");
  EXPECT_EQ(e->message,
            "This model's maximum context length is 4096 tokens. However, you requested 4296 "
            "tokens (4096 in the messages, 200 in the completion). Please reduce the length of "
            "the messages or completion.");
  MaxTokensFor(R"("max_tokens": 2147483647)", 5000, &e);
  ASSERT_TRUE(e.has_value());
  EXPECT_NE(e->message.find("you requested 2147488647 tokens"), std::string::npos) << e->message;
  // Without max_tokens the prompt must leave room for one token.
  MaxTokensFor("", 5000, &e);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->code, "context_length_exceeded");
  EXPECT_NE(e->message.find("you requested 5001 tokens (5000 in the messages, 1 in"),
            std::string::npos)
      << e->message;
}

// Mutated bodies (bytes flipped, cut, duplicated) must end in a request or an error, never in an
// exception or a crash; errors always serialise.
TEST(OpenAiRequestTest, MutatedBodiesNeverThrow) {
  const std::string base = R"({"model": "qwen2.5-0.5b", "messages": [
      {"role": "system", "content": "s"}, {"role": "user", "content": [{"type": "text", "text": "t"}]},
      {"role": "assistant", "content": null, "tool_calls": [{"id": "c", "type": "function",
          "function": {"name": "f", "arguments": "{\"a\": [1, {\"b\": null}]}"}}]},
      {"role": "tool", "content": "r", "tool_call_id": "c"}],
      "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}],
      "tool_choice": {"type": "function", "function": {"name": "f"}}, "max_tokens": 16,
      "temperature": 0.5, "stop": ["x"], "logit_bias": {"3": 1}, "seed": 9, "logprobs": true,
      "top_logprobs": 2, "stream": true, "stream_options": {"include_usage": true},
      "response_format": {"type": "json_object"}, "mode": "qa", "prompt": [1, 2]})";
  ASSERT_TRUE(std::holds_alternative<OpenAiRequest>(ParseChatRequest(base, Limits())));
  ASSERT_TRUE(std::holds_alternative<OpenAiRequest>(ParseCompletionRequest(base, Limits())));
  std::mt19937_64 rng(11);
  int ok = 0, errors = 0;
  for (int iter = 0; iter < 1500; ++iter) {
    const std::string body = testutil::MutatedJson(base, rng);
    for (const bool chat : {true, false}) {
      std::variant<OpenAiRequest, ApiError> r;
      ASSERT_NO_THROW(r = chat ? ParseChatRequest(body, Limits())
                               : ParseCompletionRequest(body, Limits()))
          << body;
      if (auto* e = std::get_if<ApiError>(&r)) {
        ++errors;
        EXPECT_FALSE(e->message.empty());
        EXPECT_TRUE(e->status == 400 || e->status == 404) << e->status;
        ASSERT_NO_THROW((void)ErrorJson(*e));
      } else {
        ++ok;
        ASSERT_NO_THROW((void)std::get<OpenAiRequest>(r).messages.dump());
      }
    }
  }
  EXPECT_GT(ok, 100);
  EXPECT_GT(errors, 100);
}

TEST(OpenAiRequestTest, JsonDepthScan) {
  EXPECT_TRUE(JsonDepthWithin("[[1]]", 2));
  EXPECT_FALSE(JsonDepthWithin("[[[1]]]", 2));
  EXPECT_TRUE(JsonDepthWithin(R"({"a": "[[[[[[", "b": [1]})", 2));  // brackets in strings
  EXPECT_TRUE(JsonDepthWithin(R"({"a": "\"[[[[", "b": {}})", 2));   // escaped quote
  EXPECT_TRUE(JsonDepthWithin(R"({"a": "\\", "b": {}})", 2));       // escaped backslash
  EXPECT_FALSE(JsonDepthWithin(R"({"a": "\\", "b": {"c": []}})", 2));
  EXPECT_FALSE(JsonDepthWithin(R"({"a": {"b": {}}})", 2));
  EXPECT_TRUE(JsonDepthWithin("]]]][", 1));  // not JSON: still bounded
  EXPECT_EQ(JsonTypeName(nlohmann::ordered_json(1.5)), "number");
  EXPECT_EQ(JsonTypeName(nlohmann::ordered_json(3u)), "integer");
  EXPECT_EQ(JsonTypeName(nlohmann::ordered_json(nullptr)), "null");
}

// Each spelling of structured output lands in one StructuredOutput with its field named.
TEST(OpenAiRequestStructured, EverySpellingIsRead) {
  using Kind = StructuredOutput::Kind;
  struct Case {
    const char* fields;
    Kind kind;
    const char* field;
  };
  const Case cases[] = {
      {R"("response_format": {"type": "json_schema", "json_schema": {"name": "x", "strict": true,
          "schema": {"type": "object", "properties": {"b": {}, "a": {}}}}})",
       Kind::kJsonSchema, "response_format"},
      {R"("response_format": {"type": "json_object", "schema": {"type": "integer"}})",
       Kind::kJsonSchema, "response_format"},
      {R"("guided_json": "{\"type\": \"string\"}")", Kind::kJsonSchema, "guided_json"},
      {R"("json_schema": {"type": "string"})", Kind::kJsonSchema, "json_schema"},
      {R"("guided_regex": "[a-z]+")", Kind::kRegex, "guided_regex"},
      {R"("regex": "\\d{3}")", Kind::kRegex, "regex"},
      {R"("grammar": "root ::= \"a\"")", Kind::kGrammar, "grammar"},
      {R"("guided_grammar": "root ::= \"a\"")", Kind::kGrammar, "guided_grammar"},
      {R"("guided_choice": ["yes", "no"])", Kind::kChoice, "guided_choice"},
      {R"("response_format": {"type": "text"}, "guided_choice": ["yes"])", Kind::kChoice,
       "guided_choice"},
  };
  for (const Case& c : cases) {
    const OpenAiRequest r = ChatOk(Chat(c.fields));
    EXPECT_EQ(r.structured.kind, c.kind) << c.fields;
    EXPECT_EQ(r.structured.field, c.field) << c.fields;
  }
  const OpenAiRequest schema = ChatOk(Chat(cases[0].fields));
  EXPECT_TRUE(schema.structured.strict);
  // Property order is the schema's (the output follows it).
  EXPECT_EQ(schema.structured.schema["properties"].begin().key(), "b");
  EXPECT_EQ(ChatOk(Chat(cases[8].fields)).structured.choices,
            (std::vector<std::string>{"yes", "no"}));
}

}  // namespace
}  // namespace brisk::server
