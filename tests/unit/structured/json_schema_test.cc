// The JSON Schema compiler against instances checked independently: the corpus in
// tests/data/structured/schemas (every valid / invalid example verified with ajv + ajv-formats
// before it was committed) must be accepted / rejected by the compiled grammar; refused schemas
// must name their keyword and pointer; ranges, optional members, lengths and keys are checked
// against brute-force references; hostile schemas must fail fast.
#include "structured/json_schema.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "structured/matcher.h"
#include "test_paths.h"

namespace brisk::structured {
namespace {

using Json = nlohmann::ordered_json;
namespace fs = std::filesystem;

std::shared_ptr<const CompiledGrammar> MustCompile(const Json& schema,
                                                   const JsonSchemaOptions& o = {}) {
  Result<Grammar> g = CompileJsonSchema(schema, o);
  EXPECT_TRUE(g.ok()) << schema.dump() << ": " << (g.ok() ? "" : g.message());
  if (!g.ok()) return nullptr;
  auto c = CompileGrammar(*g);
  EXPECT_TRUE(c.ok()) << (c.ok() ? "" : c.message());
  return c.ok() ? *c : nullptr;
}

struct Case {
  std::string file;
  Json doc;
};

std::vector<Case> LoadDir(const std::string& name) {
  std::vector<Case> out;
  const fs::path dir = test::DataPath(name);
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".json") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const fs::path& p : files) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    out.push_back({p.filename().string(), Json::parse(ss.str())});
  }
  return out;
}

// ---------------------------------------------------------------- corpus

void CheckCorpus(bool any_whitespace) {
  const std::vector<Case> cases = LoadDir("structured/schemas");
  ASSERT_GE(cases.size(), 200u);
  size_t valid = 0, invalid = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.file);
    JsonSchemaOptions o;
    o.strict = c.doc.value("strict", false);
    o.any_whitespace = any_whitespace;
    auto g = MustCompile(c.doc.at("schema"), o);
    if (!g) continue;
    ASSERT_FALSE(c.doc.at("valid").empty());
    for (const Json& v : c.doc.at("valid")) {
      EXPECT_TRUE(Matches(g, v.dump())) << "valid instance rejected: " << v.dump();
      ++valid;
    }
    for (const Json& v : c.doc.value("invalid", Json::array())) {
      EXPECT_FALSE(Matches(g, v.dump())) << "invalid instance accepted: " << v.dump();
      ++invalid;
    }
  }
  EXPECT_GE(valid, 400u);
  EXPECT_GE(invalid, 400u);
}

TEST(JsonSchemaCorpus, EveryValidInstanceMatchesAndNoInvalidOne) { CheckCorpus(false); }

TEST(JsonSchemaCorpus, WhitespaceModeKeepsTheSameLanguageOnCompactText) { CheckCorpus(true); }

TEST(JsonSchemaCorpus, RefusedSchemasNameTheirKeywordAndPointer) {
  const std::vector<Case> cases = LoadDir("structured/schemas-refused");
  ASSERT_GE(cases.size(), 20u);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.file);
    JsonSchemaOptions o;
    o.strict = c.doc.value("strict", false);
    Result<Grammar> g = CompileJsonSchema(c.doc.at("schema"), o);
    ASSERT_FALSE(g.ok());
    EXPECT_EQ(g.code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(g.field(), "response_format");
    const std::string keyword = c.doc.at("keyword"), pointer = c.doc.at("pointer");
    EXPECT_NE(g.message().find("'" + keyword + "'"), std::string::npos) << g.message();
    const std::string where = pointer.empty() ? "the schema root" : "at " + pointer;
    EXPECT_NE(g.message().find(where), std::string::npos) << g.message();
  }
}

// ---------------------------------------------------------------- objects

