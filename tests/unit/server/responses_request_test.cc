// Responses API requests (server/responses_request.h): input items become the chat route's
// messages (and render what the same conversation sent to /v1/chat/completions renders), each
// field reaches the chat request or the settings the response repeats, and every refusal is a
// 400 naming its field.
#include "server/responses_request.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <variant>

#include "server_test_util.h"

namespace brisk::server {
namespace {

using Json = nlohmann::ordered_json;

using testutil::Limits;

ResponsesRequest Ok(const Json& body) {
  auto r = ParseResponsesRequest(body.dump(), Limits());
  if (auto* e = std::get_if<ApiError>(&r)) {
    ADD_FAILURE() << "unexpected error for " << body.dump() << ": " << e->message;
    return {};
  }
  return std::get<ResponsesRequest>(std::move(r));
}

ApiError Err(const std::string& body) {
  auto r = ParseResponsesRequest(body, Limits());
  if (auto* e = std::get_if<ApiError>(&r)) return *e;
  ADD_FAILURE() << "expected an error for " << body;
  return {};
}

ApiError Err(const Json& body) { return Err(body.dump()); }

// The messages AssembleConversation makes without history.
Json Messages(const Json& body) {
  ResponsesRequest r = Ok(body);
  AssembleConversation(nullptr, &r);
  return r.chat.messages;
}

TEST(ResponsesRequestTest, StringInputAndInstructions) {
  EXPECT_EQ(Messages({{"input", "hi"}}), Json::parse(R"([{"role": "user", "content": "hi"}])"));
  EXPECT_EQ(Messages({{"input", "hi"}, {"instructions", "Be brief."}}),
            Json::parse(R"([{"role": "system", "content": "Be brief."},
                            {"role": "user", "content": "hi"}])"));
  const ResponsesRequest r = Ok({{"input", "hi"}, {"instructions", "Be brief."}});
  // The input kept for the store has no instructions: a continuation does not inherit them.
  EXPECT_EQ(r.input, Json::parse(R"([{"role": "user", "content": "hi"}])"));
  EXPECT_EQ(r.settings["instructions"], "Be brief.");
  EXPECT_TRUE(r.store);
  EXPECT_TRUE(r.chat.chat);
}

TEST(ResponsesRequestTest, ItemsBecomeChatMessages) {
  const Json body = Json::parse(R"({"input": [
      {"role": "developer", "content": "Use tools."},
      {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "a"},
                                                      {"type": "input_text", "text": "b"}]},
      {"type": "message", "role": "assistant", "id": "msg_1", "status": "completed",
       "content": [{"type": "output_text", "text": "Let me look.", "annotations": []}]},
      {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "f",
       "arguments": "{\"x\":1}", "status": "completed"},
      {"type": "function_call", "call_id": "call_2", "name": "g", "arguments": "{}"},
      {"type": "function_call_output", "call_id": "call_1", "output": "one"},
      {"type": "function_call_output", "call_id": "call_2",
       "output": [{"type": "input_text", "text": "two"}]},
      {"type": "function_call", "call_id": "call_3", "name": "f", "arguments": "{}"},
      {"role": "user", "content": "thanks"}]})");
  EXPECT_EQ(Messages(body), Json::parse(R"([
      {"role": "system", "content": "Use tools."},
      {"role": "user", "content": "a\nb"},
      {"role": "assistant", "content": "Let me look.", "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{\"x\":1}"}},
        {"id": "call_2", "type": "function", "function": {"name": "g", "arguments": "{}"}}]},
      {"role": "tool", "content": "one", "tool_call_id": "call_1"},
      {"role": "tool", "content": "two", "tool_call_id": "call_2"},
      {"role": "assistant", "content": "", "tool_calls": [
        {"id": "call_3", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
      {"role": "user", "content": "thanks"}])"))
      << Messages(body).dump(2);
}

TEST(ResponsesRequestTest, HistoryGoesBetweenInstructionsAndInput) {
  ResponsesRequest r =
      Ok({{"input", "again"}, {"instructions", "sys"}, {"previous_response_id", "resp_1"}});
  EXPECT_EQ(r.previous_response_id, "resp_1");
  EXPECT_EQ(r.settings["previous_response_id"], "resp_1");
  const Json history = Json::parse(R"([{"role": "user", "content": "hi"},
                                       {"role": "assistant", "content": "hello"}])");
  AssembleConversation(&history, &r);
  EXPECT_EQ(r.chat.messages, Json::parse(R"([{"role": "system", "content": "sys"},
      {"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"},
      {"role": "user", "content": "again"}])"));
}

