// The streaming tool-call parser: the same content and calls however the output is split, text
// before/after/between calls, broken calls, held-back partial tags.
#include "server/tool_calls.h"

#include <gtest/gtest.h>

#include <cctype>
#include <set>
#include <string>
#include <vector>

namespace brisk::server {
namespace {

struct Parsed {
  std::string content;
  std::vector<ToolCall> calls;
};

// Feeds `pieces` in order, then finishes.
Parsed RunPieces(const std::vector<std::string>& pieces, uint64_t seed = 7) {
  ToolCallParser p(seed);
  Parsed out;
  for (const std::string& piece : pieces) out.content += p.Feed(piece, &out.calls);
  out.content += p.Finish(&out.calls);
  return out;
}

Parsed RunWhole(const std::string& text) { return RunPieces({text}); }

void ExpectCall(const ToolCall& c, const std::string& name, const std::string& arguments) {
  EXPECT_EQ(c.name, name);
  EXPECT_EQ(c.arguments, arguments);
}

const std::string kSample =
    "Let me check.\n"
    "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": 2}}\n"
    "</tool_call>\n"
    "<tool_call>\n{\"name\": \"calc\", \"arguments\": {\"expr\": \"1<2\"}}\n</tool_call>";

void ExpectSample(const Parsed& p) {
  EXPECT_EQ(p.content, "Let me check.\n");
  ASSERT_EQ(p.calls.size(), 2u);
  ExpectCall(p.calls[0], "get_weather", R"({"city":"Paris","days":2})");
  ExpectCall(p.calls[1], "calc", R"({"expr":"1<2"})");
}

TEST(ToolCallParserTest, TwoCallsAfterText) { ExpectSample(RunWhole(kSample)); }

TEST(ToolCallParserTest, SameResultForEveryTwoPieceSplit) {
  const Parsed whole = RunWhole(kSample);
  for (size_t i = 0; i <= kSample.size(); ++i) {
    SCOPED_TRACE(i);
    const Parsed p = RunPieces({kSample.substr(0, i), kSample.substr(i)});
    ExpectSample(p);
    ASSERT_EQ(p.calls.size(), whole.calls.size());
    for (size_t k = 0; k < p.calls.size(); ++k) EXPECT_EQ(p.calls[k].id, whole.calls[k].id);
  }
}

TEST(ToolCallParserTest, SameResultForEveryThreePieceSplit) {
  for (size_t i = 0; i <= kSample.size(); ++i) {
    for (size_t j = i; j <= kSample.size(); j += 3) {
      const Parsed p =
          RunPieces({kSample.substr(0, i), kSample.substr(i, j - i), kSample.substr(j)});
      ASSERT_EQ(p.content, "Let me check.\n") << i << " " << j;
      ASSERT_EQ(p.calls.size(), 2u) << i << " " << j;
      ASSERT_EQ(p.calls[1].arguments, R"({"expr":"1<2"})") << i << " " << j;
    }
  }
}

TEST(ToolCallParserTest, ByteByByte) {
  std::vector<std::string> bytes;
  for (const char c : kSample) bytes.emplace_back(1, c);
  ExpectSample(RunPieces(bytes));
}

TEST(ToolCallParserTest, ContentIsReleasedAtOnceAndPartialTagsHeld) {
  ToolCallParser p(1);
  std::vector<ToolCall> calls;
  EXPECT_EQ(p.Feed("Hello", &calls), "Hello");
  EXPECT_EQ(p.Feed(" wor", &calls), " wor");
  EXPECT_EQ(p.Feed("ld <tool", &calls), "ld ");    // "<tool" may become the tag
  EXPECT_EQ(p.Feed("box>", &calls), "<toolbox>");  // it did not
  EXPECT_EQ(p.Feed("a <", &calls), "a ");
  EXPECT_EQ(p.Feed(" b", &calls), "< b");
  EXPECT_EQ(p.Feed("<tool_c", &calls), "");
  EXPECT_EQ(p.Finish(&calls), "<tool_c");  // the end: held text is content
  EXPECT_TRUE(calls.empty());
}

TEST(ToolCallParserTest, CallsAreEmittedAsSoonAsTheyClose) {
  ToolCallParser p(1);
  std::vector<ToolCall> calls;
  EXPECT_EQ(p.Feed("<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_", &calls), "");
  EXPECT_TRUE(calls.empty());
  EXPECT_EQ(p.Feed("call>", &calls), "");
  ASSERT_EQ(calls.size(), 1u);
  ExpectCall(calls[0], "f", "{}");
  EXPECT_EQ(p.calls_emitted(), 1);
  EXPECT_EQ(p.Feed("\n", &calls), "");  // whitespace after a call is held...
  EXPECT_EQ(p.Finish(&calls), "");      // ...and dropped at the end
}

TEST(ToolCallParserTest, TextAfterTheCallsIsContent) {
  const Parsed p =
      RunWhole("<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": 1}}\n</tool_call>\nDone.");
  EXPECT_EQ(p.content, "\nDone.");
  ASSERT_EQ(p.calls.size(), 1u);
  ExpectCall(p.calls[0], "f", R"({"a":1})");
}

