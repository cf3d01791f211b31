// `brisk synth`: deterministic bytes, llama.cpp's tensor types, the real vocabulary, and a model
// whose activations stay finite.
#include "model/synth.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iterator>

#include "model/forward.h"
#include "test_paths.h"

namespace brisk {
namespace {

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string Synth(const std::string& dir, const char* name, FileType type, uint64_t seed,
                  int threads) {
  SynthOptions o;
  o.shape = "tiny";
  o.type = type;
  o.seed = seed;
  o.threads = threads;
  const std::string path = dir + "/" + name + ".gguf";
  Status st = WriteSynthModel(o, path);
  EXPECT_TRUE(st.ok()) << st.message();
  return path;
}

TEST(Synth, SameSeedSameBytesWhateverTheThreads) {
  const std::string dir = test::TempDir();
  const std::string a = Synth(dir, "a", FileType::kQ4_K_M, 7, 1);
  const std::string b = Synth(dir, "b", FileType::kQ4_K_M, 7, 2);
  const std::string c = Synth(dir, "c", FileType::kQ4_K_M, 8, 2);
  const std::string ba = ReadAll(a), bb = ReadAll(b), bc = ReadAll(c);
  ASSERT_GT(ba.size(), 1000000u);
  EXPECT_TRUE(ba == bb) << "same seed must give identical files";
  EXPECT_EQ(ba.size(), bc.size());
  EXPECT_FALSE(ba == bc) << "another seed must give other weights";
}

TEST(Synth, RealVocabularyRecipeTypesAndMarker) {
  const std::string path = Synth(test::TempDir(), "m", FileType::kQ4_K_M, 1, 2);
  auto model = Model::Load(path);
  ASSERT_TRUE(model.ok()) << model.message();
  const gguf::File& f = *(*model)->gguf();
  EXPECT_EQ((*model)->config().n_vocab, 151936);
  auto tokens = f.GetStringArray("tokenizer.ggml.tokens");
  ASSERT_TRUE(tokens.ok());
  EXPECT_EQ((*tokens)[151645], "<|im_end|>");
  EXPECT_EQ(f.GetStringArray("tokenizer.ggml.merges")->size(), 151387u);
  EXPECT_TRUE(f.Find("tokenizer.chat_template") != nullptr);
  EXPECT_TRUE(*f.GetBool(kSyntheticKey));
  // hidden 384 is not a multiple of 256: the K-quant fallbacks apply, as in the real 0.5B.
  EXPECT_EQ(f.FindTensor("token_embd.weight")->type, GgmlType::kQ8_0);
  EXPECT_EQ(f.FindTensor("blk.0.attn_q.weight")->type, GgmlType::kQ5_0);
  EXPECT_EQ(f.FindTensor("blk.0.attn_v.weight")->type, GgmlType::kQ5_0);
  EXPECT_EQ(f.FindTensor("blk.1.attn_v.weight")->type, GgmlType::kQ8_0);
  EXPECT_EQ(f.FindTensor("blk.0.ffn_down.weight")->type, GgmlType::kQ4_K);
  EXPECT_EQ(f.FindTensor("blk.1.ffn_down.weight")->type, GgmlType::kQ6_K);
  EXPECT_EQ(f.FindTensor("blk.0.attn_norm.weight")->type, GgmlType::kF32);
}

TEST(Synth, LogitsStayFiniteOverA512TokenPrefill) {
  const std::string path = Synth(test::TempDir(), "p", FileType::kQ8_0, 3, 2);
  auto model = Model::Load(path);
  ASSERT_TRUE(model.ok()) << model.message();
  const ModelConfig& c = (*model)->config();
  ThreadPool pool(2);
  ReferenceForward fwd(**model, pool, 128);
  KvCache kv(c, 512);
  std::vector<int32_t> toks(512);
  for (int i = 0; i < 512; ++i) toks[i] = (i * 104729 + 17) % c.n_vocab;
  const std::vector<int32_t> rows = {0, 255, 511};
  std::vector<float> logits(rows.size() * size_t(c.n_vocab));
  ASSERT_TRUE(fwd.Run(toks, 0, kv, rows, logits.data()).ok());
  double max_abs = 0;
  for (float v : logits) {
    ASSERT_TRUE(std::isfinite(v));
    max_abs = std::max(max_abs, double(std::fabs(v)));
  }
  EXPECT_GT(max_abs, 0.0);
}

TEST(Synth, RejectsUnknownShapeAndUnwritableType) {
  SynthOptions o;
  o.shape = "llama-7b";
  Status st = WriteSynthModel(o, test::TempDir() + "/x.gguf");
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("known: qwen2.5-0.5b"), std::string::npos) << st.message();
  o.shape = "tiny";
  o.type = FileType::kQ2_K;
  EXPECT_FALSE(WriteSynthModel(o, test::TempDir() + "/x.gguf").ok());
}

}  // namespace
}  // namespace brisk
