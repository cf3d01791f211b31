// `brisk quantize` on the golden f32 models: the same tensor types llama.cpp chose in its own
// files, and a dequantised RMS error within 1.1x of llama.cpp's.
#include "model/quantize_model.h"

#include <gtest/gtest.h>

#include <cmath>

#include "formats/gguf.h"
#include "quant/dequantize.h"
#include "test_paths.h"

namespace brisk {
namespace {

// Sum of squared errors of every 2-D tensor of `q` against the f32 file, and the value count.
std::pair<double, double> SquaredError(const gguf::File& f32, const gguf::File& q) {
  double se = 0, n = 0;
  for (const auto& t : f32.tensors()) {
    if (t.n_dims < 2) continue;
    const gguf::TensorInfo* qt = q.FindTensor(t.name);
    EXPECT_NE(qt, nullptr) << t.name;
    if (!qt) continue;
    std::vector<float> a(t.n_elements), b(t.n_elements);
    DequantizeRow(t.type, t.data, a.data(), t.n_elements);
    DequantizeRow(qt->type, qt->data, b.data(), t.n_elements);
    for (int64_t i = 0; i < t.n_elements; ++i) se += double(a[i] - b[i]) * double(a[i] - b[i]);
    n += double(t.n_elements);
  }
  return {se, n};
}

struct Case {
  const char* model;  // golden f32 source, e.g. "tiny"
  const char* type;   // file type suffix, e.g. "q4_k_m"
};

class QuantizeGolden : public ::testing::TestWithParam<Case> {};

TEST_P(QuantizeGolden, TypesAndErrorMatchLlamaCpp) {
  const Case c = GetParam();
  const std::string f32_path = test::GoldenPath(std::string("models/") + c.model + "-f32.gguf");
  // The IQ4 references are in tests/data/golden only (made with llama.cpp, see its README).
  const std::string stem = std::string(c.model) + "-" + c.type + ".gguf";
  const std::string ref_path = test::FindGoldenOrData("models/" + stem, "golden/" + stem);
  if (f32_path.empty()) GTEST_SKIP() << "golden models not present";
  FileType ft;
  ASSERT_TRUE(ParseFileType(c.type, &ft));
  const std::string out = test::TempDir() + "/q.gguf";
  QuantizeOptions o;
  o.type = ft;
  o.threads = 2;
  Status st = QuantizeGguf(f32_path, out, o);
  ASSERT_TRUE(st.ok()) << st.message();

  auto f32 = gguf::File::Open(f32_path);
  auto ours = gguf::File::Open(out);
  auto ref = gguf::File::Open(ref_path);
  ASSERT_TRUE(f32.ok() && ours.ok() && ref.ok());
  ASSERT_EQ(ours->tensors().size(), ref->tensors().size());
  for (const auto& t : ref->tensors()) {
    const gguf::TensorInfo* mine = ours->FindTensor(t.name);
    ASSERT_NE(mine, nullptr) << t.name;
    EXPECT_EQ(TypeName(mine->type), TypeName(t.type)) << c.model << " " << c.type << " " << t.name;
  }
  EXPECT_EQ(*ours->GetUInt("general.file_type"), uint64_t(ft));
  auto [se_ours, n] = SquaredError(*f32, *ours);
  auto [se_ref, n_ref] = SquaredError(*f32, *ref);
  ASSERT_EQ(n, n_ref);
  const double rms_ours = std::sqrt(se_ours / n), rms_ref = std::sqrt(se_ref / n);
  std::printf("%-12s %-7s RMS error ours %.4e  llama.cpp %.4e  ratio %.3f\n", c.model, c.type,
              rms_ours, rms_ref, rms_ref > 0 ? rms_ours / rms_ref : 0.0);
  EXPECT_LE(rms_ours, 1.1 * rms_ref + 1e-12);
}

std::vector<Case> Cases() {
  std::vector<Case> v;
  for (const char* m : {"tiny", "tiny-untied"})
    for (const char* t :
         {"f16", "bf16", "q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "q4_k_m", "q5_k_m", "q6_k"})
      v.push_back({m, t});
  for (Case c : {Case{"tiny-untied", "iq4_nl"}, Case{"tiny-untied", "iq4_xs"}}) v.push_back(c);
  return v;
}

INSTANTIATE_TEST_SUITE_P(Golden, QuantizeGolden, ::testing::ValuesIn(Cases()),
                         [](const auto& info) {
                           std::string s = std::string(info.param.model) + "_" + info.param.type;
                           for (char& ch : s)
                             if (ch == '-') ch = '_';
                           return s;
                         });

TEST(Quantize, RefusesUnsupportedTargetAndBadInput) {
  QuantizeOptions o;
  o.type = FileType::kQ2_K;
  const std::string src =
      test::FindGoldenOrData("models/tiny-untied-q4_k_m.gguf", "golden/tiny-untied-q4_k_m.gguf");
  Status st = QuantizeGguf(src, test::TempDir() + "/x.gguf", o);
  EXPECT_FALSE(st.ok());
  o.type = FileType::kQ8_0;
  st = QuantizeGguf("/nonexistent.gguf", test::TempDir() + "/x.gguf", o);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("cannot open"), std::string::npos);
}

}  // namespace
}  // namespace brisk

#include "hf_test_util.h"
#include "model/fast_forward.h"
#include "tokenizer/tokenizer.h"

namespace brisk {
namespace {

// HF directory -> GGUF: the recipe's types, the tokenizer carried over as GGUF metadata (same
// ids for the same text), the chat template, and logits close to llama.cpp's own file.
TEST(Quantize, FromHuggingFaceDirectory) {
  const std::string f32_path =
      test::FindGoldenOrData("models/tiny-untied-f32.gguf", "golden/tiny-untied-q4_k_m.gguf");
  const std::string tok_json = test::FindGoldenOrData("tokenizer/qwen2.5-tokenizer.json",
                                                      "tokenizer/qwen2.5-subset-tokenizer.json");
  ASSERT_FALSE(f32_path.empty());
  ASSERT_FALSE(tok_json.empty());
  auto g = Model::Load(f32_path);
  ASSERT_TRUE(g.ok()) << g.message();
  hf_test::ScopedTempDir dir;
  hf_test::WriteOptions wo;
  wo.chat_template = "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}{% endfor %}";
  hf_test::WriteHfDir(dir.path, hf_test::ConfigJson((*g)->config()),
                      hf_test::TensorsFromGguf(*(*g)->gguf()), wo);
  hf_test::WriteText(dir.path + "/tokenizer.json", hf_test::ReadFileForTest(tok_json));

  const std::string out = dir.path + "/out.gguf";
  QuantizeOptions o;
  o.type = FileType::kQ8_0;
  Status st = QuantizeGguf(dir.path, out, o);
  ASSERT_TRUE(st.ok()) << st.message();

  auto q = Model::Load(out);
  ASSERT_TRUE(q.ok()) << q.message();
  const gguf::File& f = *(*q)->gguf();
  EXPECT_EQ(f.FindTensor("output.weight")->type, GgmlType::kQ8_0);  // 256 cols: Q8_0 stays
  EXPECT_EQ(f.FindTensor("blk.0.attn_q.weight")->type, GgmlType::kQ8_0);
  EXPECT_EQ(f.FindTensor("blk.0.attn_norm.weight")->type, GgmlType::kF32);
  EXPECT_EQ(*f.GetString("tokenizer.chat_template"), wo.chat_template);
  EXPECT_EQ((*q)->config().n_layer, (*g)->config().n_layer);

  auto from_json = Tokenizer::FromHfJson(tok_json);
  auto from_gguf = Tokenizer::FromGguf(f);
  ASSERT_TRUE(from_json.ok()) << from_json.message();
  ASSERT_TRUE(from_gguf.ok()) << from_gguf.message();
  for (const char* text :
       {"Hello world", "你好，世界", "<|im_start|>user\nhi<|im_end|>", "  spaces\tand 123 digits!"})
    EXPECT_EQ(from_gguf->Encode(text), from_json->Encode(text)) << text;

  // Logits of the converted file against the f32 original: a Q8_0-sized difference.
  ThreadPool pool(2);
  FastForward a(**g, pool, 32), b(**q, pool, 32);
  SeqKvCache ka((*g)->config(), 8), kb((*q)->config(), 8);
  const std::vector<int32_t> toks = {1, 5, 9, 300, 2, 7, 11, 4};
  const std::vector<int32_t> rows = {7};
  std::vector<float> la((*g)->config().n_vocab), lb(la.size());
  ASSERT_TRUE(a.Run(toks, 0, ka.blocks(), rows, la.data()).ok());
  ASSERT_TRUE(b.Run(toks, 0, kb.blocks(), rows, lb.data()).ok());
  double num = 0, den = 0;
  for (size_t i = 0; i < la.size(); ++i) {
    num += (double(la[i]) - lb[i]) * (double(la[i]) - lb[i]);
    den += double(la[i]) * la[i];
  }
  EXPECT_LE(std::sqrt(num / den), 4e-2);
}

}  // namespace
}  // namespace brisk
