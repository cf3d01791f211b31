// Anthropic Messages requests (server/anthropic_request.h): each field reaches the chat route's
// request; a conversation converts into exactly what the chat route builds from the same
// conversation sent the OpenAI way (and renders the same prompt with the real Qwen template);
// every refusal is a 400 (or 404) naming its field.
#include "server/anthropic_request.h"

#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <variant>

#include "server/chat_prompt.h"
#include "server_test_util.h"
#include "test_paths.h"

namespace brisk::server {
namespace {

using Json = nlohmann::ordered_json;

using testutil::kUser;
using testutil::Limits;

// A body with the user message, max_tokens 64 and `fields` (a JSON members fragment).
std::string Body(const std::string& fields) {
  return "{" + std::string(kUser) + R"(, "max_tokens": 64)" +
         (fields.empty() ? "" : ", " + fields) + "}";
}

OpenAiRequest Ok(const std::string& body) {
  auto r = ParseAnthropicRequest(body, Limits());
  if (auto* e = std::get_if<ApiError>(&r)) {
    ADD_FAILURE() << "unexpected error for " << body << ": " << e->message;
    return {};
  }
  return std::get<OpenAiRequest>(r);
}

OpenAiRequest ChatOk(const Json& body) {
  auto r = ParseChatRequest(body.dump(), Limits());
  if (auto* e = std::get_if<ApiError>(&r)) {
    ADD_FAILURE() << "unexpected chat error: " << e->message;
    return {};
  }
  return std::get<OpenAiRequest>(r);
}

TEST(AnthropicRequestTest, FieldsReachTheChatRequest) {
  const OpenAiRequest r = Ok(R"({"model": "qwen2.5-0.5b", "max_tokens": 77,
      "system": "Be brief.", "messages": [{"role": "user", "content": "hi"}],
      "temperature": 0.25, "top_p": 0.5, "top_k": 7, "stop_sequences": ["END", "\n\n"],
      "stream": true, "metadata": {"user_id": "u-1"}})");
  EXPECT_TRUE(r.chat);
  EXPECT_EQ(r.model, "qwen2.5-0.5b");
  EXPECT_EQ(r.gen.max_tokens, 77);
  EXPECT_FLOAT_EQ(r.gen.sampling.temperature, 0.25f);
  EXPECT_FLOAT_EQ(r.gen.sampling.top_p, 0.5f);
  EXPECT_EQ(r.gen.sampling.top_k, 7);
  EXPECT_EQ(r.gen.stop, (std::vector<std::string>{"END", "\n\n"}));
  EXPECT_TRUE(r.stream);
  EXPECT_FALSE(r.include_usage);
  EXPECT_EQ(r.messages, Json::parse(R"([{"role": "system", "content": "Be brief."},
                                        {"role": "user", "content": "hi"}])"));
  EXPECT_TRUE(r.tools.is_null());
  EXPECT_EQ(r.tool_choice, "none");
  EXPECT_FALSE(ToolCallsEnabled(r));
}

TEST(AnthropicRequestTest, DefaultsAreTheChatRoutesDefaults) {
  const OpenAiRequest r = Ok(Body(""));
  EXPECT_FLOAT_EQ(r.gen.sampling.temperature, 1.0f);
  EXPECT_FLOAT_EQ(r.gen.sampling.top_p, 1.0f);
  EXPECT_EQ(r.gen.sampling.top_k, 0);
  EXPECT_TRUE(r.gen.stop.empty());
  EXPECT_FALSE(r.stream);
  EXPECT_EQ(r.model, "");
  // Unknown fields are ignored, as on the OpenAI routes; the anthropic-version is a header.
  EXPECT_EQ(Ok(Body(R"("service_tier": "auto", "thinking": null)")).gen.max_tokens, 64);
}

TEST(AnthropicRequestTest, SystemBlocksAndEmptySystem) {
  EXPECT_EQ(Ok(Body(R"("system": [{"type": "text", "text": "a"},
                                   {"type": "text", "text": "b", "cache_control": {}}])"))
                .messages[0],
            Json::parse(R"({"role": "system", "content": "a\nb"})"));
  // No system prompt given (or an empty one): the template's default applies.
  EXPECT_EQ(Ok(Body(R"("system": "")")).messages.size(), 1u);
  EXPECT_EQ(Ok(Body(R"("system": [])")).messages.size(), 1u);
}

// A tool round trip converts into exactly what the chat route makes of the same conversation
// sent by an OpenAI client.
const char* kAnthropicToolChat = R"({"max_tokens": 50,
  "system": [{"type": "text", "text": "You help."}],
  "tools": [{"name": "get_weather", "description": "Weather of a city",
             "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}},
            {"name": "now", "input_schema": {"type": "object"}}],
  "messages": [
    {"role": "user", "content": [{"type": "text", "text": "Weather in Paris?"}]},
    {"role": "assistant", "content": [
       {"type": "text", "text": "Let me check."},
       {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}},
       {"type": "tool_use", "id": "toolu_2", "name": "now", "input": {}}]},
    {"role": "user", "content": [
       {"type": "tool_result", "tool_use_id": "toolu_1", "content": "sunny"},
       {"type": "tool_result", "tool_use_id": "toolu_2",
        "content": [{"type": "text", "text": "noon"}, {"type": "text", "text": "UTC"}]},
       {"type": "text", "text": "And tomorrow?"}]}]})";

