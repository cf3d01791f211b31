// The engine tests' model: the golden tiny Qwen2 (q4_k_m) with its tokenizer, and prompts of
// plain tokens made from a length and a salt.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "model/model.h"
#include "model/model_tokenizer.h"
#include "test_paths.h"
#include "tokenizer/tokenizer.h"

namespace brisk::test {

class TinyModelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto m = Model::Load(
        FindGoldenOrData("models/tiny-untied-q4_k_m.gguf", "golden/tiny-untied-q4_k_m.gguf"));
    ASSERT_TRUE(m.ok()) << m.message();
    model_ = std::move(m).value();
    auto t = TokenizerForModel(*model_);
    ASSERT_TRUE(t.ok()) << t.message();
    tok_ = std::make_unique<Tokenizer>(std::move(t).value());
  }
  std::vector<int32_t> Prompt(int n, int salt) const {
    std::vector<int32_t> t(n);
    for (int i = 0; i < n; ++i) t[i] = int32_t((i * 131 + salt * 977 + 7) % 2000);
    return t;
  }
  std::unique_ptr<Model> model_;
  std::unique_ptr<Tokenizer> tok_;
};

}  // namespace brisk::test
