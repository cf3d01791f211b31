// Malformed Hugging Face directories: each broken config.json, index, shard or tensor is refused
// with a message naming the file and the problem (and no crash under ASan + UBSan).
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>

#include "hf_test_util.h"
#include "model/hf_loader.h"
#include "test_paths.h"

namespace brisk {
namespace {

using hf_test::HfTensor;
using hf_test::WriteHfDir;
using hf_test::WriteOptions;
using nlohmann::json;

class HfErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    config_ = hf_test::SmallConfig();
    tensors_ = hf_test::RandomTensors(config_);
    config_json_ = hf_test::ConfigJson(config_);
    dirs_.push_back(std::make_unique<hf_test::ScopedTempDir>());
    dir_ = dirs_.back()->path;
  }
  // Writes the (possibly edited) directory and returns the load error, or "<loaded>".
  std::string Error(const WriteOptions& o = {}) {
    WriteHfDir(dir_, config_json_, tensors_, o);
    return LoadError();
  }
  std::string LoadError() const {
    auto m = Model::Load(dir_);
    return m.ok() ? std::string("<loaded>") : m.message();
  }
  std::string Config(const std::function<void(json&)>& edit) {
    edit(config_json_);
    return Error();
  }
  HfTensor* Tensor(const std::string& name) {
    for (auto& t : tensors_)
      if (t.name == name) return &t;
    ADD_FAILURE() << "no tensor " << name;
    return &tensors_[0];
  }

  ModelConfig config_;
  std::vector<HfTensor> tensors_;
  json config_json_;
  std::string dir_;
  std::vector<std::unique_ptr<hf_test::ScopedTempDir>> dirs_;  // removed after the test
};

#define EXPECT_HAS(haystack, needle)                                    \
  do {                                                                  \
    const std::string h_ = (haystack);                                  \
    EXPECT_NE(h_.find(needle), std::string::npos) << "message: " << h_; \
  } while (0)

TEST_F(HfErrors, UnmodifiedDirectoryLoads) { EXPECT_EQ(Error(), "<loaded>"); }

TEST_F(HfErrors, NotAModelDirectory) { EXPECT_HAS(LoadError(), "no config.json"); }

TEST_F(HfErrors, ConfigInvalidJson) {
  WriteHfDir(dir_, config_json_, tensors_);
  hf_test::WriteText(dir_ + "/config.json", "{\"hidden_size\": 32,");
  const std::string e = LoadError();
  EXPECT_HAS(e, "config.json: invalid JSON");
}

TEST_F(HfErrors, ConfigNotAnObject) {
  WriteHfDir(dir_, config_json_, tensors_);
  hf_test::WriteText(dir_ + "/config.json", "[1, 2]");
  EXPECT_HAS(LoadError(), "config.json: not a JSON object");
}

TEST_F(HfErrors, ConfigMissingHiddenSize) {
  const std::string e = Config([](json& j) { j.erase("hidden_size"); });
  EXPECT_HAS(e, "config.json");
  EXPECT_HAS(e, "missing required field 'hidden_size'");
}

TEST_F(HfErrors, ConfigWrongTypes) {
  EXPECT_HAS(Config([](json& j) { j["hidden_size"] = "32"; }),
             "'hidden_size' must be an integer, found string \"32\"");
  SetUp();
  EXPECT_HAS(Config([](json& j) { j["num_hidden_layers"] = 2.5; }),
             "'num_hidden_layers' must be an integer");
  SetUp();
  EXPECT_HAS(Config([](json& j) { j["rope_theta"] = "big"; }), "'rope_theta' must be a number");
  SetUp();
  EXPECT_HAS(Config([](json& j) { j["tie_word_embeddings"] = 1; }),
             "'tie_word_embeddings' must be true or false");
  SetUp();
  EXPECT_HAS(Config([](json& j) { j["architectures"] = "Qwen2ForCausalLM"; }),
             "'architectures' must be a list of strings");
  SetUp();
  EXPECT_HAS(Config([](json& j) { j["rope_scaling"] = 4; }), "'rope_scaling' must be an object");
}

