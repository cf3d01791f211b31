// Errors name the construct and the line; runaway templates hit limits instead of exhausting
// the process; nothing throws.
#include <gtest/gtest.h>

#include <string>

#include "jinja_test_util.h"

namespace brisk::jinja {
namespace {

using testing::Error;
using testing::Json;

::testing::AssertionResult Contains(const std::string& haystack, const std::string& needle) {
  if (haystack.find(needle) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "'" << haystack << "' does not contain '" << needle << "'";
}

TEST(JinjaErrors, UnknownFilterNamesFilterAndLine) {
  EXPECT_EQ(Error("line 1\nline 2\n{{ x | foo }}"), "unsupported filter 'foo' at line 3");
  EXPECT_EQ(Error("{% for m in msgs if m|bar %}{% endfor %}"),
            "unsupported filter 'bar' at line 1");
}

TEST(JinjaErrors, UnknownTestTagAndMethod) {
  EXPECT_EQ(Error("\n{{ x is frobnicated }}"), "unsupported test 'frobnicated' at line 2");
  EXPECT_EQ(Error("{% include 'other.jinja' %}"), "unsupported tag 'include' at line 1");
  EXPECT_EQ(Error("{% extends 'base' %}"), "unsupported tag 'extends' at line 1");
  EXPECT_EQ(Error("{% do x %}"), "unsupported tag 'do' at line 1");
  EXPECT_EQ(Error("{% for x in l recursive %}{% endfor %}"),
            "unsupported recursive for loop at line 1");
  EXPECT_EQ(Error("\n\n{{ 'abc'.zfill(5) }}"), "unsupported method 'zfill' of str at line 3");
  EXPECT_EQ(Error("{{ [1].append(2) }}"), "unsupported method 'append' of list at line 1");
  EXPECT_EQ(Error("{{ f(*args) }}"), "unsupported *args/**kwargs in call at line 1");
}

TEST(JinjaErrors, RaiseExceptionCarriesTheMessage) {
  const char* tmpl =
      "{% for m in messages %}"
      "{% if (m.role == 'user') != (loop.index0 % 2 == 0) %}"
      "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}"
      "{% endif %}{{ m.content }}"
      "{% endfor %}";
  const Json ok = {{"messages", Json::parse(R"([{"role":"user","content":"a"},
                                                {"role":"assistant","content":"b"}])")}};
  EXPECT_EQ(testing::Render(tmpl, ok), "ab");
  const Json bad = {{"messages", Json::parse(R"([{"role":"assistant","content":"a"}])")}};
  EXPECT_EQ(Error(tmpl, bad),
            "Conversation roles must alternate user/assistant/user/assistant/...");
  EXPECT_EQ(Error("{{ raise_exception('x' ~ 1) }}"), "x1");
}

TEST(JinjaErrors, MalformedTemplates) {
  EXPECT_EQ(Error("a\n{% for x in l %}\nno end"),
            "unclosed 'for' block: expected 'endfor' before the end of the template at line 2");
  EXPECT_EQ(Error("{% if x %}{% else %}"),
            "unclosed 'if' block: expected 'endif' before the end of the template at line 1");
  EXPECT_EQ(Error("{% endfor %}"), "unexpected 'endfor' at line 1");
  EXPECT_EQ(Error("{% if x %}{% endfor %}"), "unexpected 'endfor' at line 1");
  EXPECT_EQ(Error("x\n{{ 1 + "), "unclosed '{{' at line 2");
  EXPECT_EQ(Error("{% if x"), "unclosed '{%' at line 1");
  EXPECT_EQ(Error("{{ 'abc }}"), "unterminated string literal at line 1");
  EXPECT_EQ(Error("{# never closed"), "unclosed comment at line 1");
  EXPECT_EQ(Error("{{ 1 + }}"), "expected an expression but found '}}' at line 1");
  EXPECT_EQ(Error("{{ }}"), "expected an expression but found '}}' at line 1");
  EXPECT_EQ(Error("{{ (1 2) }}"), "expected ')' but found '2' at line 1");
  EXPECT_EQ(Error("{{ (1 }}"), "unexpected '}' at line 1");
  EXPECT_EQ(Error("{{ [1, 2 }}"), "unexpected '}' at line 1");
  EXPECT_EQ(Error("{% for x of l %}{% endfor %}"), "expected 'in' but found 'of' at line 1");
  EXPECT_EQ(Error("{% set = 1 %}"), "expected a variable name but found '=' at line 1");
  EXPECT_EQ(Error("{% break %}"), "'break' outside of a for loop at line 1");
  EXPECT_EQ(Error("{% for x in l %}{% macro m() %}{% continue %}{% endmacro %}{% endfor %}"),
            "'continue' outside of a for loop at line 1");
  EXPECT_EQ(Error("{{ 1 ? 2 }}"), "unexpected character '?' at line 1");
  EXPECT_EQ(Error("{{ 99999999999999999999 }}"),
            "integer literal too large '99999999999999999999' at line 1");
  EXPECT_EQ(Error("{% raw %}never closed"), "missing endraw for raw block at line 1");
  EXPECT_EQ(Error("{{ x is }}"), "expected a test name but found '}}' at line 1");
  EXPECT_EQ(Error("{{ m(a=1, 2) }}"), "positional argument follows keyword argument at line 1");
}

TEST(JinjaErrors, RuntimeErrorsNameTheLine) {
  const Json ctx = testing::SampleContext();
  EXPECT_EQ(Error("\n{{ nothing.attr }}", ctx), "'nothing' is undefined at line 2");
  EXPECT_EQ(Error("{{ d.missing.attr }}", ctx), "'missing' is undefined at line 1");
  EXPECT_EQ(Error("{{ l[7]['role'] }}", ctx), "item [7] is undefined at line 1");
  EXPECT_EQ(Error("{{ nothing() }}", ctx), "'nothing' is undefined at line 1");
  EXPECT_EQ(Error("{{ nothing + 1 }}", ctx), "'nothing' is undefined at line 1");
  EXPECT_EQ(Error("{{ 'a' + 1 }}", ctx),
            "unsupported operand types for +: 'str' and 'int' at line 1");
  EXPECT_EQ(Error("{{ 1 / 0 }}", ctx), "division by zero at line 1");
  EXPECT_EQ(Error("{{ 1 // 0 }}", ctx), "integer division by zero at line 1");
  EXPECT_EQ(Error("{{ 1 < 'a' }}", ctx),
            "ordering not supported between instances of 'int' and 'str' at line 1");
  EXPECT_EQ(Error("{{ 1 in u }}", ctx), "argument of type 'NoneType' is not iterable at line 1");
  EXPECT_EQ(Error("{{ u|length }}", ctx),
            "filter 'length': object of type 'NoneType' has no len() at line 1");
  EXPECT_EQ(
      Error("{{ nothing|tojson }}", ctx),
      "filter 'tojson': tojson: object of type 'Undefined' is not JSON serializable at line 1");
  EXPECT_EQ(Error("{% for x in 5 %}{% endfor %}", ctx), "'int' object is not iterable at line 1");
  EXPECT_EQ(Error("{% for a, b in [[1, 2, 3]] %}{% endfor %}", ctx),
            "cannot unpack 3 values into 2 variables at line 1");
  EXPECT_EQ(Error("{% set d.x = 1 %}", ctx),
            "cannot assign attribute 'x' of 'd': only namespace() objects support it at line 1");
  EXPECT_EQ(Error("{{ 5() }}", ctx), "'int' object is not callable at line 1");
  EXPECT_EQ(Error("{% macro m(a) %}{% endmacro %}{{ m(1, 2) }}", ctx),
            "macro 'm' takes 1 arguments but 2 were given at line 1");
  EXPECT_EQ(Error("{% macro m(a) %}{% endmacro %}{{ m(b=2) }}", ctx),
            "macro 'm' has no parameter 'b' at line 1");
  EXPECT_EQ(Error("{{ l[::0] }}", ctx), "slice step cannot be zero at line 1");
  EXPECT_EQ(Error("{{ {1: 2} }}", ctx), "dict keys must be strings at line 1");
  EXPECT_EQ(Error("{{ 9223372036854775807 + 1 }}", ctx), "integer overflow at line 1");
  EXPECT_EQ(Error("{{ '%d' % 'x' }}", ctx),
            "%d format: a real number is required, not str at line 1");
  EXPECT_EQ(Error("{{ l|sort(bogus=1) }}", ctx),
            "filter 'sort': sort got an unexpected keyword argument 'bogus' at line 1");
}

TEST(JinjaErrors, InfiniteMacroRecursionHitsTheDepthLimit) {
  const std::string msg = Error("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}\n{{ f(0) }}");
  EXPECT_EQ(msg, "maximum macro recursion depth (64) exceeded at line 1");
  RenderLimits limits;
  limits.max_call_depth = 5;
  EXPECT_EQ(Error("{% macro f(n) %}{{ n }}{% if n < 10 %}{{ f(n + 1) }}{% endif %}{% endmacro %}"
                  "{{ f(0) }}",
                  Json::object(), limits),
            "maximum macro recursion depth (5) exceeded at line 1");
  // Within the limit, recursion works.
  EXPECT_EQ(testing::Render("{% macro f(n) %}{{ n }}{% if n < 9 %}{{ f(n + 1) }}{% endif %}"
                            "{% endmacro %}{{ f(0) }}"),
            "0123456789");
}

TEST(JinjaErrors, LoopIterationLimit) {
  RenderLimits limits;
  limits.max_loop_iterations = 1000;
  EXPECT_EQ(Error("{% for i in range(100) %}{% for j in range(100) %}{% endfor %}{% endfor %}",
                  Json::object(), limits),
            "for loops exceed the limit of 1000 iterations at line 1");
  EXPECT_EQ(Error("{{ range(5000)|length }}", Json::object(), limits),
            "range() exceeds the loop iteration limit at line 1");
  EXPECT_EQ(Error("{% for i in range(2000000000) %}{% endfor %}"),
            "range() exceeds the loop iteration limit at line 1");
}

TEST(JinjaErrors, OutputSizeLimit) {
  RenderLimits limits;
  limits.max_output_bytes = 1000;
  EXPECT_EQ(Error("{% for i in range(200) %}0123456789{% endfor %}", Json::object(), limits),
            "template output exceeds the limit of 1000 bytes at line 1");
  EXPECT_EQ(Error("{{ 'x' * 5000 }}", Json::object(), limits),
            "string repetition exceeds the output limit at line 1");
  EXPECT_EQ(Error("{% set s = 'x' * 600 %}{{ s ~ s }}", Json::object(), limits),
            "string concatenation exceeds the output limit at line 1");
  EXPECT_EQ(Error("{{ 'x' * 9223372036854775807 }}"),
            "string repetition exceeds the output limit at line 1");
  EXPECT_EQ(
      Error("{% set s = 'ab' * 1000 %}{{ s|replace('a', 'x' * 5000) }}", Json::object(), limits),
      "string repetition exceeds the output limit at line 1");
}

TEST(JinjaErrors, DeepNestingIsRejectedNotCrashing) {
  const std::string parens = std::string(5000, '(') + "1" + std::string(5000, ')');
  EXPECT_TRUE(Contains(Error("{{ " + parens + " }}"), "nested too deeply"));
  std::string chain = "{{ 1";
  for (int i = 0; i < 5000; ++i) chain += " + 1";
  EXPECT_TRUE(Contains(Error(chain + " }}"), "expression nested too deeply"));
  std::string nots = "{{ ";
  for (int i = 0; i < 5000; ++i) nots += "not ";
  EXPECT_TRUE(Contains(Error(nots + "x }}"), "nested too deeply"));
  std::string filters = "{{ x";
  for (int i = 0; i < 5000; ++i) filters += "|trim";
  EXPECT_TRUE(Contains(Error(filters + " }}"), "expression nested too deeply"));
  std::string blocks;
  for (int i = 0; i < 1000; ++i) blocks += "{% if true %}";
  EXPECT_TRUE(Contains(Error(blocks), "blocks nested too deeply"));
  std::string lists = std::string(3000, '[') + std::string(3000, ']');
  EXPECT_TRUE(Contains(Error("{{ " + lists + " }}"), "nested too deeply"));
}

TEST(JinjaErrors, DeeplyNestedValuesAreRejected) {
  Json deep = Json::array();
  for (int i = 0; i < 2000; ++i) {
    Json outer = Json::array();
    outer.push_back(std::move(deep));
    deep = std::move(outer);
  }
  EXPECT_EQ(Error("{{ x|length }}", Json{{"x", deep}}),
            "variable 'x': input JSON nested too deeply");
  // Growing a value through a namespace in a loop stops at the nesting limit.
  EXPECT_EQ(Error("{% set ns = namespace(x=[]) %}{% for i in range(5000) %}"
                  "{% set ns.x = [ns.x] %}{% endfor %}{{ ns.x|length }}"),
            "value nested too deeply (limit 512) at line 1");
  // A namespace that contains itself renders and is freed (LeakSanitizer checks the latter).
  EXPECT_EQ(testing::Render("{% set ns = namespace() %}{% set ns.self = ns %}"
                            "{{ ns.self.self is defined }}"),
            "True");
}

TEST(JinjaErrors, ContextMustBeAnObject) {
  auto t = ChatTemplate::Parse("x");
  ASSERT_TRUE(t.ok());
  auto r = t->Render(Json::array({1}));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.message(), "chat template context must be a JSON object");
  EXPECT_TRUE(t->Render(Json()).ok());  // null: no variables
}

}  // namespace
}  // namespace brisk::jinja
