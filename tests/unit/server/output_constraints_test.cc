// The grammars behind structured outputs and forced tool calls, checked on hand-written texts:
// what each request field lets through and what it refuses, and the errors that name the field.
#include "server/output_constraints.h"

#include <gtest/gtest.h>

#include "server/tool_grammar.h"
#include "structured/matcher.h"

namespace brisk::server {
namespace {

using Json = nlohmann::ordered_json;

std::shared_ptr<const structured::CompiledGrammar> Compiled(const Result<structured::Grammar>& g) {
  EXPECT_TRUE(g.ok()) << g.message();
  auto c = structured::CompileGrammar(*g);
  EXPECT_TRUE(c.ok()) << c.message();
  return *c;
}

StructuredOutput Spec(StructuredOutput::Kind kind, std::string field) {
  StructuredOutput s;
  s.kind = kind;
  s.field = std::move(field);
  return s;
}

TEST(GrammarFor, ChoiceRegexGrammarAndSchema) {
  StructuredOutput choice = Spec(StructuredOutput::Kind::kChoice, "guided_choice");
  choice.choices = {"yes", "no", "ça dépend"};
  const auto c = Compiled(GrammarFor(choice));
  for (const char* s : {"yes", "no", "ça dépend"}) EXPECT_TRUE(structured::Matches(c, s)) << s;
  for (const char* s : {"", "ye", "yesno", "ca dépend"}) EXPECT_FALSE(structured::Matches(c, s));

  StructuredOutput regex = Spec(StructuredOutput::Kind::kRegex, "guided_regex");
  regex.text = "[0-9]{3}-[a-z]+";
  const auto r = Compiled(GrammarFor(regex));
  EXPECT_TRUE(structured::Matches(r, "123-abc"));
  EXPECT_FALSE(structured::Matches(r, "12-abc"));
  EXPECT_FALSE(structured::Matches(r, "x123-abc"));  // anchored: the whole output

  StructuredOutput gbnf = Spec(StructuredOutput::Kind::kGrammar, "grammar");
  gbnf.text = "root ::= \"(\" [1-9] (\"+\" [1-9])* \")\"";
  const auto g = Compiled(GrammarFor(gbnf));
  EXPECT_TRUE(structured::Matches(g, "(1+2+3)"));
  EXPECT_FALSE(structured::Matches(g, "(1+)"));

  StructuredOutput schema = Spec(StructuredOutput::Kind::kJsonSchema, "response_format");
  schema.schema = Json::parse(R"({"type":"object","properties":{"b":{"type":"integer"},
      "a":{"enum":["x","y"]}},"required":["b","a"],"additionalProperties":false})");
  const auto s = Compiled(GrammarFor(schema));
  EXPECT_TRUE(structured::Matches(s, R"({"b":-12,"a":"y"})"));
  EXPECT_FALSE(structured::Matches(s, R"({"a":"y","b":-12})")) << "the schema's order";
  EXPECT_FALSE(structured::Matches(s, R"({"b":1.5,"a":"y"})"));
}

TEST(GrammarFor, WhatCannotBeEnforcedIsRefusedByName) {
  StructuredOutput schema = Spec(StructuredOutput::Kind::kJsonSchema, "response_format");
  schema.schema = Json::parse(R"({"type":"object","properties":{"t":{"type":"array",
      "uniqueItems":true}}})");
  auto g = GrammarFor(schema);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.message().find("'uniqueItems'"), std::string::npos) << g.message();
  EXPECT_NE(g.message().find("/properties/t"), std::string::npos) << g.message();
  StructuredOutput regex = Spec(StructuredOutput::Kind::kRegex, "guided_regex");
  regex.text = "(a)\\1";
  EXPECT_FALSE(GrammarFor(regex).ok());
  StructuredOutput gbnf = Spec(StructuredOutput::Kind::kGrammar, "grammar");
  gbnf.text = "root ::= missing";
  EXPECT_FALSE(GrammarFor(gbnf).ok());
}

const Json kTools = Json::parse(R"([
  {"type":"function","function":{"name":"get_weather","parameters":{"type":"object",
    "properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}}},
  {"type":"function","function":{"name":"get_time","parameters":{"type":"object",
    "properties":{"zone":{"enum":["UTC","CET"]}},"required":["zone"],
    "additionalProperties":false}}}])");

const char* kTimeCall =
    "<tool_call>\n{\"name\": \"get_time\", \"arguments\": {\"zone\":\"UTC\"}}\n</tool_call>";
const char* kWeatherCall =
    "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\":\"Paris\"}}\n</tool_call>";

TEST(ToolCallGrammar, RequiredTakesAnyOfferedFunctionWithValidArguments) {
  ToolGrammarRequest r{&kTools, "required", /*parallel=*/true, /*after_trigger=*/false};
  const auto g = Compiled(ToolCallGrammar(r));
  EXPECT_TRUE(structured::Matches(g, kTimeCall));
  EXPECT_TRUE(structured::Matches(g, kWeatherCall));
  EXPECT_TRUE(structured::Matches(g, std::string(kTimeCall) + "\n" + kWeatherCall));
  EXPECT_TRUE(structured::Matches(g,
                                  "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": "
                                  "{\"city\": \"Paris\"}}\n</tool_call>"))
      << "arguments as json.dumps spaces them";
  EXPECT_FALSE(structured::Matches(g, ""));
  EXPECT_FALSE(structured::Matches(g, "Sure! " + std::string(kTimeCall)));
  EXPECT_FALSE(structured::Matches(
      g, "<tool_call>\n{\"name\": \"get_time\", \"arguments\": {\"zone\":\"PST\"}}\n</tool_call>"));
  EXPECT_FALSE(structured::Matches(
      g, "<tool_call>\n{\"name\": \"other\", \"arguments\": {}}\n</tool_call>"));
}

TEST(ToolCallGrammar, NamedChoiceAndOneCallAtMost) {
  ToolGrammarRequest r{&kTools, "get_time", /*parallel=*/false, /*after_trigger=*/false};
  const auto g = Compiled(ToolCallGrammar(r));
  EXPECT_TRUE(structured::Matches(g, kTimeCall));
  EXPECT_FALSE(structured::Matches(g, kWeatherCall));
  EXPECT_FALSE(structured::Matches(g, std::string(kTimeCall) + "\n" + kTimeCall));
  ToolGrammarRequest unknown{&kTools, "nope", true, false};
  auto bad = ToolCallGrammar(unknown);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.field(), "tool_choice");
}

TEST(ToolCallGrammar, AfterTheTriggerTheCallBodyComesFirst) {
  ToolGrammarRequest r{&kTools, "auto", true, /*after_trigger=*/true};
  const auto g = Compiled(ToolCallGrammar(r));
  const std::string body = std::string(kTimeCall).substr(std::string("<tool_call>").size());
  EXPECT_TRUE(structured::Matches(g, body));
  EXPECT_FALSE(structured::Matches(g, kTimeCall));
}

TEST(ToolCallGrammar, ParametersThatCannotBeEnforcedNameTheTool) {
  const Json tools = Json::parse(R"([{"type":"function","function":{"name":"f","parameters":
      {"type":"object","properties":{"x":{"not":{}}}}}}])");
  ToolGrammarRequest r{&tools, "required", true, false};
  auto g = ToolCallGrammar(r);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.field(), "tools[0].function.parameters");
  EXPECT_NE(g.message().find("'not'"), std::string::npos) << g.message();
}

}  // namespace
}  // namespace brisk::server
