// safetensors reader/writer, the shard index and HF config.json / tokenizer_config.json parsing.
// Malformed inputs are hand-made headers; each must give a Status naming the problem (and, under
// ASan + UBSan, no crash), plus a mutation fuzz over a valid file.
#include "formats/safetensors.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "formats/hf_config.h"
#include "formats/safetensors_writer.h"
#include "test_paths.h"

namespace brisk::safetensors {
namespace {

// A file from a raw header text and `data_bytes` bytes of data (values 0, 1, 2, ...).
std::vector<uint8_t> Raw(const std::string& header, size_t data_bytes, uint64_t claimed_len = 0) {
  std::vector<uint8_t> b(8);
  const uint64_t n = claimed_len ? claimed_len : header.size();
  for (int i = 0; i < 8; ++i) b[i] = uint8_t(n >> (8 * i));
  b.insert(b.end(), header.begin(), header.end());
  for (size_t i = 0; i < data_bytes; ++i) b.push_back(uint8_t(i));
  return b;
}

std::string ParseError(const std::vector<uint8_t>& b) {
  auto f = File::FromBuffer(b.data(), b.size(), "t.safetensors");
  return f.ok() ? std::string("<ok>") : f.message();
}

#define EXPECT_HAS(haystack, needle)                                    \
  do {                                                                  \
    const std::string h_ = (haystack);                                  \
    EXPECT_NE(h_.find(needle), std::string::npos) << "message: " << h_; \
  } while (0)

TEST(Safetensors, WriterRoundTrip) {
  std::vector<float> a = {1.f, -2.f, 3.5f, 0.25f, 8.f, 9.f};
  std::vector<uint16_t> b = {0x3c00, 0x4000, 0xc000};
  Writer w;
  w.SetMetadata("format", "pt");
  w.AddTensor("a.weight", Dtype::kF32, {2, 3}, a.data(), a.size() * 4);
  w.AddTensor("b", Dtype::kBF16, {3}, b.data(), b.size() * 2);
  w.AddTensor("empty", Dtype::kF16, {0, 4}, nullptr, 0);
  auto bytes = w.Serialize();
  ASSERT_TRUE(bytes.ok()) << bytes.message();
  uint64_t n;
  std::memcpy(&n, bytes->data(), 8);
  EXPECT_EQ((8 + n) % 8, 0u) << "header padded to 8 bytes";

  const std::string path = test::TempDir() + "/x.safetensors";
  ASSERT_TRUE(w.Write(path).ok());
  auto f = File::Open(path);
  ASSERT_TRUE(f.ok()) << f.message();
  EXPECT_EQ(f->file_size(), bytes->size());
  EXPECT_EQ(f->data_offset(), 8 + n);
  ASSERT_EQ(f->tensors().size(), 3u);
  const TensorInfo* ta = f->Find("a.weight");
  ASSERT_NE(ta, nullptr);
  EXPECT_EQ(ta->dtype, Dtype::kF32);
  EXPECT_EQ(ta->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(ta->n_elements, 6);
  EXPECT_EQ(ta->nbytes(), 24u);
  EXPECT_EQ(std::memcmp(ta->data, a.data(), 24), 0);
  const TensorInfo* tb = f->Find("b");
  ASSERT_NE(tb, nullptr);
  EXPECT_EQ(tb->dtype, Dtype::kBF16);
  EXPECT_EQ(std::memcmp(tb->data, b.data(), 6), 0);
  EXPECT_EQ(f->Find("empty")->n_elements, 0);
  EXPECT_EQ(f->Find("nope"), nullptr);
  EXPECT_EQ(f->metadata().at("format"), "pt");
  GgmlType g;
  EXPECT_TRUE(DtypeToGgml(Dtype::kBF16, &g));
  EXPECT_EQ(g, GgmlType::kBF16);
  EXPECT_FALSE(DtypeToGgml(Dtype::kI64, &g));
}

TEST(Safetensors, EveryDtypeNameParses) {
  for (const char* name : {"BOOL", "U8", "I8", "F8_E5M2", "F8_E4M3", "I16", "U16", "F16", "BF16",
                           "I32", "U32", "F32", "F64", "I64", "U64"}) {
    Dtype d;
    ASSERT_TRUE(ParseDtype(name, &d)) << name;
    EXPECT_EQ(DtypeName(d), name);
  }
  Dtype d;
  EXPECT_FALSE(ParseDtype("f32", &d));
  EXPECT_EQ(DtypeSize(Dtype::kF64), 8u);
}

TEST(Safetensors, HeaderTooShortOrPastEof) {
  EXPECT_HAS(ParseError({1, 2, 3}), "t.safetensors: file is 3 bytes, too short");
  EXPECT_HAS(ParseError(Raw("{}", 0, 1000)),
             "header length 1000 runs past the end of the file (10 bytes)");
  EXPECT_HAS(ParseError(Raw("{}", 0, ~uint64_t(0))), "runs past the end of the file");
  EXPECT_HAS(ParseError(Raw("", 0)), "header is not a JSON object");
  EXPECT_EQ(ParseError(Raw("{}", 0)), "<ok>");
  EXPECT_EQ(ParseError(Raw("{}      ", 0)), "<ok>");  // space padding is allowed
}

TEST(Safetensors, InvalidJsonHeader) {
  EXPECT_HAS(ParseError(Raw(R"({"a": {"dtype": "F32",)", 0)), "t.safetensors: invalid JSON header");
  EXPECT_HAS(ParseError(Raw("[1, 2]", 0)), "header is not a JSON object");
  EXPECT_HAS(ParseError(Raw("{\"a\": \"\xff\"}", 0)), "invalid JSON header");
  EXPECT_HAS(ParseError(Raw(R"({"a": 5})", 0)), "tensor 'a': entry must be an object");
  EXPECT_HAS(ParseError(Raw("{}garbage", 0)), "invalid JSON header");
}

TEST(Safetensors, UnknownOrMissingDtype) {
  EXPECT_HAS(ParseError(Raw(R"({"w": {"dtype": "Q4", "shape": [2], "data_offsets": [0, 2]}})", 2)),
             "t.safetensors: tensor 'w': unknown dtype 'Q4'");
  EXPECT_HAS(ParseError(Raw(R"({"w": {"dtype": 1, "shape": [2], "data_offsets": [0, 2]}})", 2)),
             "missing or non-string 'dtype'");
  EXPECT_HAS(ParseError(Raw(R"({"w": {"shape": [2], "data_offsets": [0, 2]}})", 2)),
             "missing or non-string 'dtype'");
}

TEST(Safetensors, BadShapes) {
  auto err = [](const std::string& shape, const std::string& offsets = "[0, 8]") {
    return ParseError(Raw(
        R"({"w": {"dtype": "F32", "shape": )" + shape + R"(, "data_offsets": )" + offsets + "}}",
        8));
  };
  EXPECT_EQ(err("[2]"), "<ok>");
  EXPECT_HAS(err("[-2]"), "shape entries must be non-negative integers, found -2");
  EXPECT_HAS(err("[2.5]"), "shape entries must be non-negative integers");
  EXPECT_HAS(err("\"2\""), "missing or non-array 'shape'");
  EXPECT_HAS(err("[1,1,1,1,1,1,1,1,2]"), "rank 9 exceeds 8");
  EXPECT_HAS(err("[281474976710657]"), "absurd dimension");
  // Products that overflow 64 bits saturate instead of wrapping to a small number.
  EXPECT_HAS(err("[4294967296, 4294967296, 4294967296]"), "needs more bytes than the data");
  EXPECT_HAS(err("[1000]"), "needs more bytes than the data section holds (8)");
  EXPECT_HAS(err("[0, 281474976710657]", "[0, 0]"), "absurd dimension");
  EXPECT_EQ(err("[0, 1000]", "[0, 0]"), "<ok>");
}

TEST(Safetensors, BadOffsets) {
  auto err = [](const std::string& offsets, size_t data = 8) {
    return ParseError(
        Raw(R"({"w": {"dtype": "F16", "shape": [2, 2], "data_offsets": )" + offsets + "}}", data));
  };
  EXPECT_EQ(err("[0, 8]"), "<ok>");
  EXPECT_HAS(err("[8, 16]"),
             "tensor 'w': data_offsets [8, 16] lies past the end of the data section (8 bytes)");
  EXPECT_HAS(err("[0, 18446744073709551615]"), "lies past the end");
  EXPECT_HAS(err("[4, 0]"), "has begin > end");
  EXPECT_HAS(err("[0, 6]"), "spans 6 bytes but shape [2, 2] of F16 needs 8");
  EXPECT_HAS(err("[0, 8, 9]"), "'data_offsets' must be an array [begin, end]");
  EXPECT_HAS(err("[-1, 7]"), "'data_offsets' must be non-negative integers");
  EXPECT_HAS(err("{}"), "'data_offsets' must be an array");
}

TEST(Safetensors, OverlappingTensors) {
  const std::string h =
      R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
          "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]},
          "c": {"dtype": "F32", "shape": [0], "data_offsets": [4, 4]}})";
  EXPECT_HAS(ParseError(Raw(h, 12)), "tensor 'b' data_offsets [4, 12] overlap tensor 'a' [0, 8]");
  // Containment is overlap too.
  const std::string h2 =
      R"({"a": {"dtype": "U8", "shape": [12], "data_offsets": [0, 12]},
          "b": {"dtype": "U8", "shape": [2], "data_offsets": [10, 12]}})";
  EXPECT_HAS(ParseError(Raw(h2, 12)), "overlap");
  // Back to back and empty tensors sharing an offset are fine.
  const std::string ok =
      R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
          "e": {"dtype": "F32", "shape": [0], "data_offsets": [8, 8]},
          "b": {"dtype": "F32", "shape": [1], "data_offsets": [8, 12]}})";
  EXPECT_EQ(ParseError(Raw(ok, 12)), "<ok>");
}

