// Model-level validation: architecture, required keys and tensor shapes, each refused with a
// message that names the problem.
#include <gtest/gtest.h>

#include <functional>

#include "formats/gguf_writer.h"
#include "model/model.h"
#include "test_paths.h"

namespace brisk {
namespace {

// Copies a tiny model, letting `edit_kv` replace or drop keys and `skip_tensor` drop tensors.
std::string RewriteModel(const std::string& name,
                         const std::function<bool(const std::string&, gguf::Writer&)>& edit_kv,
                         const std::function<bool(const std::string&)>& skip_tensor = nullptr) {
  auto src = gguf::File::Open(
      test::FindGoldenOrData("models/tiny-untied-q4_k_m.gguf", "golden/tiny-untied-q4_k_m.gguf"));
  EXPECT_TRUE(src.ok()) << src.message();
  gguf::Writer w;
  for (const auto& [key, value] : src->metadata())
    if (!edit_kv(key, w)) w.SetRaw(key, value);
  for (const auto& t : src->tensors()) {
    if (skip_tensor && skip_tensor(t.name)) continue;
    std::vector<int64_t> dims(t.ne, t.ne + t.n_dims);
    w.AddTensor(t.name, t.type, dims, t.data, t.nbytes);
  }
  const std::string path = test::TempDir() + "/" + name + ".gguf";
  EXPECT_TRUE(w.Write(path).ok());
  return path;
}

std::string LoadError(const std::string& path) {
  auto m = Model::Load(path);
  return m.ok() ? std::string("<loaded>") : m.message();
}

TEST(ModelLoad, UnmodifiedCopyLoads) {
  auto path = RewriteModel("copy", [](const std::string&, gguf::Writer&) { return false; });
  EXPECT_EQ(LoadError(path), "<loaded>");
}

TEST(ModelLoad, UnsupportedArchitectureListsSupportedOnes) {
  auto path = RewriteModel("llama", [](const std::string& k, gguf::Writer& w) {
    if (k != "general.architecture") return false;
    w.SetString(k, "llama");
    return true;
  });
  std::string e = LoadError(path);
  EXPECT_NE(e.find("unsupported architecture 'llama'"), std::string::npos) << e;
  EXPECT_NE(e.find("qwen2, qwen3"), std::string::npos) << e;
}

TEST(ModelLoad, MissingRequiredKey) {
  auto path = RewriteModel("nokey", [](const std::string& k, gguf::Writer&) {
    return k == "qwen2.block_count";  // dropped
  });
  std::string e = LoadError(path);
  EXPECT_NE(e.find("missing required metadata key 'qwen2.block_count'"), std::string::npos) << e;
}

TEST(ModelLoad, WrongKeyType) {
  auto path = RewriteModel("wrongtype", [](const std::string& k, gguf::Writer& w) {
    if (k != "qwen2.embedding_length") return false;
    w.SetString(k, "256");
    return true;
  });
  std::string e = LoadError(path);
  EXPECT_NE(e.find("should be an integer"), std::string::npos) << e;
}

TEST(ModelLoad, ShapeThatDoesNotMatchArchitecture) {
  // Claim a larger feed-forward size than the tensors have.
  auto path = RewriteModel("shape", [](const std::string& k, gguf::Writer& w) {
    if (k != "qwen2.feed_forward_length") return false;
    w.SetU32(k, 1024);
    return true;
  });
  std::string e = LoadError(path);
  EXPECT_NE(e.find("blk.0.ffn_gate.weight' has shape"), std::string::npos) << e;
  EXPECT_NE(e.find("expected"), std::string::npos) << e;
}

TEST(ModelLoad, HeadCountNotDividingKvHeads) {
  auto path = RewriteModel("heads", [](const std::string& k, gguf::Writer& w) {
    if (k != "qwen2.attention.head_count_kv") return false;
    w.SetU32(k, 3);
    return true;
  });
  std::string e = LoadError(path);
  EXPECT_NE(e.find("not a multiple of head_count_kv"), std::string::npos) << e;
}

TEST(ModelLoad, MissingTensor) {
  auto path = RewriteModel(
      "notensor", [](const std::string&, gguf::Writer&) { return false; },
      [](const std::string& n) { return n == "blk.1.attn_v.bias"; });
  std::string e = LoadError(path);
  EXPECT_NE(e.find("missing tensor 'blk.1.attn_v.bias'"), std::string::npos) << e;
}

TEST(ModelLoad, ZeroLayersRejected) {
  auto path = RewriteModel("zero", [](const std::string& k, gguf::Writer& w) {
    if (k != "qwen2.block_count") return false;
    w.SetU32(k, 0);
    return true;
  });
  std::string e = LoadError(path);
  EXPECT_NE(e.find("out of range"), std::string::npos) << e;
}

}  // namespace
}  // namespace brisk
