// Chat requests rendered with the real Qwen2.5 / Qwen3 templates: the golden conversations (HF
// transformers' output), sent the way an OpenAI client sends them, must render byte for byte as
// HF renders them; tools and tool calls must reach the template.
#include "server/chat_prompt.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <variant>

#include "test_paths.h"

namespace brisk::server {
namespace {

using Json = nlohmann::ordered_json;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Fixture(const std::string& name) {
  const std::string path = test::FindGoldenOrData("tokenizer/" + name, "jinja/" + name);
  EXPECT_FALSE(path.empty()) << "missing fixture " << name;
  return path;
}

jinja::ChatTemplate Template(const std::string& name) {
  auto t = jinja::ChatTemplate::Parse(ReadFile(Fixture(name)));
  EXPECT_TRUE(t.ok()) << t.message();
  return std::move(t).value();
}

RequestLimits Limits() {
  RequestLimits l;
  l.max_model_len = 32768;
  l.n_vocab = 151936;
  l.model_id = "qwen";
  return l;
}

OpenAiRequest Parse(const Json& body) {
  auto r = ParseChatRequest(body.dump(), Limits());
  if (auto* e = std::get_if<ApiError>(&r)) {
    ADD_FAILURE() << e->message << " for " << body.dump();
    return {};
  }
  return std::get<OpenAiRequest>(r);
}

std::string Render(const jinja::ChatTemplate& t, const Json& body) {
  auto text = RenderChatPrompt(t, Parse(body));
  EXPECT_TRUE(text.ok()) << text.message();
  return text.ok() ? *text : std::string();
}

// A golden case's input as an OpenAI client sends it: tool-call arguments as JSON strings,
// assistant content null next to tool calls, template extras in chat_template_kwargs.
Json OpenAiBody(const Json& input) {
  Json body = {{"messages", input["messages"]}};
  for (Json& m : body["messages"]) {
    if (!m.contains("tool_calls")) continue;
    if (m["content"] == "") m["content"] = nullptr;
    for (Json& c : m["tool_calls"]) {
      c["function"]["arguments"] = c["function"]["arguments"].dump();
    }
  }
  if (input.contains("tools")) body["tools"] = input["tools"];
  Json kwargs = Json::object();
  for (const auto& [k, v] : input.items()) {
    if (k != "messages" && k != "tools" && k != "add_generation_prompt") kwargs[k] = v;
  }
  if (!kwargs.empty()) body["chat_template_kwargs"] = kwargs;
  body["add_generation_prompt"] = input.value("add_generation_prompt", false);
  return body;
}

TEST(ChatPromptTest, GoldenConversationsRenderAsHfDoes) {
  for (const char* name : {"qwen2.5", "qwen3"}) {
    const jinja::ChatTemplate t =
        Template(std::string(name) == "qwen3" ? "qwen3-chat-template.jinja"
                                              : "qwen2.5-instruct-chat-template.jinja");
    std::ifstream in(Fixture(std::string("chat-") + name + ".jsonl"));
    std::string line;
    int n = 0, with_tools = 0, without_generation_prompt = 0;
    while (std::getline(in, line)) {
      if (line.empty()) continue;
      const Json c = Json::parse(line);
      SCOPED_TRACE(std::string(name) + " case " + line.substr(0, 120));
      EXPECT_EQ(Render(t, OpenAiBody(c["input"])), c["rendered"].get<std::string>());
      ++n;
      with_tools += c["input"].contains("tools");
      without_generation_prompt += !c["input"].value("add_generation_prompt", false);
    }
    EXPECT_GE(n, 7) << name;
    EXPECT_GE(with_tools, 2) << name;
    EXPECT_GE(without_generation_prompt, 1) << name;
  }
}

const char* kWeatherTool = R"({"type": "function", "function": {"name": "get_weather",
    "description": "Weather of a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}})";
const char* kTimeTool = R"({"type": "function", "function": {"name": "now"}})";

Json ToolRequest(const char* tool_choice) {
  Json body = Json::parse(std::string(R"({"messages": [
      {"role": "user", "content": "Weather in Paris?"},
      {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function",
          "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
      {"role": "tool", "tool_call_id": "call_1", "content": "sunny"}],
      "tools": [)") + kWeatherTool +
                          ", " + kTimeTool + "]}");
  if (tool_choice) body["tool_choice"] = Json::parse(tool_choice);
  return body;
}

TEST(ChatPromptTest, ToolsBlockAndToolCall) {
  const jinja::ChatTemplate t = Template("qwen2.5-instruct-chat-template.jinja");
  const std::string text = Render(t, ToolRequest(nullptr));
  const std::string tools_block =
      "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant."
      "\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
      "You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n"
      "{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"description\": "
      "\"Weather of a city\", \"parameters\": {\"type\": \"object\", \"properties\": {\"city\": "
      "{\"type\": \"string\"}}}}}\n"
      "{\"type\": \"function\", \"function\": {\"name\": \"now\"}}\n</tools>";
  EXPECT_EQ(text.rfind(tools_block, 0), 0u) << text;
  // The assistant's call: arguments rendered as an object, not as a quoted string.
  const std::string call =
      "<|im_start|>assistant\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": "
      "{\"city\": \"Paris\"}}\n</tool_call><|im_end|>\n";
  EXPECT_NE(text.find(call), std::string::npos) << text;
  const std::string tail =
      "<|im_start|>user\n<tool_response>\nsunny\n</tool_response><|im_end|>\n"
      "<|im_start|>assistant\n";
  ASSERT_GE(text.size(), tail.size());
  EXPECT_EQ(text.substr(text.size() - tail.size()), tail) << text;
}

TEST(ChatPromptTest, ToolChoiceShapesTheToolsBlock) {
  const jinja::ChatTemplate t = Template("qwen2.5-instruct-chat-template.jinja");
  // "none": the model is not told about tools at all.
  const std::string none = Render(t, ToolRequest(R"("none")"));
  EXPECT_EQ(none.find("<tools>"), std::string::npos) << none;
  EXPECT_EQ(none.find("# Tools"), std::string::npos);
  EXPECT_EQ(none.rfind("<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a "
                       "helpful assistant.<|im_end|>\n",
                       0),
            0u);
  // A named function: only that one is offered.
  const std::string named =
      Render(t, ToolRequest(R"({"type": "function", "function": {"name": "now"}})"));
  EXPECT_NE(named.find("<tools>\n{\"type\": \"function\", \"function\": {\"name\": \"now\"}}\n"
                       "</tools>"),
            std::string::npos)
      << named;
  EXPECT_EQ(named.find("\"description\": \"Weather of a city\""), std::string::npos);
  // "required" offers them all.
  EXPECT_NE(Render(t, ToolRequest(R"("required")"))
                .find("\"name\": \"get_weather\", "
                      "\"description\""),
            std::string::npos);
}

TEST(ChatPromptTest, ArgumentsThatAreNotAnObjectStayAString) {
  const jinja::ChatTemplate t = Template("qwen2.5-instruct-chat-template.jinja");
  const Json body = Json::parse(R"({"messages": [{"role": "user", "content": "x"},
      {"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": "oops"}}]}]})");
  EXPECT_NE(Render(t, body).find(R"({"name": "f", "arguments": "oops"})"), std::string::npos);
}

