// Loading from tokenizer.json and GGUF metadata: errors for malformed or unsupported input,
// and a GGUF written from the committed subset encodes exactly like the JSON it came from.
#include <gtest/gtest.h>

#include "formats/gguf.h"
#include "formats/gguf_writer.h"
#include "tokenizer_test_util.h"

namespace brisk {
namespace {

using json = nlohmann::json;

// A minimal valid tokenizer.json: byte tokens a..c, one merge, one special token.
json MinimalJson() {
  return json::parse(R"({
    "version": "1.0",
    "added_tokens": [{"id": 5, "content": "<|x|>", "special": true, "normalized": false}],
    "normalizer": {"type": "NFC"},
    "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
      {"type": "Split", "pattern": {"Regex": "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"},
       "behavior": "Isolated", "invert": false},
      {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": false, "use_regex": false}]},
    "decoder": {"type": "ByteLevel"},
    "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "c": 2, "ab": 3}, "merges": ["a b"]}
  })");
}

Result<Tokenizer> FromJson(const json& j, const std::string& config = "") {
  return Tokenizer::FromHfJsonText(j.dump(), config, "test.json");
}

TEST(HfJsonLoader, MinimalWorks) {
  Result<Tokenizer> t = FromJson(MinimalJson());
  ASSERT_TRUE(t.ok()) << t.message();
  EXPECT_EQ(t->n_vocab(), 6);
  EXPECT_EQ(t->type(4), TokenType::kUnused);  // the gap in the ids
  EXPECT_EQ(t->Encode("abc<|x|>"), (std::vector<int32_t>{3, 2, 5}));
  json pairs = MinimalJson();
  pairs["model"]["merges"] = json::parse(R"([["a", "b"]])");
  Result<Tokenizer> t2 = FromJson(pairs);
  ASSERT_TRUE(t2.ok()) << t2.message();
  EXPECT_EQ(t2->Encode("ab"), (std::vector<int32_t>{3}));
}

TEST(HfJsonLoader, ConfigGivesSpecialIds) {
  Result<Tokenizer> t = FromJson(
      MinimalJson(), R"({"eos_token": {"content": "<|x|>"}, "bos_token": null, "pad_token": "c",
                         "add_bos_token": true})");
  ASSERT_TRUE(t.ok()) << t.message();
  EXPECT_EQ(t->eos_id(), 5);
  EXPECT_EQ(t->bos_id(), -1);
  EXPECT_EQ(t->pad_id(), 2);
  EXPECT_TRUE(t->add_bos());
  EXPECT_TRUE(t->IsEog(5));
  EXPECT_FALSE(FromJson(MinimalJson(), "{not json").ok());
}

TEST(HfJsonLoader, RejectsMalformedAndUnsupported) {
  const auto expect_error = [](const json& j, const std::string& what) {
    Result<Tokenizer> t = FromJson(j);
    EXPECT_FALSE(t.ok()) << what;
    if (!t.ok()) {
      EXPECT_NE(t.message().find("test.json"), std::string::npos) << t.message();
    }
  };
  EXPECT_FALSE(Tokenizer::FromHfJsonText("{\"model\": ", "", "x").ok());
  EXPECT_FALSE(Tokenizer::FromHfJsonText("[1, 2]", "", "x").ok());
  EXPECT_FALSE(Tokenizer::FromHfJsonText("", "", "x").ok());
  json j = MinimalJson();
  j.erase("model");
  expect_error(j, "no model");
  j = MinimalJson();
  j["model"]["type"] = "WordPiece";
  expect_error(j, "WordPiece");
  j = MinimalJson();
  j["model"]["vocab"] = json::array();
  expect_error(j, "vocab array");
  j = MinimalJson();
  j["model"]["vocab"]["d"] = -3;
  expect_error(j, "negative id");
  j = MinimalJson();
  j["model"]["vocab"]["d"] = "seven";
  expect_error(j, "string id");
  j = MinimalJson();
  j["model"]["merges"] = json::parse(R"(["ab"])");
  expect_error(j, "merge without space");
  j = MinimalJson();
  j["model"]["merges"] = json::parse(R"([["a"]])");
  expect_error(j, "merge pair of one");
  j = MinimalJson();
  j["model"]["merges"] = 7;
  expect_error(j, "merges not an array");
  j = MinimalJson();
  j["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = "\\w+";
  expect_error(j, "other regex");
  j = MinimalJson();
  j["pre_tokenizer"]["pretokenizers"][0]["behavior"] = 3;  // wrong type: no exception escapes
  expect_error(j, "behavior type");
  j = MinimalJson();
  j["normalizer"] = json::parse(R"({"type": "Lowercase"})");
  expect_error(j, "Lowercase normalizer");
  j = MinimalJson();
  j["added_tokens"][0].erase("content");
  expect_error(j, "added token without content");
  j = MinimalJson();
  j["model"]["byte_fallback"] = true;
  expect_error(j, "byte_fallback");
  EXPECT_FALSE(Tokenizer::FromHfJson("/nonexistent/tokenizer.json").ok());
}

TEST(HfJsonLoader, NullNormalizerSkipsNfc) {
  json j = MinimalJson();
  j["normalizer"] = nullptr;
  Result<Tokenizer> t = FromJson(j);
  ASSERT_TRUE(t.ok()) << t.message();
  EXPECT_FALSE(t->normalizes_nfc());
}

TEST(SpecLoader, RejectsEmptyAndMismatched) {
  tok::VocabSpec spec;
  EXPECT_FALSE(Tokenizer::FromSpec(spec).ok());
  spec.tokens = {"a", "b"};
  spec.types = {TokenType::kNormal};
  EXPECT_FALSE(Tokenizer::FromSpec(spec).ok());
}

// ---- GGUF ------------------------------------------------------------------------------------

// GGUF metadata for the committed subset vocabulary (written from its tokenizer.json).
struct GgufVocab {
  std::vector<std::string> tokens;
  std::vector<int32_t> types;
  std::vector<std::string> merges;
};

GgufVocab SubsetAsGguf() {
  GgufVocab v;
  const json j =
      json::parse(test::ReadAll(test::DataPath("tokenizer/qwen2.5-subset-tokenizer.json")));
  int64_t n = 0;
  for (const auto& [k, id] : j["model"]["vocab"].items())
    n = std::max<int64_t>(n, id.get<int64_t>() + 1);
  for (const json& a : j["added_tokens"]) n = std::max<int64_t>(n, a["id"].get<int64_t>() + 1);
  v.tokens.resize(static_cast<size_t>(n));
  v.types.assign(static_cast<size_t>(n), 5);
  for (int64_t i = 0; i < n; ++i)
    v.tokens[static_cast<size_t>(i)] = "[PAD" + std::to_string(i) + "]";
  for (const auto& [k, id] : j["model"]["vocab"].items()) {
    v.tokens[id.get<size_t>()] = k;
    v.types[id.get<size_t>()] = 1;
  }
  for (const json& a : j["added_tokens"]) {
    v.tokens[a["id"].get<size_t>()] = a["content"].get<std::string>();
    v.types[a["id"].get<size_t>()] = a["special"].get<bool>() ? 3 : 4;
  }
  for (const json& m : j["model"]["merges"]) {
    v.merges.push_back(m.is_string() ? m.get<std::string>()
                                     : m[0].get<std::string>() + " " + m[1].get<std::string>());
  }
  return v;
}

Result<Tokenizer> WriteAndLoad(const gguf::Writer& w) {
  const std::string dir = test::TempDir();
  const std::string path = dir + "/vocab.gguf";
  Status st = w.Write(path);
  if (!st.ok()) return st;
  Result<Tokenizer> t = Tokenizer::FromGgufPath(path);
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return t;
}

gguf::Writer SubsetWriter(const GgufVocab& v) {
  gguf::Writer w;
  w.SetString("general.architecture", "qwen2");
  w.SetString("tokenizer.ggml.model", "gpt2");
  w.SetString("tokenizer.ggml.pre", "qwen2");
  w.SetStringArray("tokenizer.ggml.tokens", v.tokens);
  w.SetI32Array("tokenizer.ggml.token_type", v.types);
  w.SetStringArray("tokenizer.ggml.merges", v.merges);
  w.SetU32("tokenizer.ggml.eos_token_id", 151645);
  w.SetU32("tokenizer.ggml.bos_token_id", 151643);
  w.SetBool("tokenizer.ggml.add_bos_token", false);
  return w;
}

TEST(GgufLoader, SubsetWrittenAsGgufMatchesJson) {
  const Tokenizer* hf = test::SubsetHf();
  if (hf == nullptr) GTEST_SKIP() << "tests/data/tokenizer subset not present";
  const GgufVocab v = SubsetAsGguf();
  Result<Tokenizer> t = WriteAndLoad(SubsetWriter(v));
  ASSERT_TRUE(t.ok()) << t.message();
  EXPECT_EQ(t->eos_id(), 151645);
  EXPECT_EQ(t->bos_id(), 151643);
  EXPECT_EQ(t->pad_id(), -1);
  for (const test::TokCase& c : test::SubsetCases()) {
    ASSERT_EQ(t->Encode(c.text), c.ids) << nlohmann::json(c.text).dump();
  }
}

TEST(GgufLoader, RejectsMissingOrUnsupportedKeys) {
  GgufVocab v;
  v.tokens = {"a", "b", "ab"};
  v.types = {1, 1, 1};
  v.merges = {"a b"};
  {
    gguf::Writer w = SubsetWriter(v);
    ASSERT_TRUE(WriteAndLoad(w).ok());
  }
  auto without = [&](const std::string& skip) {
    gguf::Writer w;
    if (skip != "model") w.SetString("tokenizer.ggml.model", "gpt2");
    if (skip != "pre") w.SetString("tokenizer.ggml.pre", "qwen2");
    if (skip != "tokens") w.SetStringArray("tokenizer.ggml.tokens", v.tokens);
    if (skip != "merges") w.SetStringArray("tokenizer.ggml.merges", v.merges);
    return WriteAndLoad(w);
  };
  for (const char* k : {"model", "pre", "tokens", "merges"}) {
    Result<Tokenizer> t = without(k);
    EXPECT_FALSE(t.ok()) << k;
  }
  {
    gguf::Writer w = SubsetWriter(v);
    w.SetString("tokenizer.ggml.model", "llama");
    Result<Tokenizer> t = WriteAndLoad(w);
    ASSERT_FALSE(t.ok());
    EXPECT_NE(t.message().find("llama"), std::string::npos) << t.message();
  }
  {
    gguf::Writer w = SubsetWriter(v);
    w.SetString("tokenizer.ggml.pre", "llama3");
    Result<Tokenizer> t = WriteAndLoad(w);
    ASSERT_FALSE(t.ok());
    EXPECT_NE(t.message().find("llama3"), std::string::npos) << t.message();
  }
  {
    gguf::Writer w = SubsetWriter(v);
    w.SetI32Array("tokenizer.ggml.token_type", {1, 1});
    EXPECT_FALSE(WriteAndLoad(w).ok());
  }
  {
    gguf::Writer w = SubsetWriter(v);
    w.SetStringArray("tokenizer.ggml.merges", std::vector<std::string>{"ab"});
    EXPECT_FALSE(WriteAndLoad(w).ok());
  }
  {
    gguf::Writer w = SubsetWriter(v);
    w.SetString("tokenizer.ggml.eos_token_id", "two");
    EXPECT_FALSE(WriteAndLoad(w).ok());
  }
  {
    gguf::Writer w = SubsetWriter(v);
    w.SetI32Array("tokenizer.ggml.tokens", {1, 2, 3});
    EXPECT_FALSE(WriteAndLoad(w).ok());
  }
  {  // out-of-range special ids are ignored, not trusted
    gguf::Writer w = SubsetWriter(v);
    w.SetU32("tokenizer.ggml.eos_token_id", 1000000);
    Result<Tokenizer> t = WriteAndLoad(w);
    ASSERT_TRUE(t.ok()) << t.message();
    EXPECT_EQ(t->eos_id(), -1);
  }
}

}  // namespace
}  // namespace brisk