// Every subset of the properties, in order: accepted exactly when the required ones are in it.
TEST(JsonSchemaObjects, OptionalPropertiesAnySubsetInOrder) {
  const char* names[] = {"a", "b", "c", "d", "e"};
  for (int required_mask : {0, 1, 2, 4, 16, 10, 31}) {
    Json schema = {{"type", "object"},
                   {"properties", Json::object()},
                   {"required", Json::array()},
                   {"additionalProperties", false}};
    for (int i = 0; i < 5; ++i) {
      schema["properties"][names[i]] = {{"type", "integer"}};
      if (required_mask & (1 << i)) schema["required"].push_back(names[i]);
    }
    auto g = MustCompile(schema);
    ASSERT_TRUE(g);
    for (int subset = 0; subset < 32; ++subset) {
      Json v = Json::object();
      for (int i = 0; i < 5; ++i)
        if (subset & (1 << i)) v[names[i]] = i;
      const bool valid = (subset & required_mask) == required_mask;
      EXPECT_EQ(Matches(g, v.dump()), valid) << schema.dump() << " " << v.dump();
    }
    for (const char* bad : {"{,\"a\":0}", "{\"a\":0,}", "{\"a\":0,,\"b\":1}", "{\"b\":1,\"a\":0}",
                            "{\"a\":0\"b\":1}", "{\"a\":0,\"a\":0}"})
      EXPECT_FALSE(Matches(g, bad)) << bad;
  }
}

// Undeclared keys come after the declared ones and never spell a declared name, in any spelling.
TEST(JsonSchemaObjects, AdditionalKeysExcludeDeclaredNames) {
  const Json schema = Json::parse(
      R"({"type":"object","properties":{"a":{"type":"integer"},"ab":{"type":"integer"},
          "q\"k":{"type":"integer"}},"additionalProperties":{"type":"string"}})");
  auto g = MustCompile(schema);
  ASSERT_TRUE(g);
  for (const char* ok : {R"({"a":1,"ab":2,"abc":"x"})", R"({"b":"x","":"y"})",
                         R"({"a":1,"q\"":"x","q\\k":"y","a\"":"z"})", R"({"ab":1,"abab":"x"})",
                         R"({"q\"k":3,"é":"x"})"})
    EXPECT_TRUE(Matches(g, ok)) << ok;
  for (const char* bad :
       {R"({"ab":2,"a":"x"})", R"({"\u0061":"x"})", R"({"q\"k":"x"})", R"({"a\u0062":"x"})",
        R"({"abc":"x","a":1})", R"({"zz":1})", R"({"q\u0022k":"x"})"})
    EXPECT_FALSE(Matches(g, bad)) << bad;
}

TEST(JsonSchemaObjects, StrictModeClosesObjectsWithoutAdditionalProperties) {
  const Json schema = {
      {"type", "object"}, {"properties", {{"a", {{"type", "integer"}}}}}, {"required", {"a"}}};
  JsonSchemaOptions strict;
  strict.strict = true;
  auto open = MustCompile(schema), closed = MustCompile(schema, strict);
  ASSERT_TRUE(open && closed);
  EXPECT_TRUE(Matches(open, R"({"a":1,"b":2})"));
  EXPECT_FALSE(Matches(closed, R"({"a":1,"b":2})"));
  EXPECT_TRUE(Matches(closed, R"({"a":1})"));
}

// ---------------------------------------------------------------- numbers

