// The Qwen2.5 / Qwen3 chat templates must render byte-identically to HF transformers'
// apply_chat_template (tests/data/jinja holds a copy of the golden fixtures).
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <sstream>

#include "jinja_test_util.h"
#include "test_paths.h"

namespace brisk::jinja {
namespace {

using testing::Json;

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

// Renders one jsonl case the way HF does: messages, tools, add_generation_prompt, and every
// other input key as an extra template kwarg.
Result<std::string> RenderCase(const ChatTemplate& tmpl, const Json& input) {
  Json extra = Json::object();
  for (const auto& [k, v] : input.items()) {
    if (k != "messages" && k != "tools" && k != "add_generation_prompt") extra[k] = v;
  }
  const Json tools = input.contains("tools") ? input["tools"] : Json();
  return RenderChat(tmpl, input["messages"], tools, input.value("add_generation_prompt", false),
                    extra);
}

void CheckGolden(const std::string& template_file, const std::string& cases_file) {
  const std::string path = Fixture(cases_file);
  if (path.empty()) return;
  auto tmpl = ChatTemplate::Parse(ReadFile(Fixture(template_file)));
  ASSERT_TRUE(tmpl.ok()) << tmpl.message();
  std::ifstream in(path);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    ++n;
    const Json c = Json::parse(line);
    auto out = RenderCase(*tmpl, c["input"]);
    ASSERT_TRUE(out.ok()) << cases_file << " case " << n << ": " << out.message();
    EXPECT_EQ(*out, c["rendered"].get<std::string>()) << cases_file << " case " << n;
  }
  EXPECT_EQ(n, 8) << cases_file;
}

TEST(JinjaGolden, Qwen25ChatTemplate) {
  CheckGolden("qwen2.5-instruct-chat-template.jinja", "chat-qwen2.5.jsonl");
}

TEST(JinjaGolden, Qwen3ChatTemplate) {
  CheckGolden("qwen3-chat-template.jinja", "chat-qwen3.jsonl");
}

TEST(JinjaGolden, Qwen3ThinkingContentIsSplit) {
  auto tmpl = ChatTemplate::Parse(ReadFile(Fixture("qwen3-chat-template.jinja")));
  ASSERT_TRUE(tmpl.ok()) << tmpl.message();
  const Json messages = Json::parse(R"([
    {"role": "user", "content": "q1"},
    {"role": "assistant", "content": "<think>\nr1\n</think>\n\na1"},
    {"role": "user", "content": "q2"},
    {"role": "assistant", "content": "<think>\nr2\n</think>\n\na2"}])");
  auto out = RenderChat(*tmpl, messages, Json(), false, Json());
  ASSERT_TRUE(out.ok()) << out.message();
  // Reasoning is dropped before the last user turn and kept after it (checked with HF).
  EXPECT_EQ(*out,
            "<|im_start|>user\nq1<|im_end|>\n<|im_start|>assistant\na1<|im_end|>\n"
            "<|im_start|>user\nq2<|im_end|>\n"
            "<|im_start|>assistant\n<think>\nr2\n</think>\n\na2<|im_end|>\n");
}

Json TenTurnConversation() {
  Json messages = Json::array();
  messages.push_back({{"role", "system"}, {"content", "You are a helpful assistant."}});
  for (int i = 0; i < 10; ++i) {
    messages.push_back({{"role", "user"},
                        {"content", "Question number " + std::to_string(i) +
                                        ": please explain something moderately long about "
                                        "transformers, attention and KV caches."}});
    messages.push_back({{"role", "assistant"},
                        {"content", "Answer " + std::to_string(i) +
                                        ": attention mixes information across positions; the KV "
                                        "cache stores keys and values of past tokens."}});
  }
  return messages;
}

TEST(JinjaGolden, RenderBenchmark) {
  const std::string source = ReadFile(Fixture("qwen2.5-instruct-chat-template.jinja"));
  const Json messages = TenTurnConversation();
  auto tmpl = ChatTemplate::Parse(source);
  ASSERT_TRUE(tmpl.ok()) << tmpl.message();
  using Clock = std::chrono::steady_clock;
  // Time-boxed so sanitizer builds stay quick; Release runs thousands of renders.
  int iters = 0;
  size_t bytes = 0;
  auto t0 = Clock::now();
  while (iters < 20 || (iters < 5000 && Clock::now() - t0 < std::chrono::milliseconds(300))) {
    auto out = RenderChat(*tmpl, messages, Json(), true, Json());
    ASSERT_TRUE(out.ok());
    bytes += out->size();
    ++iters;
  }
  const double render_us =
      std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / iters;
  int parses = 0;
  t0 = Clock::now();
  while (parses < 5 || (parses < 500 && Clock::now() - t0 < std::chrono::milliseconds(100))) {
    ASSERT_TRUE(ChatTemplate::Parse(source).ok());
    ++parses;
  }
  const double parse_us =
      std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / parses;
  std::printf(
      "[ bench    ] Qwen2.5 template, 10-turn conversation (21 messages, %zu bytes): "
      "render %.1f us (%d runs), parse %.1f us\n",
      bytes / iters, render_us, iters, parse_us);
}

}  // namespace
}  // namespace brisk::jinja