TEST(Safetensors, Metadata) {
  EXPECT_HAS(ParseError(Raw(R"({"__metadata__": {"format": 1}})", 0)),
             "'__metadata__' value of 'format' must be a string, found number");
  EXPECT_HAS(ParseError(Raw(R"({"__metadata__": [1]})", 0)), "'__metadata__' must be an object");
  EXPECT_EQ(ParseError(Raw(R"({"__metadata__": null})", 0)), "<ok>");
}

TEST(Safetensors, OpenMissingFileNamesIt) {
  auto f = File::Open("/nonexistent/x.safetensors");
  ASSERT_FALSE(f.ok());
  EXPECT_HAS(f.message(), "/nonexistent/x.safetensors");
}

// Random byte flips, truncations and length patches of a valid file: never a crash.
TEST(Safetensors, MutationFuzz) {
  std::vector<float> a(12, 1.f);
  std::vector<uint16_t> b(5, 7);
  Writer w;
  w.SetMetadata("format", "pt");
  w.AddTensor("model.layers.0.mlp.up_proj.weight", Dtype::kF32, {3, 4}, a.data(), 48);
  w.AddTensor("b", Dtype::kBF16, {5}, b.data(), 10);
  auto valid = w.Serialize();
  ASSERT_TRUE(valid.ok());
  ASSERT_EQ(ParseError(*valid), "<ok>");
  std::mt19937 rng(42);
  int rejected = 0;
  const std::string alphabet =
      "{}[]\",:0123456789-.eE \x00\xff"
      "F32BF16dtypeshape";
  for (int iter = 0; iter < 20000; ++iter) {
    std::vector<uint8_t> m = *valid;
    const int edits = 1 + int(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      const size_t pos = rng() % m.size();
      switch (rng() % 4) {
        case 0:
          m[pos] = uint8_t(rng());
          break;
        case 1:
          m[pos] = uint8_t(alphabet[rng() % alphabet.size()]);
          break;
        case 2:
          m.resize(pos);
          break;
        case 3:
          m[rng() % 8] = uint8_t(rng());
          break;
      }
      if (m.empty()) break;
    }
    // Copy to an exactly-sized heap block so ASan catches any read past the end.
    std::unique_ptr<uint8_t[]> buf(new uint8_t[m.size() + 1]);
    std::memcpy(buf.get(), m.data(), m.size());
    auto f = File::FromBuffer(buf.get(), m.size(), "fuzz");
    if (!f.ok()) {
      ++rejected;
      EXPECT_FALSE(f.message().empty());
      continue;
    }
    for (const TensorInfo& t : f->tensors()) {
      ASSERT_LE(t.data + t.nbytes(), buf.get() + m.size());
      volatile uint8_t sink = 0;
      for (size_t k = 0; k < t.nbytes(); ++k) sink = sink ^ t.data[k];
    }
  }
  EXPECT_GT(rejected, 1000);
}