// Integer ranges against a brute-force membership test around every bound.
TEST(JsonSchemaNumbers, IntegerRangesAreExact) {
  std::mt19937_64 rng(7);
  struct R {
    int64_t lo, hi;
    bool has_lo, has_hi, ex_lo, ex_hi;
  };
  std::vector<R> ranges = {{0, 150, 1, 1, 0, 0},
                           {-100, -10, 1, 1, 0, 0},
                           {-5, 5, 1, 1, 1, 1},
                           {1, 65535, 1, 1, 0, 0},
                           {37, 4821, 1, 1, 0, 0},
                           {0, 0, 1, 0, 0, 0},
                           {0, -1, 0, 1, 0, 0},
                           {99, 1000, 1, 1, 1, 0},
                           {-1000, 999, 1, 1, 0, 1},
                           {123456789, 0, 1, 0, 0, 0},
                           {-999999999999999, 999999999999999, 1, 1, 0, 0}};
  for (int i = 0; i < 40; ++i) {
    const int64_t a = int64_t(rng() % 200001) - 100000, w = int64_t(rng() % 5000);
    ranges.push_back({a, a + w, rng() % 4 != 0, rng() % 4 != 0, bool(rng() & 1), bool(rng() & 1)});
  }
  for (const R& r : ranges) {
    Json schema = {{"type", "integer"}};
    if (r.has_lo) schema[r.ex_lo ? "exclusiveMinimum" : "minimum"] = r.lo;
    if (r.has_hi) schema[r.ex_hi ? "exclusiveMaximum" : "maximum"] = r.hi;
    const int64_t lo = !r.has_lo ? -999999999999999 : r.ex_lo ? r.lo + 1 : r.lo;
    const int64_t hi = !r.has_hi ? 999999999999999 : r.ex_hi ? r.hi - 1 : r.hi;
    if (lo > hi) continue;
    auto g = MustCompile(schema);
    ASSERT_TRUE(g) << schema.dump();
    std::vector<int64_t> probes;
    for (int64_t base : {lo, hi, int64_t(0), r.lo, r.hi})
      for (int64_t d = -60; d <= 60; ++d) probes.push_back(base + d);
    for (int k = 0; k < 200; ++k) probes.push_back(lo + int64_t(rng() % uint64_t(hi - lo + 1)));
    for (int64_t x : {int64_t(9), int64_t(10), int64_t(99), int64_t(100), int64_t(-10)})
      probes.push_back(x);
    for (int64_t x : probes) {
      if (x < -999999999999999 || x > 999999999999999) continue;
      EXPECT_EQ(Matches(g, std::to_string(x)), x >= lo && x <= hi) << schema.dump() << " " << x;
    }
    for (const char* bad : {"01", "+1", "1.0", "1e2", "", "--1"})
      EXPECT_FALSE(Matches(g, bad)) << schema.dump() << " " << bad;
  }
}

// A decimal string as an exact integer count of 10^-6 (the tests keep to 6 fraction digits).
int64_t Micros(const std::string& s) {
  const bool neg = s[0] == '-';
  const size_t dot = s.find('.');
  const std::string ip = s.substr(neg, dot == std::string::npos ? std::string::npos : dot - neg);
  std::string fp = dot == std::string::npos ? "" : s.substr(dot + 1);
  fp.resize(6, '0');
  const int64_t v = std::stoll(ip) * 1000000 + std::stoll(fp);
  return neg ? -v : v;
}

// Number ranges: every candidate decimal (up to 4 fraction digits) near the bounds is accepted
// exactly when it is in range, and what is accepted is in range as a double too.
TEST(JsonSchemaNumbers, NumberRangesAreExactOnDecimals) {
  struct R {
    const char *lo, *hi;
    bool ex_lo, ex_hi;
  };
  const R ranges[] = {
      {"0.25", "2.75", 0, 0},     {"-1.5", "-0.25", 0, 1},  {"0", "1", 1, 1},
      {"-273.15", nullptr, 0, 0}, {nullptr, "100", 0, 1},   {"3.14", "3.14", 0, 0},
      {"-0.5", "0.5", 1, 0},      {"0.001", "0.002", 0, 0}, {"-2", "2", 0, 0},
      {"9.99", "10.01", 1, 1},    {"0", nullptr, 1, 0},     {nullptr, "-7.5", 0, 0}};
  std::mt19937 rng(11);
  for (const R& r : ranges) {
    Json schema = {{"type", "number"}};
    if (r.lo) schema[r.ex_lo ? "exclusiveMinimum" : "minimum"] = Json::parse(r.lo);
    if (r.hi) schema[r.ex_hi ? "exclusiveMaximum" : "maximum"] = Json::parse(r.hi);
    auto g = MustCompile(schema);
    ASSERT_TRUE(g) << schema.dump();
    std::vector<std::string> probes;
    for (const char* b : {r.lo, r.hi, "0"}) {
      if (!b) continue;
      const int64_t center = Micros(b);
      for (int k = 0; k < 400; ++k) {
        const int64_t step = (k % 4 == 0) ? 1 : (k % 4 == 1) ? 100 : (k % 4 == 2) ? 1000 : 10000;
        const int64_t v = center + (int64_t(rng() % 41) - 20) * step;
        const int64_t mag = v < 0 ? -v : v;
        std::string frac = std::to_string(mag % 1000000);
        frac = std::string(6 - frac.size(), '0') + frac;
        const int keep = int(rng() % 5);  // 0..4 fraction digits, or the 6 when needed
        std::string text = (v < 0 ? "-" : "") + std::to_string(mag / 1000000);
        std::string f = frac.substr(0, size_t(keep));
        if (Micros(text + (f.empty() ? "" : "." + f)) != v) f = frac.substr(0, 4);
        if (Micros(text + (f.empty() ? "" : "." + f)) != v) continue;
        probes.push_back(text + (f.empty() ? "" : "." + f));
      }
    }
    for (const std::string& p : probes) {
      const int64_t v = Micros(p);
      bool in = true;
      if (r.lo) in = in && (r.ex_lo ? v > Micros(r.lo) : v >= Micros(r.lo));
      if (r.hi) in = in && (r.ex_hi ? v < Micros(r.hi) : v <= Micros(r.hi));
      const bool negative_zero = p[0] == '-' && v == 0;  // "-0.0": a spelling we never emit
      if (negative_zero) continue;
      EXPECT_EQ(Matches(g, p), in) << schema.dump() << " " << p;
      if (Matches(g, p)) {  // the validator's view: doubles
        const double x = std::strtod(p.c_str(), nullptr);
        if (r.lo) {
          EXPECT_TRUE(r.ex_lo ? x > std::stod(r.lo) : x >= std::stod(r.lo)) << p;
        }
        if (r.hi) {
          EXPECT_TRUE(r.ex_hi ? x < std::stod(r.hi) : x <= std::stod(r.hi)) << p;
        }
      }
    }
  }
}