const char* kOpenAiToolChat = R"({"max_tokens": 50,
  "tools": [{"type": "function", "function": {"name": "get_weather",
               "description": "Weather of a city", "parameters": {"type": "object",
               "properties": {"city": {"type": "string"}}}}},
            {"type": "function", "function": {"name": "now", "parameters": {"type": "object"}}}],
  "messages": [
    {"role": "system", "content": "You help."},
    {"role": "user", "content": "Weather in Paris?"},
    {"role": "assistant", "content": "Let me check.", "tool_calls": [
       {"id": "toolu_1", "type": "function",
        "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}},
       {"id": "toolu_2", "type": "function", "function": {"name": "now", "arguments": "{}"}}]},
    {"role": "tool", "tool_call_id": "toolu_1", "content": "sunny"},
    {"role": "tool", "tool_call_id": "toolu_2", "content": "noon\nUTC"},
    {"role": "user", "content": "And tomorrow?"}]})";

TEST(AnthropicRequestTest, ToolRoundTripConvertsAsTheChatRouteBuildsIt) {
  const OpenAiRequest a = Ok(kAnthropicToolChat);
  const OpenAiRequest c = ChatOk(Json::parse(kOpenAiToolChat));
  EXPECT_EQ(a.messages, c.messages) << a.messages.dump(1) << "\n" << c.messages.dump(1);
  EXPECT_EQ(a.tools, c.tools) << a.tools.dump(1) << "\n" << c.tools.dump(1);
  EXPECT_EQ(a.tool_choice, "auto");
  EXPECT_EQ(a.tool_choice, c.tool_choice);
  EXPECT_TRUE(ToolCallsEnabled(a));
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(AnthropicRequestTest, ToolRoundTripRendersTheChatRoutesPrompt) {
  const std::string name = "qwen2.5-instruct-chat-template.jinja";
  const std::string path = test::FindGoldenOrData("tokenizer/" + name, "jinja/" + name);
  ASSERT_FALSE(path.empty());
  auto t = jinja::ChatTemplate::Parse(ReadFile(path));
  ASSERT_TRUE(t.ok()) << t.message();
  auto a = RenderChatPrompt(*t, Ok(kAnthropicToolChat));
  auto c = RenderChatPrompt(*t, ChatOk(Json::parse(kOpenAiToolChat)));
  ASSERT_TRUE(a.ok() && c.ok());
  EXPECT_EQ(*a, *c);
  // What the template makes of it: the call as Qwen writes calls, the results as tool responses.
  EXPECT_NE(a->find("Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": "
                    "{\"city\": \"Paris\"}}\n</tool_call>"),
            std::string::npos)
      << *a;
  EXPECT_NE(a->find("<tool_response>\nsunny\n</tool_response>\n<tool_response>\nnoon\nUTC\n"
                    "</tool_response>"),
            std::string::npos)
      << *a;
}

TEST(AnthropicRequestTest, ToolResultsKeepTheirOrderAndErrorsSaySo) {
  const OpenAiRequest r = Ok(R"({"max_tokens": 5, "messages": [
      {"role": "user", "content": "go"},
      {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "f",
                                         "input": {"a": [1, {"b": null}]}}]},
      {"role": "user", "content": [
         {"type": "text", "text": "before"},
         {"type": "tool_result", "tool_use_id": "t1", "is_error": true, "content": "boom"},
         {"type": "tool_result", "tool_use_id": "t1"},
         {"type": "text", "text": "after"}, {"type": "text", "text": "more"}]}]})");
  EXPECT_EQ(r.messages, Json::parse(R"([
      {"role": "user", "content": "go"},
      {"role": "assistant", "content": "", "tool_calls": [{"id": "t1", "type": "function",
         "function": {"name": "f", "arguments": "{\"a\":[1,{\"b\":null}]}"}}]},
      {"role": "user", "content": "before"},
      {"role": "tool", "content": "Error: boom", "tool_call_id": "t1"},
      {"role": "tool", "content": "", "tool_call_id": "t1"},
      {"role": "user", "content": "after\nmore"}])"))
      << r.messages.dump(1);
}

