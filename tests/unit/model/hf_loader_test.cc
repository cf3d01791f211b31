// Hugging Face directories: a golden GGUF model is rewritten as config.json + two safetensors
// shards + index + tokenizer.json; loading the directory must give the GGUF model's logits
// (rel-L2 <= 1e-5) and the float64 reference's (<= 1e-4). Without the full golden set the
// committed q4_k_m files are dequantized to F32, so the test always runs.
#include "model/hf_loader.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <numeric>
#include <sstream>

#include "formats/logits_file.h"
#include "golden_util.h"
#include "hf_test_util.h"
#include "model/forward.h"
#include "test_paths.h"

namespace brisk {
namespace {

using golden::ReadSequences;
using golden::RelL2;
using hf_test::WriteHfDir;
using hf_test::WriteOptions;

std::vector<float> Logits(const Model& m, const std::vector<int32_t>& toks) {
  ThreadPool pool(2);
  ReferenceForward fwd(m, pool, 32);
  KvCache kv(m.config(), int(toks.size()));
  std::vector<int32_t> rows(toks.size());
  std::iota(rows.begin(), rows.end(), 0);
  std::vector<float> out(toks.size() * size_t(m.config().n_vocab));
  Status st = fwd.Run(toks, 0, kv, rows, out.data());
  EXPECT_TRUE(st.ok()) << st.message();
  return out;
}

// Rewrites `gguf_path` as an HF directory and checks config, tokenizer files and logits.
void CheckConversion(const std::string& name, const std::string& gguf_path,
                     const WriteOptions& opts) {
  auto gm = Model::Load(gguf_path);
  ASSERT_TRUE(gm.ok()) << gm.message();
  const Model& g = **gm;
  const ModelConfig& gc = g.config();

  hf_test::ScopedTempDir tmp;
  const std::string& dir = tmp.path;
  auto tensors = hf_test::TensorsFromGguf(*g.gguf());
  WriteOptions o = opts;
  o.chat_template = g.chat_template();
  ASSERT_FALSE(o.chat_template.empty()) << name << ": golden models carry a chat template";
  WriteHfDir(dir, hf_test::ConfigJson(gc), tensors, o);

  auto hm = Model::Load(dir);
  ASSERT_TRUE(hm.ok()) << hm.message();
  const Model& h = **hm;
  const ModelConfig& hc = h.config();
  EXPECT_EQ(h.gguf(), nullptr);
  EXPECT_EQ(hc.arch, gc.arch);
  EXPECT_EQ(hc.arch_name, gc.arch_name);
  EXPECT_EQ(hc.n_embd, gc.n_embd);
  EXPECT_EQ(hc.n_layer, gc.n_layer);
  EXPECT_EQ(hc.n_head, gc.n_head);
  EXPECT_EQ(hc.n_head_kv, gc.n_head_kv);
  EXPECT_EQ(hc.head_dim, gc.head_dim);
  EXPECT_EQ(hc.n_ff, gc.n_ff);
  EXPECT_EQ(hc.n_vocab, gc.n_vocab);
  EXPECT_EQ(hc.context_length, gc.context_length);
  EXPECT_EQ(hc.rope_theta, gc.rope_theta);
  EXPECT_EQ(hc.rms_eps, gc.rms_eps);
  EXPECT_EQ(hc.tied_embeddings, gc.tied_embeddings);
  EXPECT_EQ(hc.qkv_bias, gc.qkv_bias);
  EXPECT_EQ(hc.qk_norm, gc.qk_norm);
  EXPECT_EQ(h.chat_template(), g.chat_template());
  EXPECT_EQ(h.hf_tokenizer_json(), dir + "/tokenizer.json");
  // The view has the dtype the shard stores.
  for (const auto& t : tensors) {
    if (t.name != "model.layers.0.self_attn.q_proj.weight") continue;
    GgmlType want;
    ASSERT_TRUE(safetensors::DtypeToGgml(t.dtype, &want));
    EXPECT_EQ(h.weights().layers[0].wq.type, want);
  }
  EXPECT_EQ(h.weights().layers[0].wq.name, "blk.0.attn_q.weight");
  if (gc.tied_embeddings) {
    EXPECT_EQ(h.weights().output.data, h.weights().token_embd.data);
  }

  const std::string seq_path =
      test::FindGoldenOrData("logits/sequences.txt", "golden/sequences.txt");
  ASSERT_FALSE(seq_path.empty());
  const auto seqs = ReadSequences(seq_path);
  ASSERT_EQ(seqs.size(), 3u);
  int ref_checked = 0;
  for (size_t s = 0; s < seqs.size(); ++s) {
    const auto& toks = seqs[s];
    const int nv = gc.n_vocab;
    const std::vector<float> want = Logits(g, toks);
    const std::vector<float> got = Logits(h, toks);
    double worst = 0, worst64 = 0;
    for (size_t t = 0; t < toks.size(); ++t)
      worst = std::max(worst, RelL2(&got[t * nv], &want[t * nv], nv));
    EXPECT_LE(worst, 1e-5) << name << " seq" << s << " vs the GGUF model";

    const std::string sfx = ".seq" + std::to_string(s) + ".ref64.bin";
    const std::string ref_path =
        test::FindGoldenOrData("logits/" + name + sfx, "golden/" + name + sfx);
    if (ref_path.empty()) continue;
    auto ref = ReadLogitsFile(ref_path);
    ASSERT_TRUE(ref.ok()) << ref.message();
    ASSERT_EQ(ref->n_tokens, int(toks.size()));
    ASSERT_EQ(ref->n_vocab, nv);
    for (size_t t = 0; t < toks.size(); ++t)
      worst64 = std::max(worst64, RelL2(&got[t * nv], ref->row(int(t)), nv));
    EXPECT_LE(worst64, 1e-4) << name << " seq" << s << " vs ref64";
    std::printf("%-20s seq%zu n=%3zu  rel-L2 vs GGUF %.2e  vs ref64 %.2e\n", name.c_str(), s,
                toks.size(), worst, worst64);
    ++ref_checked;
  }
  EXPECT_GT(ref_checked, 0) << name << ": no ref64 logits found";
}

class HfGolden : public ::testing::TestWithParam<const char*> {};

// Full golden set: the f32 files (as F32 shards), bf16 / f16 (kept as BF16 / F16). Committed
// subset: q4_k_m dequantized to F32 shards.
TEST_P(HfGolden, ShardedDirectoryMatchesGguf) {
  const std::string name = GetParam();
  const std::string path =
      test::FindGoldenOrData("models/" + name + ".gguf", "golden/" + name + ".gguf");
  if (path.empty()) GTEST_SKIP() << name << ": golden model not present";
  CheckConversion(name, path, WriteOptions{});
}

INSTANTIATE_TEST_SUITE_P(Models, HfGolden,
                         ::testing::Values("tiny-f32", "tiny-untied-f32", "tiny-qwen3-f32",
                                           "tiny-bf16", "tiny-untied-f16", "tiny-untied-q4_k_m",
                                           "tiny-qwen3-q4_k_m"),
                         [](const auto& info) {
                           std::string s = info.param;
                           for (char& c : s)
                             if (c == '-') c = '_';
                           return s;
                         });

// One model.safetensors without an index, every tensor at an odd offset (copied to stay
// aligned): still the same logits.
TEST(HfLoader, SingleMisalignedFileMatchesGguf) {
  const std::string name = "tiny-qwen3-q4_k_m";
  const std::string path =
      test::FindGoldenOrData("models/" + name + ".gguf", "golden/" + name + ".gguf");
  ASSERT_FALSE(path.empty());
  WriteOptions o;
  o.shards = 1;
  o.misalign = true;
  CheckConversion(name, path, o);
}

TEST(HfLoader, ZeroCopyViewsPointIntoTheShards) {
  hf_test::ScopedTempDir tmp;
  const std::string& dir = tmp.path;
  const ModelConfig c = hf_test::SmallConfig(false, false);
  auto tensors = hf_test::RandomTensors(c);
  WriteHfDir(dir, hf_test::ConfigJson(c), tensors);
  auto m = Model::Load(dir + "/");  // a trailing slash is fine
  ASSERT_TRUE(m.ok()) << m.message();
  const ModelWeights& w = (*m)->weights();
  EXPECT_EQ((*m)->path(), dir);
  EXPECT_FALSE((*m)->config().tied_embeddings);
  EXPECT_NE(w.output.data, w.token_embd.data);
  // The views hold exactly the bytes written.
  EXPECT_EQ(std::memcmp(w.layers[1].w_down.data, tensors.back().bytes.data(),
                        tensors.back().bytes.size()),
            0);
  EXPECT_EQ(w.layers[1].w_down.rows, c.n_embd);
  EXPECT_EQ(w.layers[1].w_down.cols, c.n_ff);
  EXPECT_EQ(w.layers[0].bq.rows, 1);
  EXPECT_EQ(w.layers[0].bq.cols, c.q_dim());
}

TEST(HfLoader, Bf16RandomModelRunsAndMatchesF32WithinBf16Error) {
  const ModelConfig c = hf_test::SmallConfig(true, true);
  auto tensors = hf_test::RandomTensors(c, 7);
  // Round the F32 weights to BF16 values first so both directories hold the same numbers.
  auto bf = tensors;
  hf_test::ToBf16(&bf);
  for (size_t i = 0; i < tensors.size(); ++i) {
    const size_t n = tensors[i].bytes.size() / 4;
    for (size_t k = 0; k < n; ++k) {
      uint16_t h;
      std::memcpy(&h, bf[i].bytes.data() + 2 * k, 2);
      const float f = Bf16ToFp32(h);
      std::memcpy(tensors[i].bytes.data() + 4 * k, &f, 4);
    }
  }
  hf_test::ScopedTempDir t32, t16;
  const std::string &d32 = t32.path, &d16 = t16.path;
  WriteHfDir(d32, hf_test::ConfigJson(c), tensors);
  WriteHfDir(d16, hf_test::ConfigJson(c), bf, WriteOptions{.shards = 3});
  auto m32 = Model::Load(d32);
  auto m16 = Model::Load(d16);
  ASSERT_TRUE(m32.ok()) << m32.message();
  ASSERT_TRUE(m16.ok()) << m16.message();
  EXPECT_EQ((*m16)->weights().layers[0].wq.type, GgmlType::kBF16);
  EXPECT_EQ((*m16)->weights().layers[0].q_norm.type, GgmlType::kBF16);
  const std::vector<int32_t> toks = {1, 5, 9, 63, 0, 17, 42};
  const auto a = Logits(**m32, toks), b = Logits(**m16, toks);
  for (size_t t = 0; t < toks.size(); ++t) {
    for (int k = 0; k < c.n_vocab; ++k) ASSERT_TRUE(std::isfinite(a[t * c.n_vocab + k]));
    EXPECT_LE(RelL2(&b[t * c.n_vocab], &a[t * c.n_vocab], c.n_vocab), 1e-6);
  }
}

TEST(HfLoader, ChatTemplateListPicksDefaultAndJinjaFileIsAFallback) {
  const ModelConfig c = hf_test::SmallConfig();
  const auto tensors = hf_test::RandomTensors(c);
  hf_test::ScopedTempDir tmp;
  const std::string& dir = tmp.path;
  WriteHfDir(dir, hf_test::ConfigJson(c), tensors, WriteOptions{.shards = 1});
  hf_test::WriteText(dir + "/tokenizer_config.json",
                     R"({"chat_template": [{"name": "tool_use", "template": "T"},
                                           {"name": "default", "template": "D"}]})");
  auto m = Model::Load(dir);
  ASSERT_TRUE(m.ok()) << m.message();
  EXPECT_EQ((*m)->chat_template(), "D");