// Near a large exclusive bound, more than 15 significant digits would round onto the bound as a
// double; the grammar stops at 15.
TEST(JsonSchemaNumbers, BoundedNumbersKeepFifteenSignificantDigits) {
  auto g = MustCompile({{"type", "number"}, {"exclusiveMinimum", 100000000000000}});
  ASSERT_TRUE(g);
  EXPECT_TRUE(Matches(g, "100000000000001"));
  EXPECT_TRUE(Matches(g, "999999999999999"));
  EXPECT_FALSE(Matches(g, "100000000000000.5"));
  EXPECT_FALSE(Matches(g, "100000000000000"));
  EXPECT_FALSE(Matches(g, "1e15"));
  auto unit = MustCompile({{"type", "number"}, {"exclusiveMinimum", 0}, {"exclusiveMaximum", 1}});
  ASSERT_TRUE(unit);
  EXPECT_TRUE(Matches(unit, "0.000000000000001"));
  EXPECT_TRUE(Matches(unit, "0.999999999999999"));
  EXPECT_FALSE(Matches(unit, "0.9999999999999999"));
  EXPECT_FALSE(Matches(unit, "0.0000000000000001"));
}

TEST(JsonSchemaNumbers, FreeNumbersFollowJsonAndStayFinite) {
  auto g = MustCompile({{"type", "number"}});
  ASSERT_TRUE(g);
  for (const char* ok : {"0", "-0", "0.5", "-12.25", "1e5", "1E+5", "2.5e-10", "123456789012345",
                         "0.123456789012345", "999999999999999.999999999999999e99"})
    EXPECT_TRUE(Matches(g, ok)) << ok;
  for (const char* bad : {"01", "1.", ".5", "+1", "--1", "1e", "1e+", "1e999", "1234567890123456",
                          "0.1234567890123456", "NaN", "Infinity", "1 ", " 1", "0x10"})
    EXPECT_FALSE(Matches(g, bad)) << bad;
}

// ---------------------------------------------------------------- strings

// A string body of n characters mixing raw ASCII, 2- and 4-byte UTF-8, short escapes, \u
// escapes and escaped surrogate pairs: each counts as one character.
std::string MixedString(int n) {
  static const char* pieces[] = {
      "a", "\xc3\xa9", "\xf0\x9f\x98\x80", "\\n", "\\u00e9", "\\ud83d\\ude00", "\\\"", "\\/", "Z"};
  std::string s = "\"";
  for (int i = 0; i < n; ++i) s += pieces[(i * 7 + n) % 9];
  return s + "\"";
}