TEST(AnthropicRequestTest, ToolChoiceMapsToTheChatRoutesValues) {
  const std::string tools = R"("tools": [{"name": "f", "input_schema": {"type": "object"}},
                                         {"name": "g", "input_schema": {}}])";
  EXPECT_EQ(Ok(Body(tools)).tool_choice, "auto");
  EXPECT_EQ(Ok(Body(tools + R"(, "tool_choice": {"type": "auto"})")).tool_choice, "auto");
  EXPECT_EQ(Ok(Body(tools + R"(, "tool_choice": {"type": "any"})")).tool_choice, "required");
  EXPECT_EQ(Ok(Body(tools + R"(, "tool_choice": {"type": "tool", "name": "g"})")).tool_choice, "g");
  const OpenAiRequest none = Ok(Body(tools + R"(, "tool_choice": {"type": "none"})"));
  EXPECT_EQ(none.tool_choice, "none");
  EXPECT_FALSE(ToolCallsEnabled(none));
  const OpenAiRequest single = Ok(Body(tools + R"(, "tool_choice": {"type": "auto",
                                                 "disable_parallel_tool_use": true})"));
  EXPECT_EQ(single.tool_choice, "auto");
  EXPECT_FALSE(single.parallel_tool_calls);
  EXPECT_TRUE(Ok(Body(tools + R"(, "tool_choice": {"type": "any"})")).parallel_tool_calls);
  EXPECT_EQ(Ok(Body(R"("tools": [], "tool_choice": {"type": "auto"})")).tools, nullptr);
}

TEST(AnthropicRequestTest, CountTokensNeedsNoMaxTokens) {
  auto r = ParseAnthropicCountTokens(
      R"({"model": "qwen2.5-0.5b", "system": "s", "messages": [{"role": "user", "content": "hi"}],
          "tools": [{"name": "f", "input_schema": {"type": "object"}}],
          "tool_choice": {"type": "tool", "name": "f"}, "max_tokens": "ignored"})",
      Limits());
  ASSERT_TRUE(std::holds_alternative<OpenAiRequest>(r)) << std::get<ApiError>(r).message;
  EXPECT_EQ(std::get<OpenAiRequest>(r).messages.size(), 2u);
  EXPECT_EQ(std::get<OpenAiRequest>(r).tool_choice, "f");
  // The conversation is checked as for /v1/messages.
  auto bad =
      ParseAnthropicCountTokens(R"({"messages": [{"role": "tool", "content": "x"}]})", Limits());
  ASSERT_TRUE(std::holds_alternative<ApiError>(bad));
  EXPECT_EQ(std::get<ApiError>(bad).param, "messages[0].role");
}

struct ErrCase {
  std::string body;  // a whole body, or with `fields` true the members added to Body()
  bool fields;
  std::string param;       // expected param ("" = none)
  std::string in_message;  // a piece the message must contain (the field's name among it)
};

