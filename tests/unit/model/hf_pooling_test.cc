// Hugging Face embedding folders as sentence-transformers saves them (Qwen3-Embedding):
// modules.json + 1_Pooling/config.json declare last-token pooling, and the weights are the inner
// Qwen3Model's (no "model." prefix, no lm_head). Such a folder loads with pooling last and the
// same weights as the prefixed one; mean pooling loads (it is refused where served); unreadable
// or unsafe module files are errors naming the file.
#include <gtest/gtest.h>

#include <filesystem>

#include "formats/sentence_transformers.h"
#include "hf_test_util.h"
#include "model/hf_loader.h"

namespace brisk {
namespace {

using hf_test::ScopedTempDir;
using hf_test::WriteText;

constexpr const char* kModules = R"([
  {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
  {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
  {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}
])";

std::string PoolingConfig(const char* true_flag) {
  std::string s = R"({"word_embedding_dimension": 32)";
  for (const char* f : {"cls_token", "mean_tokens", "max_tokens", "mean_sqrt_len_tokens",
                        "weightedmean_tokens", "lasttoken"})
    s += std::string(R"(, "pooling_mode_)") + f +
         "\": " + (std::string(f) == true_flag ? "true" : "false");
  return s + R"(, "include_prompt": true})";
}

// An embedding folder: the small Qwen3 config, tensors without "model.", no lm_head.
void WriteEmbeddingDir(const std::string& dir, const char* pooling_flag, bool bare = true) {
  const ModelConfig c = hf_test::SmallConfig(/*qwen3=*/true, /*tied=*/true);
  auto tensors = hf_test::RandomTensors(c, 7);
  std::erase_if(tensors, [](const hf_test::HfTensor& t) { return t.name == "lm_head.weight"; });
  if (bare)
    for (auto& t : tensors)
      if (t.name.starts_with("model.")) t.name = t.name.substr(6);
  hf_test::WriteHfDir(dir, hf_test::ConfigJson(c), tensors, {.shards = 1});
  WriteText(dir + "/modules.json", kModules);
  std::filesystem::create_directories(dir + "/1_Pooling");
  WriteText(dir + "/1_Pooling/config.json", PoolingConfig(pooling_flag));
}

TEST(HfPooling, LastTokenFolderWithBareNamesLoads) {
  ScopedTempDir bare, prefixed;
  WriteEmbeddingDir(bare.path, "lasttoken", true);
  WriteEmbeddingDir(prefixed.path, "lasttoken", false);
  auto b = LoadHfDirectory(bare.path);
  ASSERT_TRUE(b.ok()) << b.message();
  auto p = LoadHfDirectory(prefixed.path);
  ASSERT_TRUE(p.ok()) << p.message();
  EXPECT_EQ((*b)->config().pooling, Pooling::kLast);
  const ModelWeights& wb = (*b)->weights();
  const ModelWeights& wp = (*p)->weights();
  EXPECT_EQ(wb.token_embd.name, "token_embd.weight");
  EXPECT_EQ(wb.layers[1].w_down.name, "blk.1.ffn_down.weight");
  const size_t bytes = wb.layers[1].w_down.row_bytes() * size_t(wb.layers[1].w_down.rows);
  EXPECT_EQ(std::memcmp(wb.layers[1].w_down.data, wp.layers[1].w_down.data, bytes), 0);
  EXPECT_TRUE((*b)->config().tied_embeddings);
}

TEST(HfPooling, MeanLoadsAsMeanAndMaxIsRefused) {
  ScopedTempDir mean, max;
  WriteEmbeddingDir(mean.path, "mean_tokens");
  auto m = LoadHfDirectory(mean.path);
  ASSERT_TRUE(m.ok()) << m.message();
  EXPECT_EQ((*m)->config().pooling, Pooling::kMean);
  WriteEmbeddingDir(max.path, "max_tokens");
  auto x = LoadHfDirectory(max.path);
  ASSERT_FALSE(x.ok());
  EXPECT_NE(x.message().find("pooling 'max' is not supported"), std::string::npos) << x.message();
}

TEST(HfPooling, WithoutModulesJsonThereIsNoPooling) {
  ScopedTempDir dir;
  WriteEmbeddingDir(dir.path, "lasttoken");
  std::filesystem::remove(dir.path + "/modules.json");
  auto m = LoadHfDirectory(dir.path);
  ASSERT_TRUE(m.ok()) << m.message();
  EXPECT_EQ((*m)->config().pooling, Pooling::kNone);
}

TEST(HfPooling, ModuleFilesAreUntrusted) {
  ScopedTempDir dir;
  WriteText(dir.path + "/modules.json",
            R"([{"path": "../../etc", "type": "sentence_transformers.models.Pooling"}])");
  auto r = st_modules::Read(dir.path);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("not a folder name"), std::string::npos) << r.message();
  WriteText(dir.path + "/modules.json", R"({"not": "an array"})");
  EXPECT_FALSE(st_modules::Read(dir.path).ok());
  WriteText(dir.path + "/modules.json",
            R"([{"path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}])");
  auto missing = st_modules::Read(dir.path);  // the folder's config.json does not exist
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.message().find("1_Pooling/config.json"), std::string::npos)
      << missing.message();
  EXPECT_FALSE(st_modules::ParsePoolingConfig("{}", "x").ok());
  EXPECT_FALSE(st_modules::ParsePoolingConfig(
                   R"({"pooling_mode_lasttoken": true, "pooling_mode_cls_token": true})", "x")
                   .ok());
  EXPECT_EQ(*st_modules::ParsePoolingConfig(R"({"pooling_mode": "lasttoken"})", "x"), "lasttoken");
}

}  // namespace
}  // namespace brisk