TEST(JsonSchemaStrings, LengthsCountCodePointsAndEscapesAsOne) {
  const std::pair<int, int> bounds[] = {{0, 0}, {3, 5}, {64, 64}, {65, 130}, {1, 200}, {150, -1}};
  for (auto [min, max] : bounds) {
    Json schema = {{"type", "string"}, {"minLength", min}};
    if (max >= 0) schema["maxLength"] = max;
    auto g = MustCompile(schema);
    ASSERT_TRUE(g);
    for (int n :
         {0, 1, 2, 3, 4, 5, 6, 63, 64, 65, 66, 129, 130, 131, 149, 150, 151, 199, 200, 201, 400}) {
      const bool in = n >= min && (max < 0 || n <= max);
      EXPECT_EQ(Matches(g, MixedString(n)), in) << schema.dump() << " n=" << n;
    }
  }
}

TEST(JsonSchemaStrings, FreeStringsTakeEveryJsonEscapeAndNoRawControl) {
  auto g = MustCompile({{"type", "string"}});
  ASSERT_TRUE(g);
  for (const char* ok : {R"("")", R"("\"\\\/\b\f\n\r\t")", R"("\u0000\uFFFF\uabcd")",
                         R"("\ud83d\ude00")", "\"\xf0\x9f\x98\x80\"", "\"\x7f\""})
    EXPECT_TRUE(Matches(g, ok)) << ok;
  for (const char* bad : {"\"\n\"", "\"\x01\"", R"("\x41")", R"("\u12")", R"("\ud83d")",
                          R"("\ude00")", R"("\ud83dx")", R"("\")", "\"abc", "abc\"", "'a'"})
    EXPECT_FALSE(Matches(g, bad)) << bad;
}

TEST(JsonSchemaStrings, DatesKnowMonthLengthsAndLeapYears) {
  auto g = MustCompile({{"type", "string"}, {"format", "date"}});
  ASSERT_TRUE(g);
  auto leap = [](int y) { return y % 4 == 0 && (y % 100 != 0 || y % 400 == 0); };
  const int days[] = {0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  for (int y : {1900, 1996, 2000, 2023, 2024, 2100, 2400, 0, 4, 100, 9999}) {
    for (int m = 0; m <= 13; ++m) {
      for (int d = 0; d <= 32; ++d) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "\"%04d-%02d-%02d\"", y, m, d);
        const bool ok = m >= 1 && m <= 12 && d >= 1 && d <= (m == 2 && leap(y) ? 29 : days[m]);
        EXPECT_EQ(Matches(g, buf), ok) << buf;
      }
    }
  }
}

// ---------------------------------------------------------------- whitespace and embedding

TEST(JsonSchemaWhitespace, BoundedWhitespaceOnlyWhenAsked) {
  const Json schema = Json::parse(R"({"type":"object","properties":{"a":{"type":"array",
      "items":{"type":"integer"}},"b":{"type":"object","properties":{"c":{"type":"null"}}}}})");
  const Json value = Json::parse(R"({"a":[1,2,3],"b":{"c":null},"x":{"y":[]}})");
  JsonSchemaOptions ws;
  ws.any_whitespace = true;
  auto compact = MustCompile(schema), loose = MustCompile(schema, ws);
  ASSERT_TRUE(compact && loose);
  EXPECT_TRUE(Matches(compact, value.dump()));
  EXPECT_FALSE(Matches(compact, value.dump(2)));
  EXPECT_TRUE(Matches(loose, value.dump()));
  EXPECT_TRUE(Matches(loose, value.dump(2)));
  EXPECT_TRUE(Matches(loose, value.dump(4)));
  EXPECT_TRUE(Matches(loose, R"({ "a" : [ 1 , 2 ] , "b" : { } })"));
  EXPECT_TRUE(Matches(loose, "{\n\t\"a\": []\n}"));
  EXPECT_FALSE(Matches(loose, R"({  "a":[]})"));  // two spaces: not one space nor a line break
  EXPECT_FALSE(Matches(loose, "{\n" + std::string(21, ' ') + "\"a\":[]}"));
  EXPECT_FALSE(Matches(loose, " {}"));
}