TEST_F(HfErrors, ConfigUnsupportedArchitecture) {
  const std::string e = Config([](json& j) { j["architectures"] = {"LlamaForCausalLM"}; });
  EXPECT_HAS(e, "unsupported architecture 'LlamaForCausalLM'");
  EXPECT_HAS(e, "Qwen2ForCausalLM, Qwen3ForCausalLM");
  SetUp();
  EXPECT_HAS(Config([](json& j) {
               j.erase("architectures");
               j["model_type"] = "llama";
             }),
             "unsupported model_type 'llama'");
  SetUp();
  EXPECT_HAS(Config([](json& j) {
               j.erase("architectures");
               j.erase("model_type");
             }),
             "cannot tell the architecture");
}

TEST_F(HfErrors, ConfigModelTypeAloneIsEnough) {
  EXPECT_EQ(Config([](json& j) { j.erase("architectures"); }), "<loaded>");
}

TEST_F(HfErrors, ConfigBadValues) {
  EXPECT_HAS(Config([](json& j) { j["num_hidden_layers"] = 0; }),
             "'num_hidden_layers' = 0 is out of range");
  SetUp();
  EXPECT_HAS(Config([](json& j) { j["hidden_size"] = -5; }), "'hidden_size' = -5 is out of range");
  SetUp();
  EXPECT_HAS(Config([](json& j) { j["num_key_value_heads"] = 3; }),
             "is not a multiple of num_key_value_heads (3)");
  SetUp();
  EXPECT_HAS(Config([](json& j) { j["rms_norm_eps"] = 0; }), "must be positive");
  SetUp();
  EXPECT_HAS(Config([](json& j) { j["hidden_act"] = "gelu"; }), "hidden_act 'gelu'");
  SetUp();
  EXPECT_HAS(Config([](json& j) {
               j["rope_scaling"] = {{"type", "yarn"}, {"factor", 4.0}};
             }),
             "RoPE scaling");
  SetUp();
  EXPECT_HAS(Config([](json& j) { j["use_sliding_window"] = true; }), "use_sliding_window");
  SetUp();
  EXPECT_EQ(Config([](json& j) { j["rope_scaling"] = {{"rope_type", "default"}}; }), "<loaded>");
}

TEST_F(HfErrors, ConfigShapesDisagreeWithTensors) {
  const std::string e = Config([](json& j) { j["intermediate_size"] = 64; });
  EXPECT_HAS(e, "tensor 'model.layers.0.mlp.gate_proj.weight' in model-00001-of-00002.safetensors");
  EXPECT_HAS(e, "has shape [48, 32], expected [64, 32]");
}

TEST_F(HfErrors, MissingTensor) {
  tensors_.erase(tensors_.begin() +
                 (Tensor("model.layers.0.self_attn.k_proj.weight") - tensors_.data()));
  const std::string e = Error();
  EXPECT_HAS(e, "missing tensor 'model.layers.0.self_attn.k_proj.weight'");
}

TEST_F(HfErrors, WrongDtype) {
  HfTensor* t = Tensor("model.layers.1.self_attn.v_proj.bias");
  t->dtype = safetensors::Dtype::kI32;
  EXPECT_HAS(Error(),
             "'model.layers.1.self_attn.v_proj.bias' in model-00002-of-00002.safetensors "
             "has dtype I32; brisk loads F32, F16 and BF16");
}

TEST_F(HfErrors, ShardMissingFromIndex) {
  WriteHfDir(dir_, config_json_, tensors_);
  std::remove((dir_ + "/model-00002-of-00002.safetensors").c_str());
  const std::string e = LoadError();
  EXPECT_HAS(e, "model.safetensors.index.json: shard 'model-00002-of-00002.safetensors'");
  EXPECT_HAS(e, "is missing from " + dir_);
}

