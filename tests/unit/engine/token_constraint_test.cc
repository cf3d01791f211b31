// The JSON prefix checker behind response_format json_object: every prefix of a valid object is
// accepted (fed at once or byte by byte), completion is reported exactly at the end, and invalid
// text is refused at the first byte that cannot continue any JSON object.
#include "engine/token_constraint.h"

#include <gtest/gtest.h>

#include <string>

namespace brisk {
namespace {

const char* kValid[] = {
    R"({})",
    R"({"a":1})",
    R"( { "a" : [ 1 , -2.5e+3 , 0 , 0.0 , true , false , null , "x\\n\"\u00e9" ] } )",
    R"({"nested":{"deep":[[],{},[{"k":"v"}]]},"num":-0.5E-2,"s":"ünïcødé 😀"})",
    "{\"k\":\n\t\"v\"\r\n}",
};

TEST(JsonPrefixChecker, AcceptsValidObjectsWholeAndByteByByte) {
  for (const char* doc : kValid) {
    JsonPrefixChecker whole;
    EXPECT_TRUE(whole.Feed(doc)) << doc;
    std::string text(doc);
    while (!text.empty() && text.back() == ' ') text.pop_back();
    JsonPrefixChecker trimmed;
    ASSERT_TRUE(trimmed.Feed(text)) << doc;
    EXPECT_TRUE(trimmed.complete()) << doc;
    JsonPrefixChecker bytes;
    for (size_t i = 0; i < text.size(); ++i) {
      EXPECT_FALSE(bytes.complete()) << doc << " at " << i;
      ASSERT_TRUE(bytes.Feed(text.substr(i, 1))) << doc << " at " << i;
    }
    EXPECT_TRUE(bytes.complete()) << doc;
  }
}

// {text, length of the longest valid prefix}
struct Bad {
  const char* text;
  size_t valid;
};

TEST(JsonPrefixChecker, RefusesAtTheFirstBadByte) {
  const Bad cases[] = {
      {"[1,2]", 0},             // top level must be an object
      {"\"s\"", 0},             //
      {"{a:1}", 1},             // unquoted key
      {"{\"a\" 1}", 5},         // missing colon
      {"{\"a\":01}", 6},        // leading zero
      {"{\"a\":1,}", 7},        // trailing comma
      {"{\"a\":tru}", 8},       // broken literal
      {"{\"a\":\"\x01\"}", 6},  // raw control character in a string
      {"{\"a\":\"\\x\"}", 7},   // bad escape
      {"{\"a\":\"\\u12g4\"}", 10},
      {"{\"a\":1]", 6},   // wrong closing bracket
      {"{\"a\":-}", 6},   // sign without digits
      {"{\"a\":1.}", 7},  // dot without digits
      {"{\"a\":1e}", 7},  // exponent without digits
      {"{}{", 2},         // one object only
      {"{} x", 3},
  };
  for (const Bad& c : cases) {
    const std::string text(c.text);
    JsonPrefixChecker check;
    size_t ok = 0;
    while (ok < text.size() && check.Feed(text.substr(ok, 1))) ++ok;
    EXPECT_EQ(ok, c.valid) << text;
  }
}

TEST(JsonPrefixChecker, BoundsWhitespaceAndDepth) {
  JsonPrefixChecker ws;
  ASSERT_TRUE(ws.Feed("{"));
  EXPECT_TRUE(ws.Feed(std::string(JsonPrefixChecker::kMaxWhitespaceRun, ' ')));
  EXPECT_FALSE(ws.Feed(" "));
  JsonPrefixChecker inside_string;  // whitespace inside strings is content, not padding
  EXPECT_TRUE(inside_string.Feed("{\"" + std::string(100, ' ') + "\":1}"));

  std::string deep = "{\"a\":";
  for (int i = 1; i < JsonPrefixChecker::kMaxDepth; ++i) deep += "[";
  JsonPrefixChecker depth;
  EXPECT_TRUE(depth.Feed(deep));
  EXPECT_FALSE(depth.Feed("["));
}

}  // namespace
}  // namespace brisk