TEST(JsonSchemaEmbedding, AddJsonSchemaComposesIntoALargerGrammar) {
  GrammarBuilder b;
  const Json args = Json::parse(
      R"({"type":"object","properties":{"city":{"type":"string"}},"required":["city"],
          "additionalProperties":false})");
  Result<int32_t> r = AddJsonSchema(b, args, "weather", {});
  ASSERT_TRUE(r.ok()) << r.message();
  const int32_t any = AddAnyJsonValue(b);
  Sequence root = GrammarBuilder::Literal("<call>");
  root.push_back(Symbol::Ref(*r));
  const Sequence close = GrammarBuilder::Literal("</call>");
  root.insert(root.end(), close.begin(), close.end());
  Sequence other = GrammarBuilder::Literal("json:");
  other.push_back(Symbol::Ref(any));
  const int32_t top = b.AddRule("top", {root, other});
  Result<Grammar> g = std::move(b).Build(top);
  ASSERT_TRUE(g.ok()) << g.message();
  auto c = CompileGrammar(*g);
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(Matches(*c, R"(<call>{"city":"Oslo"}</call>)"));
  EXPECT_FALSE(Matches(*c, R"(<call>{"town":"Oslo"}</call>)"));
  EXPECT_TRUE(Matches(*c, R"(json:[1,{"a":null},"x",-2.5e3,true])"));
  EXPECT_FALSE(Matches(*c, R"(json:[1,])"));
}

// A nlohmann::json (keys sorted) converts implicitly; its properties come in sorted order.
TEST(JsonSchemaEmbedding, PlainJsonSchemasConvertWithSortedProperties) {
  const nlohmann::json schema = nlohmann::json::parse(
      R"({"type":"object","properties":{"b":{"type":"integer"},"a":{"type":"integer"}},
          "required":["a","b"],"additionalProperties":false})");
  Result<Grammar> g = CompileJsonSchema(schema);
  ASSERT_TRUE(g.ok()) << g.message();
  auto c = CompileGrammar(*g);
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(Matches(*c, R"({"a":1,"b":2})"));
  EXPECT_FALSE(Matches(*c, R"({"b":2,"a":1})"));
}

TEST(JsonSchemaAnyValue, MatchesJsonAndNothingElse) {
  GrammarBuilder b;
  const int32_t v = AddAnyJsonValue(b);
  Result<Grammar> g = std::move(b).Build(v);
  ASSERT_TRUE(g.ok());
  auto c = CompileGrammar(*g);
  ASSERT_TRUE(c.ok());
  for (const char* ok : {"null", "true", "0", "\"s\"", "[]", "{}", R"({"a":[{"b":{}}],"":1})",
                         "[[[[[]]]]]", R"(["\u00e9",-0.5e-3])"})
    EXPECT_TRUE(Matches(*c, ok)) << ok;
  for (const char* bad :
       {"", "nul", "[1,]", "{\"a\"}", "{\"a\":1,}", "{a:1}", "[1 2]", "'x'", "[]]", "{} {}"})
    EXPECT_FALSE(Matches(*c, bad)) << bad;
}

TEST(JsonSchemaRecursion, DeepInstancesOfRecursiveSchemas) {
  const Json schema = Json::parse(
      R"({"$defs":{"n":{"type":"object","properties":{"v":{"type":"integer"},
          "next":{"anyOf":[{"$ref":"#/$defs/n"},{"type":"null"}]}},"required":["v","next"],
          "additionalProperties":false}},"$ref":"#/$defs/n"})");
  auto g = MustCompile(schema);
  ASSERT_TRUE(g);
  std::string text = "null";
  for (int i = 0; i < 300; ++i) text = "{\"v\":" + std::to_string(i) + ",\"next\":" + text + "}";
  EXPECT_TRUE(Matches(g, text));
  EXPECT_FALSE(Matches(g, text.substr(0, text.size() - 1)));
}

// ---------------------------------------------------------------- errors and hostile input