TEST(ResponsesRequestTest, FlatFunctionToolsBecomeChatTools) {
  const Json params =
      Json::parse(R"({"type": "object", "properties": {"city": {"type": "string"}}})");
  const Json body = {{"input", "hi"},
                     {"tools", Json::array({Json{{"type", "function"},
                                                 {"name", "get_weather"},
                                                 {"description", "Weather"},
                                                 {"parameters", params},
                                                 {"strict", true}}})},
                     {"tool_choice", {{"type", "function"}, {"name", "get_weather"}}},
                     {"parallel_tool_calls", false}};
  const ResponsesRequest r = Ok(body);
  EXPECT_EQ(r.chat.tools,
            Json::array({Json{
                {"type", "function"},
                {"function",
                 {{"name", "get_weather"}, {"description", "Weather"}, {"parameters", params}}}}}));
  EXPECT_EQ(r.chat.tool_choice, "get_weather");
  EXPECT_FALSE(r.chat.parallel_tool_calls);
  EXPECT_EQ(r.settings["tools"][0]["name"], "get_weather");
  EXPECT_EQ(r.settings["tools"][0]["strict"], true);
  EXPECT_EQ(r.settings["tool_choice"], body["tool_choice"]);
  EXPECT_EQ(r.settings["parallel_tool_calls"], false);
  // Defaults: auto with tools, none without (nothing to call); the response says "auto".
  Json auto_body = body;
  auto_body.erase("tool_choice");
  EXPECT_EQ(Ok(auto_body).chat.tool_choice, "auto");
  const ResponsesRequest plain = Ok({{"input", "hi"}});
  EXPECT_EQ(plain.chat.tool_choice, "none");
  EXPECT_EQ(plain.settings["tool_choice"], "auto");
  EXPECT_EQ(plain.settings["tools"], Json::array());
  auto_body["tool_choice"] = "required";
  EXPECT_EQ(Ok(auto_body).chat.tool_choice, "required");
}

TEST(ResponsesRequestTest, SamplingLengthsAndStreaming) {
  const ResponsesRequest r = Ok({{"input", "hi"},
                                 {"temperature", 0.25},
                                 {"top_p", 0.5},
                                 {"max_output_tokens", 77},
                                 {"stream", true},
                                 {"seed", 9},
                                 {"store", false},
                                 {"metadata", {{"k", "v"}}},
                                 {"user", "u-1"},
                                 {"truncation", "disabled"},
                                 {"include", {"reasoning.encrypted_content"}},
                                 {"reasoning", {{"effort", "none"}}},
                                 {"service_tier", "auto"},
                                 {"stream_options", {{"include_obfuscation", false}}}});
  EXPECT_FLOAT_EQ(r.chat.gen.sampling.temperature, 0.25f);
  EXPECT_FLOAT_EQ(r.chat.gen.sampling.top_p, 0.5f);
  EXPECT_EQ(r.chat.gen.max_tokens, 77);
  EXPECT_EQ(r.chat.max_tokens_field, "max_output_tokens");
  EXPECT_EQ(r.chat.gen.sampling.seed, 9u);
  EXPECT_TRUE(r.chat.stream);
  EXPECT_FALSE(r.store);
  EXPECT_EQ(r.chat.user, "u-1");
  EXPECT_EQ(r.settings["max_output_tokens"], 77);
  EXPECT_EQ(r.settings["metadata"], Json({{"k", "v"}}));
  EXPECT_EQ(r.settings["store"], false);
  EXPECT_EQ(r.settings["user"], "u-1");
  // OpenAI's defaults: temperature and top_p 1, no cap but the context.
  const ResponsesRequest d = Ok({{"input", "hi"}});
  EXPECT_FLOAT_EQ(d.chat.gen.sampling.temperature, 1.0f);
  EXPECT_EQ(d.chat.gen.max_tokens, kNoMaxTokensCap);
  EXPECT_TRUE(d.chat.max_tokens_field.empty());
  EXPECT_TRUE(d.settings["max_output_tokens"].is_null());
  EXPECT_EQ(d.settings["text"], Json::parse(R"({"format": {"type": "text"}})"));
}

TEST(ResponsesRequestTest, TextFormatIsStructuredOutput) {
  const Json schema =
      Json::parse(R"({"type": "object", "properties": {"a": {"type": "integer"}}})");
  const ResponsesRequest r =
      Ok({{"input", "hi"},
          {"text",
           {{"format",
             {{"type", "json_schema"}, {"name", "A"}, {"schema", schema}, {"strict", true}}}}}});
  EXPECT_EQ(r.chat.structured.kind, StructuredOutput::Kind::kJsonSchema);
  EXPECT_EQ(r.chat.structured.schema, schema);
  EXPECT_TRUE(r.chat.structured.strict);
  EXPECT_EQ(r.chat.structured.field, "text.format");
  EXPECT_EQ(r.settings["text"]["format"]["name"], "A");
  EXPECT_EQ(
      Ok({{"input", "hi"}, {"text", {{"format", {{"type", "json_object"}}}}}}).chat.structured.kind,
      StructuredOutput::Kind::kJsonObject);
  EXPECT_EQ(Ok({{"input", "hi"}, {"text", {{"format", {{"type", "text"}}}}}}).chat.structured.kind,
            StructuredOutput::Kind::kNone);
}

struct Refusal {
  const char* body;
  const char* param;
  const char* message_part;
  const char* code;  // "" = null
};