TEST(ToolCallParserTest, WhitespaceAroundCallsIsDropped) {
  const std::string text =
      "\n\n<tool_call>{\"name\": \"a\"}</tool_call>\n \n<tool_call>{\"name\": \"b\"}</tool_call>"
      "\n\n";
  for (size_t i = 0; i <= text.size(); ++i) {
    const Parsed p = RunPieces({text.substr(0, i), text.substr(i)});
    EXPECT_EQ(p.content, "") << i;
    ASSERT_EQ(p.calls.size(), 2u) << i;
    ExpectCall(p.calls[0], "a", "{}");  // no arguments: an empty object
    ExpectCall(p.calls[1], "b", "{}");
  }
  // Without any call, whitespace is content like any other text.
  EXPECT_EQ(RunWhole("\n\n").content, "\n\n");
  EXPECT_EQ(RunWhole("\n\nHi").content, "\n\nHi");
}

TEST(ToolCallParserTest, BrokenCallsStayContent) {
  const std::string broken =
      "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": }\n</tool_call>";
  const std::string good = "<tool_call>\n{\"name\": \"g\", \"arguments\": {}}\n</tool_call>";
  const std::string text = "Hi " + broken + good + " bye";
  for (size_t i = 0; i <= text.size(); ++i) {
    const Parsed p = RunPieces({text.substr(0, i), text.substr(i)});
    EXPECT_EQ(p.content, "Hi " + broken + " bye") << i;
    ASSERT_EQ(p.calls.size(), 1u) << i;
    ExpectCall(p.calls[0], "g", "{}");
  }
  // Each way a call can be invalid.
  for (const std::string body : {"not json", "[1, 2]", "{\"arguments\": {}}", "{\"name\": \"\"}",
                                 "{\"name\": 5}", "{\"name\": \"f\"} trailing", ""}) {
    SCOPED_TRACE(body);
    const std::string call = "<tool_call>" + body + "</tool_call>";
    const Parsed p = RunWhole(call);
    EXPECT_EQ(p.content, call);
    EXPECT_TRUE(p.calls.empty());
  }
}

TEST(ToolCallParserTest, UnclosedCallIsContentAtTheEnd) {
  const std::string text = "Sure.<tool_call>\n{\"name\": \"f\", \"argu";
  for (size_t i = 0; i <= text.size(); ++i) {
    const Parsed p = RunPieces({text.substr(0, i), text.substr(i)});
    EXPECT_EQ(p.content, text) << i;
    EXPECT_TRUE(p.calls.empty());
  }
}

TEST(ToolCallParserTest, ArgumentForms) {
  // A JSON string holding the object: the object is passed on.
  ExpectCall(RunWhole(R"(<tool_call>{"name": "f", "arguments": "{\"x\": [1, 2]}"}</tool_call>)")
                 .calls.at(0),
             "f", R"({"x":[1,2]})");
  // A plain string stays a JSON string.
  ExpectCall(RunWhole(R"(<tool_call>{"name": "f", "arguments": "abc"}</tool_call>)").calls.at(0),
             "f", R"("abc")");
  // "parameters" is accepted for "arguments".
  ExpectCall(
      RunWhole(R"(<tool_call>{"name": "f", "parameters": {"q": true}}</tool_call>)").calls.at(0),
      "f", R"({"q":true})");
  // Non-ASCII text is kept as UTF-8, not \u-escaped.
  ExpectCall(RunWhole("<tool_call>{\"name\": \"w\", \"arguments\": {\"city\": \"北京\"}}"
                      "</tool_call>")
                 .calls.at(0),
             "w", "{\"city\":\"北京\"}");
}

TEST(ToolCallParserTest, DeepNestingIsRefusedNotRecursed) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  const std::string call = "<tool_call>{\"name\": \"f\", \"arguments\": " + deep + "}</tool_call>";
  const Parsed p = RunWhole(call);
  EXPECT_TRUE(p.calls.empty());
  EXPECT_EQ(p.content, call);
}

TEST(ToolCallParserTest, IdsAreDeterministicPerSeedAndDistinct) {
  const std::string text =
      "<tool_call>{\"name\": \"a\"}</tool_call><tool_call>{\"name\": \"b\"}"
      "</tool_call>";
  const Parsed a = RunPieces({text}, 123), b = RunPieces({text}, 123), c = RunPieces({text}, 124);
  ASSERT_EQ(a.calls.size(), 2u);
  for (const ToolCall& call : a.calls) {
    ASSERT_EQ(call.id.size(), 5u + 24u) << call.id;
    EXPECT_EQ(call.id.substr(0, 5), "call_");
    for (const char ch : call.id.substr(5))
      EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(ch)));
  }
  EXPECT_NE(a.calls[0].id, a.calls[1].id);
  EXPECT_EQ(a.calls[0].id, b.calls[0].id);
  EXPECT_EQ(a.calls[1].id, b.calls[1].id);
  EXPECT_NE(a.calls[0].id, c.calls[0].id);
}

TEST(ToolCallParserTest, RandomAlnumUsesTheWholeAlphabet) {
  std::mt19937_64 rng(5);
  const std::string s = RandomAlnum(20000, rng);
  EXPECT_EQ(s.size(), 20000u);
  std::set<char> seen(s.begin(), s.end());
  EXPECT_EQ(seen.size(), 62u);
  for (const char c : seen) EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(c)));
}

}  // namespace
}  // namespace brisk::server