  hf_test::WriteText(dir + "/tokenizer_config.json", R"({"eos_token": "<|im_end|>"})");
  hf_test::WriteText(dir + "/chat_template.jinja", "J{{ x }}");
  m = Model::Load(dir);
  ASSERT_TRUE(m.ok()) << m.message();
  EXPECT_EQ((*m)->chat_template(), "J{{ x }}");

  std::remove((dir + "/chat_template.jinja").c_str());
  std::remove((dir + "/tokenizer_config.json").c_str());
  std::remove((dir + "/tokenizer.json").c_str());
  m = Model::Load(dir);
  ASSERT_TRUE(m.ok()) << m.message();
  EXPECT_EQ((*m)->chat_template(), "");
  EXPECT_EQ((*m)->hf_tokenizer_json(), "");
}

TEST(HfLoader, GgufModelsExposeTheirChatTemplate) {
  const std::string path =
      test::FindGoldenOrData("models/tiny-untied-q4_k_m.gguf", "golden/tiny-untied-q4_k_m.gguf");
  auto m = Model::Load(path);
  ASSERT_TRUE(m.ok()) << m.message();
  EXPECT_NE((*m)->chat_template().find("im_start"), std::string::npos);
  EXPECT_EQ((*m)->hf_tokenizer_json(), "");
}

