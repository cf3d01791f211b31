// The public API: ChatTemplate::Parse/Render/RenderVars, RenderChat and HF's conventions.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "jinja_test_util.h"

namespace brisk::jinja {
namespace {

using testing::Json;

TEST(JinjaApi, RenderChatBindsHfVariables) {
  auto t = ChatTemplate::Parse(
      "{{ bos_token }}{% for m in messages %}[{{ m.role }}:{{ m.content }}]{% endfor %}"
      "{% if tools %}tools={{ tools|length }}{% endif %}{{ tools is none }}"
      "{{ documents is none }}"
      "{% if add_generation_prompt %}<gen>{% endif %}"
      "{% if enable_thinking is defined and enable_thinking is false %}<nothink>{% endif %}");
  ASSERT_TRUE(t.ok()) << t.message();
  const Json messages = Json::parse(R"([{"role": "user", "content": "hi"}])");
  auto out = RenderChat(*t, messages, Json(), true, Json::object());
  ASSERT_TRUE(out.ok()) << out.message();
  EXPECT_EQ(*out, "[user:hi]TrueTrue<gen>");

  const Json tools = Json::parse(R"([{"type": "function"}])");
  const Json extra = {{"bos_token", "<s>"}, {"enable_thinking", false}};
  out = RenderChat(*t, messages, tools, false, extra);
  ASSERT_TRUE(out.ok()) << out.message();
  EXPECT_EQ(*out, "<s>[user:hi]tools=1FalseTrue<nothink>");

  // Extra kwargs may override the standard variables.
  out = RenderChat(*t, messages, Json(), false, Json{{"add_generation_prompt", true}});
  ASSERT_TRUE(out.ok()) << out.message();
  EXPECT_EQ(*out, "[user:hi]TrueTrue<gen>");

  EXPECT_FALSE(RenderChat(*t, messages, Json(), false, Json::array()).ok());
}

TEST(JinjaApi, InputKeyOrderIsKept) {
  // Python dicts keep insertion order; tojson and items() must too (no sorting).
  const Json ctx = Json::parse(R"({"tool": {"name": "f", "zeta": 1, "alpha": {"z": 1, "a": 2}}})");
  EXPECT_EQ(testing::Render("{{ tool|tojson }}", ctx),
            R"({"name": "f", "zeta": 1, "alpha": {"z": 1, "a": 2}})");
  EXPECT_EQ(testing::Render("{% for k, v in tool.items() %}{{ k }},{% endfor %}", ctx),
            "name,zeta,alpha,");
  EXPECT_EQ(testing::Render("{{ tool|tojson(sort_keys=true) }}", ctx),
            R"({"alpha": {"a": 2, "z": 1}, "name": "f", "zeta": 1})");
}

TEST(JinjaApi, JsonScalarsBecomePythonValues) {
  const Json ctx = Json::parse(
      R"({"i": 3, "big": 18446744073709551615, "f": 2.0, "t": true, "n": null, "s": "é😀"})");
  EXPECT_EQ(
      testing::Render("{{ i }} {{ big }} {{ f }} {{ t }} {{ n }} {{ s }} {{ s|length }}", ctx),
      "3 1.8446744073709552e+19 2.0 True None é😀 2");
  EXPECT_EQ(testing::Render("{{ [i, f, t, n, s]|tojson }}", ctx), R"([3, 2.0, true, null, "é😀"])");
}

TEST(JinjaApi, UnusedVariablesAreNotConverted) {
  auto t = ChatTemplate::Parse("{{ used }}");
  ASSERT_TRUE(t.ok());
  EXPECT_TRUE(t->UsesVariable("used"));
  EXPECT_FALSE(t->UsesVariable("unused"));
  // A variable the template never mentions is skipped, even if it could not be converted.
  Json deep = Json::array();
  for (int i = 0; i < 1000; ++i) {
    Json outer = Json::array();
    outer.push_back(std::move(deep));
    deep = std::move(outer);
  }
  auto out = t->Render(Json{{"used", 1}, {"unused", deep}});
  ASSERT_TRUE(out.ok()) << out.message();
  EXPECT_EQ(*out, "1");
}

TEST(JinjaApi, RenderVarsAvoidsBuildingAContext) {
  auto t = ChatTemplate::Parse("{{ a }}-{{ b.k }}");
  ASSERT_TRUE(t.ok());
  const Json a = "x";
  const Json b = {{"k", 5}};
  const ChatTemplate::Var vars[] = {{"a", &a}, {"b", &b}};
  auto out = t->RenderVars(vars, 2);
  ASSERT_TRUE(out.ok()) << out.message();
  EXPECT_EQ(*out, "x-5");
}

TEST(JinjaApi, GenerationBlockRendersItsBody) {
  // HF's AssistantTracker extension tag: {% generation %} marks assistant text.
  EXPECT_EQ(testing::Render("a{% generation %}b{{ 1 }}{% endgeneration %}c"), "ab1c");
}

TEST(JinjaApi, StrftimeNowIsAvailable) {
  const std::string year = testing::Render("{{ strftime_now('%Y') }}");
  EXPECT_EQ(year.size(), 4u);
}

TEST(JinjaApi, TemplatesAreReusableCopyableAndThreadSafe) {
  auto t = ChatTemplate::Parse("{% for m in messages %}{{ m }}{% endfor %}");
  ASSERT_TRUE(t.ok());
  const ChatTemplate copy = *t;
  std::vector<std::thread> threads;
  std::vector<std::string> results(4);
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] {
      for (int k = 0; k < 200; ++k) {
        auto out = copy.Render(Json{{"messages", Json::array({i, k})}});
        if (out.ok()) results[i] = *out;
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int i = 0; i < 4; ++i) EXPECT_EQ(results[i], std::to_string(i) + "199");
}

TEST(JinjaApi, NothingThrows) {
  // Malformed input of every kind returns a Status; no exception escapes.
  const char* bad[] = {"{{",
                       "{%",
                       "{#",
                       "{{ 'x",
                       "{% for %}",
                       "{{ a.b.c }}",
                       "{{ 1 + 'a' }}",
                       "{{ x[1:2:0] }}",
                       "{% set x = %}",
                       "{{ ()() }}",
                       "}}",
                       "%}",
                       "{{ a | }}",
                       "\xff\xfe{{ '\xff' }}",
                       "{{ '\\uD800' }}",
                       "{{ '\\x' }}"};
  for (const char* src : bad) {
    SCOPED_TRACE(src);
    EXPECT_NO_THROW({
      auto t = ChatTemplate::Parse(src);
      if (t.ok()) (void)t->Render(Json{{"x", "abc"}, {"a", nullptr}});
    });
  }
}

}  // namespace
}  // namespace brisk::jinja