TEST(SafetensorsIndex, ParsesAndValidates) {
  auto idx = ParseIndex(R"({"metadata": {"total_size": 10}, "weight_map": {
      "a": "model-00001-of-00002.safetensors", "b": "model-00002-of-00002.safetensors",
      "c": "model-00001-of-00002.safetensors"}})",
                        "index.json");
  ASSERT_TRUE(idx.ok()) << idx.message();
  EXPECT_EQ(idx->weight_map.size(), 3u);
  EXPECT_EQ(idx->shards, (std::vector<std::string>{"model-00001-of-00002.safetensors",
                                                   "model-00002-of-00002.safetensors"}));
  auto err = [](const std::string& text) {
    auto r = ParseIndex(text, "index.json");
    return r.ok() ? std::string("<ok>") : r.message();
  };
  EXPECT_HAS(err("{"), "index.json: invalid JSON");
  EXPECT_HAS(err("[]"), "not a JSON object");
  EXPECT_HAS(err(R"({"weight_map": []})"), "missing object 'weight_map'");
  EXPECT_HAS(err(R"({"weight_map": {}})"), "'weight_map' is empty");
  EXPECT_HAS(err(R"({"weight_map": {"a": null}})"), "must be a file name string");
  for (const char* bad : {"../x.safetensors", "/etc/passwd", "sub/x.safetensors", "..", ""})
    EXPECT_HAS(err(std::string(R"({"weight_map": {"a": ")") + bad + "\"}}"),
               "not a plain file name");
}

