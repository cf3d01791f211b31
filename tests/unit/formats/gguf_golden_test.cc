// Every golden model (llama.cpp-written GGUF files) opens, with the expected architecture, a
// sensible tensor list and every tensor's data inside the file. Skips with a notice when the
// golden directory is absent.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "gguf_test_util.h"

namespace brisk::gguf_test {
namespace {

namespace fs = std::filesystem;
using gguf::File;

std::vector<std::string> GoldenModels() {
  std::vector<std::string> out;
  const std::string dir = brisk::test::GoldenPath("models");
  if (dir.empty()) return out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".gguf") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

TEST(GgufGolden, EveryModelOpens) {
  if (!brisk::test::HaveGolden()) GTEST_SKIP() << "golden directory absent: skipping the 31 models";
  const std::vector<std::string> models = GoldenModels();
  EXPECT_EQ(models.size(), 31u);
  for (const std::string& path : models) {
    const std::string name = fs::path(path).filename().string();
    SCOPED_TRACE(name);
    auto f = File::Open(path);
    ASSERT_TRUE(f.ok()) << f.message();
    EXPECT_TRUE(f->version() == 2 || f->version() == 3) << f->version();

    const bool qwen3 = name.find("qwen3") != std::string::npos;
    const bool untied = name.find("untied") != std::string::npos;
    auto arch = f->GetString("general.architecture");
    ASSERT_TRUE(arch.ok()) << arch.message();
    EXPECT_EQ(*arch, qwen3 ? "qwen3" : "qwen2");

    // Tensor count from the layer count: per layer 4 attention weights + 2 norms + 3 FFN weights,
    // plus Q/K/V biases (Qwen2) or Q/K norms (Qwen3); plus embedding, output norm, and the
    // output matrix when untied.
    auto layers = f->GetUInt(*arch + ".block_count");
    ASSERT_TRUE(layers.ok()) << layers.message();
    const size_t per_layer = qwen3 ? 11 : 12;
    const size_t expected = 2 + (untied ? 1 : 0) + per_layer * size_t(*layers);
    EXPECT_GT(f->tensors().size(), 0u);
    EXPECT_EQ(f->tensors().size(), expected);

    // Every tensor lies inside the file, aligned, without overlap.
    ASSERT_FALSE(f->tensors().empty());
    const uint8_t* base = f->tensors()[0].data - f->data_offset() - f->tensors()[0].offset;
    std::vector<std::pair<uint64_t, uint64_t>> ranges;
    for (const gguf::TensorInfo& t : f->tensors()) {
      SCOPED_TRACE(t.name);
      EXPECT_EQ(t.offset % f->alignment(), 0u);
      EXPECT_GT(t.nbytes, 0u);
      EXPECT_EQ(t.nbytes, RowBytes(t.type, t.ne[0]) * uint64_t(t.rows()));
      EXPECT_LE(f->data_offset() + t.offset + t.nbytes, f->file_size());
      EXPECT_EQ(t.data, base + f->data_offset() + t.offset);
      ranges.emplace_back(t.offset, t.offset + t.nbytes);
    }
    std::sort(ranges.begin(), ranges.end());
    for (size_t k = 1; k < ranges.size(); ++k) EXPECT_LE(ranges[k - 1].second, ranges[k].first);

    // The named tensors the model layer needs, with the embedding matching the vocabulary.
    const gguf::TensorInfo* embd = f->FindTensor("token_embd.weight");
    ASSERT_NE(embd, nullptr);
    EXPECT_NE(f->FindTensor("output_norm.weight"), nullptr);
    EXPECT_NE(f->FindTensor("blk.0.attn_q.weight"), nullptr);
    EXPECT_EQ(f->FindTensor("output.weight") != nullptr, untied);
    EXPECT_EQ(f->FindTensor("blk.0.attn_q.bias") != nullptr, !qwen3);
    EXPECT_EQ(f->FindTensor("blk.0.attn_q_norm.weight") != nullptr, qwen3);
    auto tokens = f->GetStringArray("tokenizer.ggml.tokens");
    ASSERT_TRUE(tokens.ok()) << tokens.message();
    EXPECT_EQ(tokens->size(), 2051u);
    EXPECT_EQ(embd->ne[1], int64_t(tokens->size()));
    EXPECT_EQ(embd->ne[0], *f->GetInt(*arch + ".embedding_length"));
    EXPECT_EQ((*tokens)[2050], "<|im_end|>");
    EXPECT_TRUE(f->GetStringArray("tokenizer.ggml.merges").ok());
    EXPECT_TRUE(f->GetString("tokenizer.chat_template").ok());
  }
}

// The vocabulary-only files (no tensors) open too, including a 151936-entry token array.
TEST(GgufGolden, VocabularyFilesOpen) {
  if (!brisk::test::HaveGolden()) GTEST_SKIP() << "golden directory absent";
  const std::string path = brisk::test::GoldenPath("tokenizer/qwen2.5-vocab.gguf");
  if (!fs::exists(path)) GTEST_SKIP() << path << " absent";
  const auto t0 = std::chrono::steady_clock::now();
  auto f = File::Open(path);
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(f.ok()) << f.message();
  std::printf("[ info ] opened %s (%zu bytes) in %.2f ms\n", path.c_str(), f->file_size(), ms);
  EXPECT_TRUE(f->tensors().empty());
  auto tokens = f->GetStringArray("tokenizer.ggml.tokens");
  ASSERT_TRUE(tokens.ok()) << tokens.message();
  EXPECT_EQ(tokens->size(), 151936u);
  EXPECT_EQ(f->GetStringArray("tokenizer.ggml.merges")->size(), 151387u);
  EXPECT_EQ(f->GetIntArray("tokenizer.ggml.token_type")->size(), 151936u);
  EXPECT_EQ(*f->GetUInt("tokenizer.ggml.eos_token_id"), 151645u);
  EXPECT_EQ((*tokens)[151645], "<|im_end|>");

  const std::string old = brisk::test::GoldenPath("tokenizer/ggml-vocab-qwen2.gguf");
  if (fs::exists(old)) {
    auto g = File::Open(old);
    ASSERT_TRUE(g.ok()) << g.message();
    EXPECT_GT(g->GetStringArray("tokenizer.ggml.tokens")->size(), 151000u);
  }
}

// The committed subset (tests/data) or the golden model, whichever exists: the file the rest
// of the suite leans on must open.
TEST(GgufGolden, Q4KmModelOpens) {
  const std::string path =
      brisk::test::FindGoldenOrData("models/tiny-q4_k_m.gguf", "tiny-q4_k_m.gguf");
  if (path.empty()) GTEST_SKIP() << "neither golden nor tests/data has tiny-q4_k_m.gguf";
  auto f = File::Open(path);
  ASSERT_TRUE(f.ok()) << f.message();
  // A "Q4_K_M" file mixes types.
  std::vector<GgmlType> types;
  for (const gguf::TensorInfo& t : f->tensors())
    if (std::find(types.begin(), types.end(), t.type) == types.end()) types.push_back(t.type);
  EXPECT_GE(types.size(), 3u);
}

}  // namespace
}  // namespace brisk::gguf_test