Result<Grammar> CompileText(const std::string& text, JsonSchemaOptions o = {}) {
  return CompileJsonSchema(Json::parse(text), o);
}

TEST(JsonSchemaErrors, BadSchemasAreInvalidArgumentsNamingTheField) {
  const char* bad[] = {
      "5",
      "\"string\"",
      "null",
      "[]",
      "false",
      R"({"type":5})",
      R"({"type":"text"})",
      R"({"type":[]})",
      R"({"properties":[]})",
      R"({"required":"a"})",
      R"({"required":[1]})",
      R"({"minLength":-1})",
      R"({"maxLength":"x"})",
      R"({"minItems":1.5})",
      R"({"minimum":"0"})",
      R"({"$ref":5})",
      R"({"$ref":"#/nope"})",
      R"({"$ref":"#/$defs/x/0"})",
      R"({"allOf":[]})",
      R"({"anyOf":{}})",
      R"({"enum":"x"})",
      R"({"enum":[]})",
      R"({"items":5})",
      R"({"prefixItems":{}})",
      R"({"additionalProperties":5})",
      R"({"nullable":true})",
      R"({"type":"integer","minimum":5,"maximum":4})",
      R"({"type":"integer","minimum":1.2,"maximum":1.8})",
      R"({"type":"number","exclusiveMinimum":1,"maximum":1})",
      R"({"minItems":3,"maxItems":2})",
      R"({"minLength":3,"maxLength":2})",
      R"({"type":"string","enum":[1,2]})",
      R"({"type":"object","required":["a"],"additionalProperties":false})",
      R"({"type":"object","properties":{"a":false},"required":["a"]})",
      R"({"anyOf":[false,false]})",
      R"({"allOf":[{"type":"string"},{"type":"integer"}]})",
      R"({"type":"integer","minimum":1e20})",
      R"({"format":5})",
      R"({"uniqueItems":"no"})",
      R"({"type":"array","prefixItems":[{"type":"integer"}],"items":false,"minItems":2})"};
  for (const char* text : bad) {
    Result<Grammar> g = CompileText(text);
    ASSERT_FALSE(g.ok()) << text;
    EXPECT_EQ(g.code(), StatusCode::kInvalidArgument) << text;
    EXPECT_EQ(g.field(), "response_format") << text;
    EXPECT_FALSE(g.message().empty());
  }
  JsonSchemaOptions tools;
  tools.field = "tools[0].function.parameters";
  EXPECT_EQ(CompileText(R"({"not":{}})", tools).field(), "tools[0].function.parameters");
}