TEST(HfConfig, ParsesQwenConfig) {
  auto c = hf::ParseConfigJson(R"({
      "architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_size": 896,
      "num_hidden_layers": 24, "num_attention_heads": 14, "num_key_value_heads": 2,
      "intermediate_size": 4864, "vocab_size": 151936, "max_position_embeddings": 32768,
      "rope_theta": 1000000.0, "rms_norm_eps": 1e-06, "tie_word_embeddings": true,
      "hidden_act": "silu", "rope_scaling": null, "sliding_window": null,
      "use_sliding_window": false, "torch_dtype": "bfloat16"})",
                               "config.json");
  ASSERT_TRUE(c.ok()) << c.message();
  EXPECT_EQ(c->architectures, std::vector<std::string>{"Qwen2ForCausalLM"});
  EXPECT_EQ(c->hidden_size, 896);
  EXPECT_EQ(c->num_key_value_heads, 2);
  EXPECT_FALSE(c->head_dim.has_value());
  EXPECT_EQ(c->rope_theta, 1e6);
  EXPECT_EQ(c->tie_word_embeddings, true);
  EXPECT_EQ(c->rope_scaling, "");
  EXPECT_EQ(c->torch_dtype, "bfloat16");
}

TEST(HfConfig, RopeParametersOfTransformers5) {
  auto c = hf::ParseConfigJson(R"({"model_type": "qwen3", "hidden_size": 8,
      "num_hidden_layers": 1, "num_attention_heads": 1, "intermediate_size": 8, "vocab_size": 8,
      "rope_parameters": {"rope_theta": 5000.0, "rope_type": "default"}})",
                               "config.json");
  ASSERT_TRUE(c.ok()) << c.message();
  EXPECT_EQ(c->rope_theta, 5000.0);
  EXPECT_EQ(c->rope_scaling, "");
  auto y = hf::ParseConfigJson(R"({"model_type": "qwen3", "hidden_size": 8,
      "num_hidden_layers": 1, "num_attention_heads": 1, "intermediate_size": 8, "vocab_size": 8,
      "rope_scaling": {"rope_type": "yarn", "factor": 4.0}})",
                               "config.json");
  ASSERT_TRUE(y.ok()) << y.message();
  EXPECT_HAS(y->rope_scaling, "yarn");
}

TEST(HfConfig, Errors) {
  auto err = [](const std::string& text) {
    auto r = hf::ParseConfigJson(text, "config.json");
    return r.ok() ? std::string("<ok>") : r.message();
  };
  EXPECT_HAS(err("{"), "config.json: invalid JSON");
  EXPECT_HAS(err(""), "config.json: invalid JSON");
  EXPECT_HAS(err("3"), "not a JSON object");
  EXPECT_HAS(err("{}"), "missing required field 'hidden_size'");
  EXPECT_HAS(err(R"({"hidden_size": true})"), "'hidden_size' must be an integer, found boolean");
  EXPECT_HAS(err(R"({"hidden_size": 8, "num_hidden_layers": 1, "num_attention_heads": 1,
                    "intermediate_size": 8, "vocab_size": 8, "model_type": ["qwen2"]})"),
             "'model_type' must be a string");
}

TEST(HfConfig, ChatTemplate) {
  auto t = [](const std::string& text) {
    auto r = hf::ParseChatTemplate(text, "tokenizer_config.json");
    return r.ok() ? *r : "error: " + r.message();
  };
  EXPECT_EQ(t(R"({"chat_template": "{{ x }}"})"), "{{ x }}");
  EXPECT_EQ(t(R"({"eos_token": "a"})"), "");
  EXPECT_EQ(t(R"({"chat_template": null})"), "");
  EXPECT_EQ(t(R"({"chat_template": [{"name": "rag", "template": "R"},
                                     {"name": "default", "template": "D"}]})"),
            "D");
  EXPECT_EQ(t(R"({"chat_template": [{"name": "rag", "template": "R"}]})"), "R");
  EXPECT_HAS(t("{"), "tokenizer_config.json: invalid JSON");
  EXPECT_HAS(t(R"({"chat_template": 1})"), "must be a string or a list");
  EXPECT_HAS(t(R"({"chat_template": [1]})"), "entries must be objects");
}

}  // namespace
}  // namespace brisk::safetensors
