// The per-tensor type choice must reproduce what llama.cpp's quantizer chose in every golden
// model file (the files were quantized by llama.cpp itself).
#include "quant/recipe.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "formats/gguf.h"
#include "test_paths.h"

namespace brisk {
namespace {

TensorPlacement Place(const gguf::TensorInfo& t, int n_layer, bool has_output, int n_gqa) {
  TensorPlacement p;
  p.n_gqa = n_gqa;
  p.name = t.name;
  p.n_dims = t.n_dims;
  p.ne0 = t.ne[0];
  p.n_layer = n_layer;
  p.has_output = has_output;
  if (t.name.rfind("blk.", 0) == 0) p.layer = std::stoi(t.name.substr(4));
  return p;
}

// The last two are in tests/data/golden only (made by llama.cpp's quantizer, see its README).
const char* const kQuantized[] = {
    "tiny-q8_0",        "tiny-q4_0",          "tiny-q4_1",          "tiny-q5_0",
    "tiny-q5_1",        "tiny-q4_k_m",        "tiny-q5_k_m",        "tiny-q6_k",
    "tiny-q3_k_m",      "tiny-q2_k",          "tiny-f16",           "tiny-bf16",
    "tiny-untied-q8_0", "tiny-untied-q4_0",   "tiny-untied-q4_1",   "tiny-untied-q5_0",
    "tiny-untied-q5_1", "tiny-untied-q4_k_m", "tiny-untied-q5_k_m", "tiny-untied-q6_k",
    "tiny-untied-f16",  "tiny-untied-bf16",   "tiny-qwen3-q8_0",    "tiny-qwen3-q4_k_m",
    "tiny-qwen3-q6_k",  "tiny-qwen3-f16",     "tiny-untied-iq4_nl", "tiny-untied-iq4_xs",
};

class RecipeMatchesLlamaCpp : public ::testing::TestWithParam<const char*> {};

TEST_P(RecipeMatchesLlamaCpp, EveryTensorType) {
  const std::string name = GetParam();
  const std::string path =
      test::FindGoldenOrData("models/" + name + ".gguf", "golden/" + name + ".gguf");
  if (path.empty()) GTEST_SKIP() << name << " not present";
  auto f = gguf::File::Open(path);
  ASSERT_TRUE(f.ok()) << f.message();
  auto ft_id = f->GetUInt("general.file_type");
  ASSERT_TRUE(ft_id.ok());
  const FileType ft = FileType(*ft_id);
  auto arch = f->GetString("general.architecture");
  auto n_layer = f->GetUInt(*arch + ".block_count");
  ASSERT_TRUE(n_layer.ok());
  const bool has_output = f->FindTensor("output.weight") != nullptr;
  auto n_head = f->GetUInt(*arch + ".attention.head_count");
  auto n_head_kv = f->GetUInt(*arch + ".attention.head_count_kv");
  ASSERT_TRUE(n_head.ok() && n_head_kv.ok() && *n_head_kv > 0);
  const int n_gqa = int(*n_head / *n_head_kv);
  int checked = 0;
  for (const auto& t : f->tensors()) {
    GgmlType want = t.type;
    GgmlType got = ChooseTensorType(ft, Place(t, int(*n_layer), has_output, n_gqa));
    EXPECT_EQ(TypeName(got), TypeName(want)) << name << " " << t.name;
    ++checked;
  }
  EXPECT_GT(checked, 20);
}

INSTANTIATE_TEST_SUITE_P(Golden, RecipeMatchesLlamaCpp, ::testing::ValuesIn(kQuantized),
                         [](const auto& info) {
                           std::string s = info.param;
                           for (char& c : s)
                             if (c == '-') c = '_';
                           return s;
                         });

// The real Qwen2.5-0.5B Q4_K_M file: {Q5_0: 132, Q8_0: 13, Q4_K: 12, Q6_K: 12, F32: 121}.
TEST(Recipe, Qwen25HalfBillionQ4KM) {
  std::map<std::string, int> hist;
  const int L = 24;
  auto add = [&](const std::string& n, int dims, int64_t ne0, int layer) {
    TensorPlacement p;
    p.name = n;
    p.n_dims = dims;
    p.ne0 = ne0;
    p.layer = layer;
    p.n_layer = L;
    hist[std::string(TypeName(ChooseTensorType(FileType::kQ4_K_M, p)))]++;
  };
  add("token_embd.weight", 2, 896, -1);
  add("output_norm.weight", 1, 896, -1);
  for (int l = 0; l < L; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    for (const char* t : {"attn_q.weight", "attn_k.weight", "attn_v.weight", "attn_output.weight",
                          "ffn_gate.weight", "ffn_up.weight"})
      add(b + t, 2, 896, l);
    add(b + "ffn_down.weight", 2, 4864, l);
    for (const char* t :
         {"attn_norm.weight", "ffn_norm.weight", "attn_q.bias", "attn_k.bias", "attn_v.bias"})
      add(b + t, 1, 896, l);
  }
  EXPECT_EQ(hist["Q5_0"], 132);
  EXPECT_EQ(hist["Q8_0"], 13);
  EXPECT_EQ(hist["Q4_K"], 12);
  EXPECT_EQ(hist["Q6_K"], 12);
  EXPECT_EQ(hist["F32"], 121);
}

// llama-quantize IQ4_XS on a Qwen2.5-0.5B-shaped model (24 layers, 14 heads / 2 KV heads, hidden
// 896, ffn 4864), as its log printed: ffn_down of the first eighth of the layers Q5_K, attn_v
// Q5_K for 7 heads per KV head (falling back to Q5_1 at 896 columns), 896-column matrices IQ4_NL.
TEST(Recipe, Qwen25HalfBillionIQ4XS) {
  auto type = [](const std::string& n, int64_t ne0, int layer) {
    TensorPlacement p;
    p.name = n;
    p.ne0 = ne0;
    p.layer = layer;
    p.n_layer = 24;
    p.n_gqa = 7;
    return std::string(TypeName(ChooseTensorType(FileType::kIQ4_XS, p)));
  };
  for (int l = 0; l < 24; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    EXPECT_EQ(type(b + "ffn_down.weight", 4864, l), l < 3 ? "Q5_K" : "IQ4_XS") << l;
    EXPECT_EQ(type(b + "attn_v.weight", 896, l), "Q5_1") << l;
    EXPECT_EQ(type(b + "attn_q.weight", 896, l), "IQ4_NL") << l;
    EXPECT_EQ(type(b + "ffn_up.weight", 896, l), "IQ4_NL") << l;
  }
  EXPECT_EQ(type("token_embd.weight", 896, -1), "Q8_0");  // tied: the output matrix
}

TEST(Recipe, ParseFileTypeNames) {
  FileType ft;
  ASSERT_TRUE(ParseFileType("q4_k_m", &ft));
  EXPECT_EQ(ft, FileType::kQ4_K_M);
  ASSERT_TRUE(ParseFileType("BF16", &ft));
  EXPECT_EQ(ft, FileType::kBF16);
  EXPECT_FALSE(ParseFileType("q4_k", &ft));
  EXPECT_EQ(FileTypeString(FileType::kQ5_K_M), "Q5_K_M");
  ASSERT_TRUE(ParseFileType("iq4_xs", &ft));
  EXPECT_EQ(ft, FileType::kIQ4_XS);
  ASSERT_TRUE(ParseFileType("IQ4_NL", &ft));
  EXPECT_EQ(ft, FileType::kIQ4_NL);
}

}  // namespace
}  // namespace brisk