TEST(ResponsesRequestTest, RefusalsNameTheirField) {
  const Refusal cases[] = {
      {R"({})", "input", "input is required", ""},
      {R"({"input": 5})", "input", "must be a string or an array", ""},
      {R"({"input": []})", "input", "must not be empty", ""},
      {R"({"input": [{"role": "tool", "content": "x"}]})", "input[0].role", "must be one of", ""},
      {R"({"input": [{"role": "user"}]})", "input[0].content", "is required", ""},
      {R"({"input": [{"role": "user", "content": [{"type": "input_image", "image_url": "u"}]}]})",
       "input[0].content[0].type", "text only", "unsupported_value"},
      {R"({"input": [{"type": "reasoning", "summary": []}]})", "input[0].type",
       "'reasoning' items are not supported", "unsupported_value"},
      {R"({"input": [{"type": "item_reference", "id": "msg_1"}]})", "input[0].type",
       "previous_response_id", "unsupported_value"},
      {R"({"input": [{"type": "function_call", "name": "f", "arguments": "{}"}]})",
       "input[0].call_id", "is required", ""},
      {R"({"input": [{"type": "function_call_output", "call_id": "c", "output": 3}]})",
       "input[0].output", "must be a string", ""},
      {R"({"input": "hi", "tools": [{"type": "web_search_preview"}]})", "tools[0].type",
       "built-in tool 'web_search_preview'", "unsupported_value"},
      {R"({"input": "hi", "tools": [{"type": "function"}]})", "tools[0].name", "is required", ""},
      {R"({"input": "hi", "tools": [{"type": "function", "name": "f", "parameters": 1}]})",
       "tools[0].parameters", "JSON Schema", ""},
      {R"({"input": "hi", "tools": [{"type": "function", "name": "f"}],
           "tool_choice": {"type": "function", "name": "g"}})",
       "tool_choice.name", "not in tools", ""},
      {R"({"input": "hi", "tool_choice": "required"})", "tool_choice", "needs tools", ""},
      {R"({"input": "hi", "tool_choice": {"type": "file_search"}})", "tool_choice.type",
       "not supported", "unsupported_value"},
      {R"({"input": "hi", "text": {"format": {"type": "json_schema", "name": "x"}}})",
       "text.format.schema", "is required", ""},
      {R"({"input": "hi", "text": {"format": {"type": "xml"}}})", "text.format.type",
       "must be one of", ""},
      {R"({"input": "hi", "reasoning": {"effort": "high"}})", "reasoning.effort", "does not reason",
       "unsupported_value"},
      {R"({"input": "hi", "include": ["message.output_text.logprobs"]})", "include[0]",
       "not supported", "unsupported_value"},
      {R"({"input": "hi", "background": true})", "background", "not supported",
       "unsupported_value"},
      {R"({"input": "hi", "conversation": "conv_1"})", "conversation", "not supported",
       "unsupported_value"},
      {R"({"input": "hi", "truncation": "auto"})", "truncation", "'auto' is not supported",
       "unsupported_value"},
      {R"({"input": "hi", "stream_options": {}})", "stream_options", "stream: true", ""},
      {R"({"input": "hi", "temperature": 3})", "temperature", "temperature", ""},
      {R"({"input": "hi", "max_output_tokens": 0})", "max_output_tokens", "max_output_tokens", ""},
      {R"({"input": "hi", "store": "yes"})", "store", "must be a boolean", ""},
      {R"({"input": "hi", "previous_response_id": 7})", "previous_response_id", "must be a string",
       ""},
      {R"({"input": "hi", "metadata": {"k": 1}})", "metadata.k", "strings", ""},
      {R"({"input": "hi", "instructions": ["a"]})", "instructions", "must be a string", ""},
  };
  for (const Refusal& c : cases) {
    const ApiError e = Err(std::string(c.body));
    EXPECT_EQ(e.status, 400) << c.body;
    EXPECT_EQ(e.type, "invalid_request_error") << c.body;
    EXPECT_EQ(e.param, c.param) << c.body << ": " << e.message;
    EXPECT_NE(e.message.find(c.message_part), std::string::npos) << c.body << ": " << e.message;
    EXPECT_EQ(e.code, c.code) << c.body << ": " << e.message;
  }
  const ApiError model = Err(Json{{"input", "hi"}, {"model", "gpt-4o"}});
  EXPECT_EQ(model.status, 404);
  EXPECT_EQ(model.param, "model");
}

TEST(ResponsesRequestTest, MutatedBodiesNeverCrash) {
  const std::string body = R"({"input": [{"role": "user", "content": [{"type": "input_text",
      "text": "hi"}]}, {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"},
      {"type": "function_call_output", "call_id": "c", "output": "x"}], "instructions": "s",
      "tools": [{"type": "function", "name": "f", "parameters": {"type": "object"}}],
      "tool_choice": "auto", "text": {"format": {"type": "json_object"}}, "max_output_tokens": 9})";
  Ok(Json::parse(body));
  std::mt19937_64 rng(7);
  for (int i = 0; i < 3000; ++i) {
    auto r = ParseResponsesRequest(testutil::MutatedJson(body, rng), Limits());
    if (auto* e = std::get_if<ApiError>(&r)) EXPECT_GE(e->status, 400);
  }
}

}  // namespace
}  // namespace brisk::server