TEST(HfNames, RoundTripAndUnknownNames) {
  EXPECT_EQ(GgufNameFromHf("model.layers.12.self_attn.q_proj.bias"), "blk.12.attn_q.bias");
  EXPECT_EQ(GgufNameFromHf("model.layers.0.mlp.down_proj.weight"), "blk.0.ffn_down.weight");
  EXPECT_EQ(GgufNameFromHf("model.embed_tokens.weight"), "token_embd.weight");
  EXPECT_EQ(GgufNameFromHf("lm_head.weight"), "output.weight");
  EXPECT_EQ(HfNameFromGguf("blk.3.attn_k_norm.weight"), "model.layers.3.self_attn.k_norm.weight");
  EXPECT_EQ(HfNameFromGguf("output_norm.weight"), "model.norm.weight");
  for (const char* bad : {"model.layers..mlp.up_proj.weight", "model.layers.x.mlp.up_proj.weight",
                          "model.layers.01.mlp.up_proj.weight", "model.layers.1.mlp.foo.weight",
                          "model.layers.1", "model.rotary_emb.inv_freq", ""})
    EXPECT_EQ(GgufNameFromHf(bad), "") << bad;
  EXPECT_EQ(HfNameFromGguf("blk.1.attn_q.weight.x"), "");
}

}  // namespace
}  // namespace brisk