const ErrCase kErrors[] = {
    // Body.
    {"", false, "", "invalid JSON"},
    {R"({"max_tokens": 5, "messages": [)", false, "", "invalid JSON"},
    {"[1]", false, "", "must be a JSON object, got array"},
    {"{\"max_tokens\": 5, \"messages\": [{\"role\": \"user\", \"content\": \"\xC3\x28\"}]}", false,
     "", "not valid UTF-8"},
    {std::string(100, '[') + std::string(100, ']'), false, "", "nested deeper"},
    // model, max_tokens and sampling.
    {R"("model": 5)", true, "model", "model must be a string, got integer"},
    {R"({"messages": [{"role": "user", "content": "hi"}]})", false, "max_tokens",
     "max_tokens is required"},
    {R"({"messages": [{"role": "user", "content": "hi"}], "max_tokens": null})", false,
     "max_tokens", "max_tokens is required"},
    {R"({"messages": [{"role": "user", "content": "hi"}], "max_tokens": 0})", false, "max_tokens",
     "max_tokens must be an integer in [1, "},
    {R"({"messages": [{"role": "user", "content": "hi"}], "max_tokens": "5"})", false, "max_tokens",
     "max_tokens must be an integer, got string"},
    {R"("temperature": -1)", true, "temperature", "temperature must be in [0, 2]"},
    {R"("temperature": "warm")", true, "temperature", "temperature must be a number"},
    {R"("top_p": 0)", true, "top_p", "top_p must be in (0, 1]"},
    {R"("top_k": 1.5)", true, "top_k", "top_k must be an integer"},
    {R"("top_k": -2)", true, "top_k", "top_k must be an integer in [-1, "},
    {R"("stream": "yes")", true, "stream", "stream must be a boolean"},
    {R"("metadata": "x")", true, "metadata", "metadata must be an object"},
    {R"("metadata": {"user_id": 5})", true, "metadata.user_id",
     "metadata.user_id must be a string"},
    {R"("stop_sequences": "END")", true, "stop_sequences", "stop_sequences must be an array"},
    {R"("stop_sequences": ["a", 1])", true, "stop_sequences[1]", "stop_sequences[1] must be a"},
    {R"("stop_sequences": ["a", ""])", true, "stop_sequences[1]", "must not be empty"},
    {R"("stop_sequences": ["a", "b", "c", "d", "e"])", true, "stop_sequences", "at most 4"},
    // system.
    {R"("system": 5)", true, "system", "system must be a string or an array of text blocks"},
    {R"("system": ["x"])", true, "system[0]", "system[0] must be an object"},
    {R"("system": [{"text": "x"}])", true, "system[0].type", "system[0].type is required"},
    {R"("system": [{"type": "image"}])", true, "system[0].type", "image blocks are not supported"},
    {R"("system": [{"type": "tool_use"}])", true, "system[0].type", "must be one of text"},
    {R"("system": [{"type": "text", "text": 1}])", true, "system[0].text",
     "system[0].text must be a string"},
    // messages.
    {R"({"max_tokens": 5})", false, "messages", "messages is required"},
    {R"({"max_tokens": 5, "messages": {}})", false, "messages", "messages must be an array"},
    {R"({"max_tokens": 5, "messages": []})", false, "messages", "messages must not be empty"},
    {R"({"max_tokens": 5, "messages": [3]})", false, "messages[0]",
     "messages[0] must be an object"},
    {R"({"max_tokens": 5, "messages": [{"content": "x"}]})", false, "messages[0].role",
     "messages[0].role is required"},
    {R"({"max_tokens": 5, "messages": [{"role": "system", "content": "x"}]})", false,
     "messages[0].role", "must be 'user' or 'assistant', got 'system' (the system prompt"},
    {R"({"max_tokens": 5, "messages": [{"role": "robot", "content": "x"}]})", false,
     "messages[0].role", "messages[0].role must be 'user' or 'assistant', got 'robot'"},
    {R"({"max_tokens": 5, "messages": [{"role": "user", "content": "a"},
                                       {"role": "assistant", "content": "b"}]})",
     false, "messages[1].role", "final assistant message (prefill) is not supported"},
    {R"({"max_tokens": 5, "messages": [{"role": "user"}]})", false, "messages[0].content",
     "messages[0].content is required"},
    {R"({"max_tokens": 5, "messages": [{"role": "user", "content": 5}]})", false,
     "messages[0].content", "messages[0].content must be a string or an array of content blocks"},
    {R"({"max_tokens": 5, "messages": [{"role": "user", "content": []}]})", false,
     "messages[0].content", "messages[0].content must not be empty"},
    {R"({"max_tokens": 5, "messages": [{"role": "user", "content": [{"type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}}]}]})",
     false, "messages[0].content[0].type",
     "messages[0].content[0].type: image blocks are not supported"},
    {R"({"max_tokens": 5, "messages": [{"role": "user", "content": [{"type": "document"}]}]})",
     false, "messages[0].content[0].type", "document blocks are not supported"},
    {R"({"max_tokens": 5, "messages": [{"role": "user", "content": [{"type": "tool_use"}]}]})",
     false, "messages[0].content[0].type", "must be one of text, tool_result"},
    {R"({"max_tokens": 5, "messages": [{"role": "user", "content": [{"type": "text"}]}]})", false,
     "messages[0].content[0].text", "messages[0].content[0].text is required"},
    {R"({"max_tokens": 5, "messages": [{"role": "user", "content": [{"type": 1}]}]})", false,
     "messages[0].content[0].type", "messages[0].content[0].type must be a string"},
    {R"({"max_tokens": 5, "messages": [{"role": "user", "content": [
        {"type": "tool_result", "content": "x"}]}]})",
     false, "messages[0].content[0].tool_use_id", "tool_use_id is required"},
    {R"({"max_tokens": 5, "messages": [{"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t", "content": 4}]}]})",
     false, "messages[0].content[0].content",
     "messages[0].content[0].content must be a string or an array of text blocks"},
    {R"({"max_tokens": 5, "messages": [{"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t", "content": [{"type": "image"}]}]}]})",
     false, "messages[0].content[0].content[0].type", "image blocks are not supported"},
    {R"({"max_tokens": 5, "messages": [{"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t", "is_error": "yes"}]}]})",
     false, "messages[0].content[0].is_error", "is_error must be a boolean"},
    // Assistant blocks (followed by a user turn: a final assistant message is refused).
    {R"({"max_tokens": 5, "messages": [{"role": "assistant", "content": [
        {"type": "tool_result", "tool_use_id": "t"}]}, {"role": "user", "content": "x"}]})",
     false, "messages[0].content[0].type", "must be one of text, tool_use"},
    {R"({"max_tokens": 5, "messages": [{"role": "assistant", "content": [
        {"type": "tool_use", "name": "f", "input": {}}]}, {"role": "user", "content": "x"}]})",
     false, "messages[0].content[0].id", "messages[0].content[0].id is required"},
    {R"({"max_tokens": 5, "messages": [{"role": "assistant", "content": [
        {"type": "tool_use", "id": "t", "name": "", "input": {}}]},
        {"role": "user", "content": "x"}]})",
     false, "messages[0].content[0].name", "name must not be empty"},
    {R"({"max_tokens": 5, "messages": [{"role": "assistant", "content": [
        {"type": "tool_use", "id": "t", "name": "f"}]}, {"role": "user", "content": "x"}]})",
     false, "messages[0].content[0].input", "messages[0].content[0].input is required"},
    {R"({"max_tokens": 5, "messages": [{"role": "assistant", "content": [
        {"type": "tool_use", "id": "t", "name": "f", "input": "{}"}]},
        {"role": "user", "content": "x"}]})",
     false, "messages[0].content[0].input", "input must be an object, got string"},
    {R"({"max_tokens": 5, "messages": [{"role": "assistant", "content": [
        {"type": "thinking", "thinking": "hm"}]}, {"role": "user", "content": "x"}]})",
     false, "messages[0].content[0].type", "got 'thinking'"},
    // tools and tool_choice.
    {R"("tools": {})", true, "tools", "tools must be an array"},
    {R"("tools": [1])", true, "tools[0]", "tools[0] must be an object"},
    {R"("tools": [{"input_schema": {}}])", true, "tools[0].name", "tools[0].name is required"},
    {R"("tools": [{"name": "", "input_schema": {}}])", true, "tools[0].name", "must not be empty"},
    {R"("tools": [{"name": "f"}])", true, "tools[0].input_schema",
     "tools[0].input_schema is required"},
    {R"("tools": [{"name": "f", "input_schema": []}])", true, "tools[0].input_schema",
     "tools[0].input_schema must be an object"},
    {R"("tools": [{"name": "f", "description": 2, "input_schema": {}}])", true,
     "tools[0].description", "tools[0].description must be a string"},
    {R"("tools": [{"type": "web_search_20250305", "name": "web_search"}])", true, "tools[0].type",
     "server tools ('web_search_20250305') are not supported"},
    {R"("tool_choice": "auto")", true, "tool_choice", "tool_choice must be an object"},
    {R"("tool_choice": {})", true, "tool_choice.type", "tool_choice.type is required"},
    {R"("tools": [{"name": "f", "input_schema": {}}], "tool_choice": {"type": "sometimes"})", true,
     "tool_choice.type", "tool_choice.type must be one of auto, any, tool, none"},
    {R"("tool_choice": {"type": "any"})", true, "tool_choice.type", "'any' needs tools"},
    {R"("tools": [{"name": "f", "input_schema": {}}], "tool_choice": {"type": "tool"})", true,
     "tool_choice.name", "tool_choice.name is required"},
    {R"("tools": [{"name": "f", "input_schema": {}}],
        "tool_choice": {"type": "tool", "name": "g"})",
     true, "tool_choice.name", "tool_choice.name names tool 'g', which is not in tools"},
    {R"("tools": [{"name": "f", "input_schema": {}}],
        "tool_choice": {"type": "auto", "disable_parallel_tool_use": 1})",
     true, "tool_choice.disable_parallel_tool_use", "must be a boolean"},
};