// Seconds spent on `f`, for "fails fast" checks.
template <typename F>
double Seconds(F&& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

TEST(JsonSchemaHostile, DeepNestingFailsFast) {
  for (const std::string& open :
       {std::string(R"({"type":"array","items":)"), std::string(R"({"anyOf":[)"),
        std::string(R"({"allOf":[)"), std::string(R"({"properties":{"a":)")}) {
    const std::string close =
        open.find('[') != std::string::npos && open.find("items") == std::string::npos ? "]}"
        : open.find("properties") != std::string::npos                                 ? "}}"
                                                                                       : "}";
    std::string text;
    for (int i = 0; i < 10000; ++i) text += open;
    text += "{}";
    for (int i = 0; i < 10000; ++i) text += close;
    const Json schema = Json::parse(text);
    const double s = Seconds([&] {
      Result<Grammar> g = CompileJsonSchema(schema);
      EXPECT_FALSE(g.ok());
      EXPECT_EQ(g.code(), StatusCode::kInvalidArgument);
    });
    EXPECT_LT(s, 2.0) << open;
  }
  // 100 schema levels are fine; 200 (a shallow enough document) are refused by the schema
  // nesting bound itself, as is a chain of 200 $refs.
  for (int levels : {100, 200}) {
    std::string text;
    for (int i = 0; i < levels; ++i) text += R"({"type":"array","items":)";
    text += "{}" + std::string(size_t(levels), '}');
    Result<Grammar> g = CompileText(text);
    EXPECT_EQ(g.ok(), levels == 100);
    if (!g.ok()) {
      EXPECT_NE(g.message().find("nests deeper than 128"), std::string::npos);
    }
  }
  Json chain = {{"$defs", Json::object()}, {"$ref", "#/$defs/d0"}};
  for (int i = 0; i < 200; ++i)
    chain["$defs"]["d" + std::to_string(i)] = {{"$ref", "#/$defs/d" + std::to_string(i + 1)}};
  chain["$defs"]["d200"] = {{"type", "null"}};
  EXPECT_FALSE(CompileJsonSchema(chain).ok());
}

TEST(JsonSchemaHostile, RefCyclesWithoutStructureAreRefused) {
  for (const char* text :
       {R"({"$ref":"#"})",
        R"({"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"})",
        R"({"anyOf":[{"$ref":"#"},{"type":"null"}]})", R"({"allOf":[{"$ref":"#"}]})",
        R"({"$defs":{"a":{"allOf":[{"$ref":"#/$defs/a"}],"type":"string"}},"$ref":"#/$defs/a"})",
        R"({"type":"array","items":{"$ref":"#/items"}})", R"({"$ref":"#","type":"object"})"}) {
    const double s = Seconds([&] {
      Result<Grammar> g = CompileText(text);
      ASSERT_FALSE(g.ok()) << text;
      EXPECT_EQ(g.code(), StatusCode::kInvalidArgument) << text;
    });
    EXPECT_LT(s, 2.0) << text;
  }
}

TEST(JsonSchemaHostile, HugeEnumsAndCountsStayBounded) {
  Json big = {{"enum", Json::array()}};
  for (int i = 0; i < 300000; ++i) big["enum"].push_back("value-number-" + std::to_string(i));
  double s = Seconds([&] { EXPECT_FALSE(CompileJsonSchema(big).ok()); });
  EXPECT_LT(s, 10.0);  // generous: sanitizer builds run several times slower
  Json many = {{"enum", Json::array()}};
  for (int i = 0; i < 20000; ++i) many["enum"].push_back("v" + std::to_string(i * 7919));
  auto g = MustCompile(many);
  ASSERT_TRUE(g);
  EXPECT_TRUE(Matches(g, "\"v7919\""));
  EXPECT_FALSE(Matches(g, "\"v7918\""));
  // Counts far beyond any output are still exact and small to compile.
  auto huge = MustCompile({{"type", "string"}, {"minLength", 1000000000}});
  ASSERT_TRUE(huge);
  EXPECT_FALSE(Matches(huge, "\"abc\""));
  auto items = MustCompile(
      {{"type", "array"}, {"maxItems", int64_t(1) << 62}, {"items", {{"type", "null"}}}});
  ASSERT_TRUE(items);
  EXPECT_TRUE(Matches(items, "[null,null]"));
}

// Random damage to the corpus schemas: every outcome is a grammar or an invalid_argument.
TEST(JsonSchemaHostile, MutatedCorpusSchemasNeverCrash) {
  const std::vector<Case> cases = LoadDir("structured/schemas");
  const Json junk[] = {5,
                       -1,
                       1.5,
                       "x",
                       "#",
                       nullptr,
                       true,
                       false,
                       Json::array(),
                       Json::object(),
                       Json::array({1}),
                       Json{{"$ref", "#"}},
                       Json{{"type", "nope"}},
                       1e300};
  std::mt19937 rng(3);
  for (int round = 0; round < 3000; ++round) {
    Json schema = cases[rng() % cases.size()].doc.at("schema");
    // Walk to a random node and replace it (or one of its keys' values).
    Json* node = &schema;
    for (int depth = 0; depth < 6 && node->is_structured() && !node->empty(); ++depth) {
      if (rng() % 3 == 0) break;
      auto it = node->begin();
      std::advance(it, rng() % node->size());
      node = &*it;
    }
    *node = junk[rng() % std::size(junk)];
    Result<Grammar> g = CompileJsonSchema(schema);
    if (!g.ok()) {
      EXPECT_EQ(g.code(), StatusCode::kInvalidArgument) << schema.dump();
      continue;
    }
    EXPECT_TRUE(CompileGrammar(*g).ok());
  }
}

}  // namespace
}  // namespace brisk::structured