TEST_F(HfErrors, IndexNamesTheWrongShard) {
  WriteHfDir(dir_, config_json_, tensors_);
  auto idx = json::parse(hf_test::ReadFileForTest(dir_ + "/model.safetensors.index.json"));
  idx["weight_map"]["model.norm.weight"] = "model-00002-of-00002.safetensors";
  hf_test::WriteText(dir_ + "/model.safetensors.index.json", idx.dump());
  EXPECT_HAS(LoadError(),
             "tensor 'model.norm.weight' is listed in shard 'model-00002-of-00002.safetensors', "
             "but that file does not contain it");
}

TEST_F(HfErrors, IndexMalformed) {
  WriteHfDir(dir_, config_json_, tensors_);
  const std::string p = dir_ + "/model.safetensors.index.json";
  hf_test::WriteText(p, "{\"weight_map\": ");
  EXPECT_HAS(LoadError(), "index.json: invalid JSON");
  hf_test::WriteText(p, R"({"metadata": {}})");
  EXPECT_HAS(LoadError(), "missing object 'weight_map'");
  hf_test::WriteText(p, R"({"weight_map": {"model.norm.weight": "../../etc/passwd"}})");
  EXPECT_HAS(LoadError(), "which is not a plain file name");
  hf_test::WriteText(p, R"({"weight_map": {"model.norm.weight": 3}})");
  EXPECT_HAS(LoadError(), "must be a file name string");
}

TEST_F(HfErrors, CorruptShardHeader) {
  WriteHfDir(dir_, config_json_, tensors_);
  const std::string p = dir_ + "/model-00001-of-00002.safetensors";
  std::string bytes = hf_test::ReadFileForTest(p);
  bytes[8 + 3] = '\x01';  // inside the JSON header
  hf_test::WriteText(p, bytes);
  const std::string e = LoadError();
  EXPECT_HAS(e, p + ": invalid JSON header");
  hf_test::WriteText(p, bytes.substr(0, 4));
  EXPECT_HAS(LoadError(), "too short");
}

TEST_F(HfErrors, DuplicateTensorAcrossUnindexedShards) {
  WriteHfDir(dir_, config_json_, tensors_);
  std::remove((dir_ + "/model.safetensors.index.json").c_str());
  // Without an index every *.safetensors file is read: fine while names are distinct.
  EXPECT_EQ(LoadError(), "<loaded>");
  std::filesystem::copy_file(dir_ + "/model-00001-of-00002.safetensors",
                             dir_ + "/model-00003-of-00002.safetensors");
  EXPECT_HAS(LoadError(), "appears in both");
}

TEST_F(HfErrors, NoWeights) {
  WriteHfDir(dir_, config_json_, tensors_);
  std::remove((dir_ + "/model.safetensors.index.json").c_str());
  std::remove((dir_ + "/model-00001-of-00002.safetensors").c_str());
  std::remove((dir_ + "/model-00002-of-00002.safetensors").c_str());
  EXPECT_HAS(LoadError(), "no weights found");
}

TEST_F(HfErrors, TokenizerConfigMalformed) {
  WriteHfDir(dir_, config_json_, tensors_);
  hf_test::WriteText(dir_ + "/tokenizer_config.json", R"({"chat_template": 5})");
  EXPECT_HAS(LoadError(), "tokenizer_config.json: 'chat_template' must be a string or a list");
  hf_test::WriteText(dir_ + "/tokenizer_config.json", R"({"chat_template": [{"name": 1}]})");
  EXPECT_HAS(LoadError(), "need string 'name' and 'template'");
}

TEST_F(HfErrors, Qwen3Specifics) {
  config_ = hf_test::SmallConfig(true);
  tensors_ = hf_test::RandomTensors(config_);
  config_json_ = hf_test::ConfigJson(config_);
  EXPECT_EQ(Error(), "<loaded>");
  // head_dim defaults to 128 for Qwen3 (transformers' default), which these tensors are not.
  EXPECT_HAS(Config([](json& j) { j.erase("head_dim"); }), "expected [512, 32]");
  SetUp();
  config_ = hf_test::SmallConfig(true);
  tensors_ = hf_test::RandomTensors(config_);
  config_json_ = hf_test::ConfigJson(config_);
  EXPECT_HAS(Config([](json& j) { j["attention_bias"] = true; }), "attention_bias");
}

}  // namespace
}  // namespace brisk