TEST(ChatPromptTest, ContentPartsAndDeveloperRole) {
  const jinja::ChatTemplate t = Template("qwen2.5-instruct-chat-template.jinja");
  const Json body = Json::parse(R"({"messages": [
      {"role": "developer", "content": [{"type": "text", "text": "Be terse."}]},
      {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}]})");
  EXPECT_EQ(Render(t, body),
            "<|im_start|>system\nBe terse.<|im_end|>\n<|im_start|>user\na\nb<|im_end|>\n"
            "<|im_start|>assistant\n");
}

TEST(ChatPromptTest, TemplateKwargsReachTheTemplate) {
  const jinja::ChatTemplate t = Template("qwen3-chat-template.jinja");
  Json body = Json::parse(R"({"messages": [{"role": "user", "content": "hi"}]})");
  EXPECT_EQ(Render(t, body), "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n");
  body["chat_template_kwargs"] = {{"enable_thinking", false}};
  EXPECT_EQ(Render(t, body),
            "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n");
}

// vLLM's continue_final_message (prefill): the prompt ends inside the assistant's message, right
// after its text, as HF's apply_chat_template leaves it.
TEST(ChatPromptTest, ContinueFinalMessageLeavesItOpen) {
  Json body = Json::parse(R"({"messages": [{"role": "user", "content": "hi"},
      {"role": "assistant", "content": "Hello, I am"}], "continue_final_message": true})");
  const char* qwen25 =
      "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful "
      "assistant.<|im_end|>\n";
  const jinja::ChatTemplate t25 = Template("qwen2.5-instruct-chat-template.jinja");
  EXPECT_EQ(
      Render(t25, body),
      std::string(qwen25) + "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\nHello, I am");
  // Qwen3 writes an empty thinking block before a final answer: the text continues after it.
  const jinja::ChatTemplate t3 = Template("qwen3-chat-template.jinja");
  EXPECT_EQ(Render(t3, body),
            "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"
            "Hello, I am");
  // Trailing spaces stay when the template kept them (HF's rule).
  body["messages"][1]["content"] = "Hello, I am ";
  EXPECT_TRUE(Render(t25, body).ends_with("assistant\nHello, I am ")) << Render(t25, body);
  // Without the generation prompt the conversation ends closed, with no assistant header.
  body.erase("continue_final_message");
  body["add_generation_prompt"] = false;
  EXPECT_TRUE(Render(t3, body).ends_with("</think>\n\nHello, I am <|im_end|>\n"))
      << Render(t3, body);
  body["messages"].erase(1);
  EXPECT_EQ(Render(t3, body), "<|im_start|>user\nhi<|im_end|>\n");
}

TEST(ChatPromptTest, ContinuingATextTheTemplateDropsIsAnError) {
  auto t = jinja::ChatTemplate::Parse("{% for m in messages %}[{{ m.role }}]{% endfor %}");
  ASSERT_TRUE(t.ok()) << t.message();
  auto text = RenderChatPrompt(*t, Parse(Json::parse(R"({"messages": [
      {"role": "user", "content": "hi"}, {"role": "assistant", "content": "Sure"}],
      "continue_final_message": true})")));
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.field(), "continue_final_message");
}

TEST(ChatPromptTest, TemplateErrorsComeBack) {
  auto t = jinja::ChatTemplate::Parse("{{ raise_exception('no system role here') }}");
  ASSERT_TRUE(t.ok()) << t.message();
  auto text = RenderChatPrompt(*t, Parse(Json::parse(R"({"messages": [
      {"role": "user", "content": "hi"}]})")));
  ASSERT_FALSE(text.ok());
  EXPECT_NE(text.message().find("no system role here"), std::string::npos) << text.message();
}

}  // namespace
}  // namespace brisk::server