TEST(AnthropicRequestTest, EveryRefusalNamesItsField) {
  for (const ErrCase& c : kErrors) {
    const std::string body = c.fields ? Body(c.body) : c.body;
    SCOPED_TRACE(body);
    auto r = ParseAnthropicRequest(body, Limits());
    ASSERT_TRUE(std::holds_alternative<ApiError>(r));
    const ApiError& e = std::get<ApiError>(r);
    EXPECT_EQ(e.status, 400);
    EXPECT_EQ(e.anthropic_type, "invalid_request_error");
    EXPECT_EQ(e.param, c.param);
    EXPECT_NE(e.message.find(c.in_message), std::string::npos) << e.message;
  }
}

TEST(AnthropicRequestTest, UnknownModelIsNotFound) {
  auto r = ParseAnthropicRequest(Body(R"("model": "claude-sonnet-4")"), Limits());
  ASSERT_TRUE(std::holds_alternative<ApiError>(r));
  const ApiError& e = std::get<ApiError>(r);
  EXPECT_EQ(e.status, 404);
  EXPECT_EQ(e.anthropic_type, "not_found_error");
  EXPECT_EQ(e.param, "model");
  EXPECT_NE(e.message.find("claude-sonnet-4"), std::string::npos);
}

TEST(AnthropicRequestTest, TooManyMessagesAndTools) {
  RequestLimits l = Limits();
  l.max_messages = 2;
  auto r = ParseAnthropicRequest(R"({"max_tokens": 5, "messages": [{"role": "user", "content": "a"},
      {"role": "user", "content": "b"}, {"role": "user", "content": "c"}]})",
                                 l);
  ASSERT_TRUE(std::holds_alternative<ApiError>(r));
  EXPECT_EQ(std::get<ApiError>(r).param, "messages");
  Json tools = Json::array();
  for (size_t i = 0; i <= kMaxTools; ++i)
    tools.push_back(Json{{"name", "t" + std::to_string(i)}, {"input_schema", Json::object()}});
  auto t = ParseAnthropicRequest(Body("\"tools\": " + tools.dump()), Limits());
  ASSERT_TRUE(std::holds_alternative<ApiError>(t));
  EXPECT_EQ(std::get<ApiError>(t).param, "tools");
}

