#include <gtest/gtest.h>

#include <cstdlib>
#include <set>

#include "net/model_catalogue.h"

namespace brisk {
namespace {

class CatalogueTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* e = std::getenv("HF_ENDPOINT");
    had_ = e != nullptr;
    if (e) saved_ = e;
    unsetenv("HF_ENDPOINT");
  }
  void TearDown() override {
    if (had_) setenv("HF_ENDPOINT", saved_.c_str(), 1);
  }
  bool had_ = false;
  std::string saved_;
};

TEST_F(CatalogueTest, OfficialQwenUrls) {
  const net::CatalogueEntry* e = net::FindInCatalogue("qwen2.5-0.5b-instruct:q4_k_m");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(net::CatalogueUrl(*e),
            "https://huggingface.co/Qwen/Qwen2.5-0.5B-Instruct-GGUF/resolve/main/"
            "qwen2.5-0.5b-instruct-q4_k_m.gguf");
  e = net::FindInCatalogue("qwen2.5-1.5b-instruct:q8_0");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(net::CatalogueUrl(*e),
            "https://huggingface.co/Qwen/Qwen2.5-1.5B-Instruct-GGUF/resolve/main/"
            "qwen2.5-1.5b-instruct-q8_0.gguf");
  e = net::FindInCatalogue("qwen2.5-0.5b-instruct:f16");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->file, "qwen2.5-0.5b-instruct-fp16.gguf");  // Qwen's spelling
}

TEST_F(CatalogueTest, DefaultTypeAliasesAndCase) {
  const net::CatalogueEntry* e = net::FindInCatalogue("qwen2.5-1.5b-instruct");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->name, "qwen2.5-1.5b-instruct:q4_k_m");
  EXPECT_EQ(net::FindInCatalogue("Qwen2.5-0.5B-Instruct:FP16"),
            net::FindInCatalogue("qwen2.5-0.5b-instruct:f16"));
  EXPECT_EQ(net::FindInCatalogue("qwen2.5-0.5b-instruct:q4_k_x"), nullptr);
  EXPECT_EQ(net::FindInCatalogue("llama"), nullptr);
  EXPECT_EQ(net::FindInCatalogue(""), nullptr);
}

TEST_F(CatalogueTest, NamesAreUniqueAndCoverBothModels) {
  std::set<std::string> names;
  for (const auto& e : net::Catalogue()) {
    EXPECT_TRUE(names.insert(e.name).second) << e.name;
    EXPECT_TRUE(e.sha256.empty() || e.sha256.size() == 64) << e.name;
  }
  EXPECT_GE(names.size(), 18u);
  EXPECT_TRUE(names.count("qwen2.5-0.5b-instruct:q8_0"));
  EXPECT_TRUE(names.count("qwen2.5-1.5b-instruct:f16"));
}

TEST_F(CatalogueTest, HfEndpointOverridesTheHub) {
  setenv("HF_ENDPOINT", "http://127.0.0.1:8080/", 1);
  const net::CatalogueEntry* e = net::FindInCatalogue("qwen2.5-0.5b-instruct:q8_0");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(net::CatalogueUrl(*e),
            "http://127.0.0.1:8080/Qwen/Qwen2.5-0.5B-Instruct-GGUF/resolve/main/"
            "qwen2.5-0.5b-instruct-q8_0.gguf");
  unsetenv("HF_ENDPOINT");
}

}  // namespace
}  // namespace brisk