TEST(AnthropicRequestTest, MutatedBodiesNeverThrow) {
  std::string base = kAnthropicToolChat;
  base.insert(1, R"("stop_sequences": ["x"], "temperature": 0.5, "top_k": 3, "stream": true,
      "tool_choice": {"type": "tool", "name": "now"}, "metadata": {"user_id": "u"}, )");
  ASSERT_TRUE(std::holds_alternative<OpenAiRequest>(ParseAnthropicRequest(base, Limits())));
  std::mt19937_64 rng(5);
  int ok = 0, errors = 0;
  for (int iter = 0; iter < 1500; ++iter) {
    const std::string body = testutil::MutatedJson(base, rng);
    std::variant<OpenAiRequest, ApiError> r;
    ASSERT_NO_THROW(r = ParseAnthropicRequest(body, Limits())) << body;
    if (auto* e = std::get_if<ApiError>(&r)) {
      ++errors;
      EXPECT_FALSE(e->message.empty());
      EXPECT_TRUE(e->status == 400 || e->status == 404) << e->status;
      ASSERT_NO_THROW((void)ErrorJson(*e, ErrorShape::kAnthropic));
    } else {
      ++ok;
      ASSERT_NO_THROW((void)std::get<OpenAiRequest>(r).messages.dump());
    }
  }
  // The body is long, so most mutations break it; enough survive to reach the conversion.
  EXPECT_GT(ok, 50);
  EXPECT_GT(errors, 100);
}

}  // namespace
}  // namespace brisk::server
