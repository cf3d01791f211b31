// `bench quality`: the per-position math against hand-computed values, and end-to-end runs on
// the golden tiny models (a model against itself must agree exactly; the counts must match the
// prompt set tokenized independently here).
#include "bench/quality_bench.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <vector>

#include "bench/workloads.h"
#include "model/model.h"
#include "model/model_tokenizer.h"
#include "model/synth.h"
#include "test_paths.h"
#include "tokenizer/jinja/chat_template.h"

namespace brisk {
namespace {

TEST(CompareLogitsTest, IdenticalRowsHaveZeroKlAndAgree) {
  const std::vector<float> z = {0.5f, -3.0f, 2.25f, 2.0f, -100.0f};
  const LogitComparison c = CompareLogits(z, z);
  EXPECT_TRUE(c.top1_match);
  EXPECT_EQ(c.kl, 0.0);
}

TEST(CompareLogitsTest, ShiftedRowsAreTheSameDistribution) {
  // softmax(z + 7) == softmax(z): KL 0 up to rounding.
  const std::vector<float> a = {1.0f, 2.0f, 3.0f};
  const std::vector<float> b = {8.0f, 9.0f, 10.0f};
  const LogitComparison c = CompareLogits(a, b);
  EXPECT_TRUE(c.top1_match);
  EXPECT_NEAR(c.kl, 0.0, 1e-12);
}

TEST(CompareLogitsTest, TwoClassCases) {
  // p = (1/2, 1/2), q = (3/4, 1/4): KL = 1/2 ln(2/3) + 1/2 ln 2 = 1/2 ln(4/3).
  const std::vector<float> uniform = {0.0f, 0.0f};
  const std::vector<float> three_to_one = {float(std::log(3.0)), 0.0f};
  LogitComparison c = CompareLogits(uniform, three_to_one);
  EXPECT_NEAR(c.kl, 0.5 * std::log(4.0 / 3.0), 1e-7);
  EXPECT_TRUE(c.top1_match);  // the tie in the reference goes to token 0, q's argmax is 0

  // p = softmax(2, 1), q = softmax(1, 2) = p reversed. With d = log p1 - log p2 = 1:
  // KL = p1 * d + p2 * (-d) = (p1 - p2) = tanh(1/2).
  c = CompareLogits(std::vector<float>{2.0f, 1.0f}, std::vector<float>{1.0f, 2.0f});
  EXPECT_NEAR(c.kl, std::tanh(0.5), 1e-12);
  EXPECT_FALSE(c.top1_match);

  // KL is not symmetric: KL(q || p) for the first pair is 3/4 ln(3/2) + 1/4 ln(1/2).
  c = CompareLogits(three_to_one, uniform);
  EXPECT_NEAR(c.kl, 0.75 * std::log(1.5) + 0.25 * std::log(0.5), 1e-7);
}

TEST(CompareLogitsTest, LargeLogitsStayFinite) {
  // exp(1000) overflows a double; the max-shifted log-sum-exp does not.
  // p ~ (1, e^-1000): KL(p || q) with q = softmax(0, 1000) ~ 1000 nats.
  const LogitComparison c =
      CompareLogits(std::vector<float>{1000.0f, 0.0f}, std::vector<float>{0.0f, 1000.0f});
  EXPECT_FALSE(c.top1_match);
  EXPECT_NEAR(c.kl, 1000.0, 1e-6);
}

TEST(QualityBenchTest, RejectsBadOptions) {
  QualityBenchOptions o;
  EXPECT_FALSE(RunQualityBench(o).ok());  // no reference
  o.ref = "/nonexistent/model.gguf";
  o.prompts = 0;
  EXPECT_FALSE(RunQualityBench(o).ok());
  o.prompts = 49;
  EXPECT_FALSE(RunQualityBench(o).ok());
  o.prompts = 2;
  const auto r = RunQualityBench(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("/nonexistent/model.gguf"), std::string::npos) << r.message();
}

// Token count of the first n mix prompts rendered with the model's template, worked out here
// from the tokenizer and template directly.
long long ExpectedPositions(const std::string& path, int n) {
  auto model = Model::Load(path);
  EXPECT_TRUE(model.ok());
  auto tok = TokenizerForModel(**model);
  EXPECT_TRUE(tok.ok());
  auto tmpl = jinja::ChatTemplate::Parse((*model)->chat_template());
  EXPECT_TRUE(tmpl.ok());
  auto mix = WorkloadPrompts("mix");
  EXPECT_TRUE(mix.ok());
  if (!model.ok() || !tok.ok() || !tmpl.ok() || !mix.ok()) return -1;
  long long total = 0;
  for (int i = 0; i < n; ++i) {
    nlohmann::ordered_json msgs = nlohmann::ordered_json::array();
    msgs.push_back({{"role", "system"}, {"content", (*mix)[i].system}});
    msgs.push_back({{"role", "user"}, {"content", (*mix)[i].user}});
    auto text = jinja::RenderChat(*tmpl, msgs, nullptr, true, nlohmann::ordered_json::object());
    EXPECT_TRUE(text.ok());
    if (!text.ok()) return -1;
    EXPECT_NE(text->find((*mix)[i].user), std::string::npos);
    total += static_cast<long long>(tok->Encode(*text).size());
  }
  return total;
}

TEST(QualityBenchTest, ModelAgainstItselfAgreesExactly) {
  const std::string path =
      test::FindGoldenOrData("models/tiny-untied-q4_k_m.gguf", "golden/tiny-untied-q4_k_m.gguf");
  ASSERT_FALSE(path.empty());
  QualityBenchOptions o;
  o.ref = path;
  o.models = {path};
  o.prompts = 4;
  o.threads = 2;
  o.tg = 8;
  o.reps = 1;
  auto r = RunQualityBench(o);
  ASSERT_TRUE(r.ok()) << r.message();
  const long long expected = ExpectedPositions(path, 4);
  EXPECT_GT(expected, 4 * 10);  // system + user + template markup: dozens of tokens each
  EXPECT_EQ(r->positions, expected);
  EXPECT_EQ(r->prompts, 4);
  EXPECT_TRUE(r->chat_template);
  ASSERT_EQ(r->rows.size(), 2u);
  EXPECT_TRUE(r->rows[0].is_ref);
  EXPECT_FALSE(r->rows[1].is_ref);
  for (const QualityRow& row : r->rows) {
    EXPECT_EQ(row.positions, expected);
    EXPECT_EQ(row.top1_pct, 100.0);
    EXPECT_EQ(row.mean_kl, 0.0);
    EXPECT_EQ(row.max_kl, 0.0);
    EXPECT_EQ(row.file_type, "Q4_K_M");
    EXPECT_NEAR(row.size_mib, std::filesystem::file_size(path) / 1048576.0, 1e-9);
    EXPECT_GT(row.load_ms, 0);
    EXPECT_GT(row.tokenizer_ms, 0);
    EXPECT_GT(row.decode_tok_s, 0);
  }
  const auto j = nlohmann::json::parse(r->ToJson());
  EXPECT_EQ(j["positions"], expected);
  ASSERT_EQ(j["models"].size(), 2u);
  EXPECT_EQ(j["models"][1]["top1_pct"], 100.0);
  const std::string table = r->ToTable();
  EXPECT_NE(table.find("tiny-untied-q4_k_m.gguf (ref)"), std::string::npos) << table;
  EXPECT_NE(table.find("| 100.00 |"), std::string::npos) << table;
}

TEST(QualityBenchTest, QuantizedTypesAgainstF32) {
  if (!test::HaveGolden()) GTEST_SKIP() << "golden set absent: F32 tiny model unavailable";
  const std::string ref = test::GoldenPath("models/tiny-untied-f32.gguf");
  QualityBenchOptions o;
  o.ref = ref;
  o.models = {test::GoldenPath("models/tiny-untied-q8_0.gguf"),
              test::GoldenPath("models/tiny-untied-q4_k_m.gguf"), ref};
  o.prompts = 3;
  o.threads = 2;
  o.tg = 4;
  o.reps = 1;
  auto r = RunQualityBench(o);
  ASSERT_TRUE(r.ok()) << r.message();
  const long long expected = ExpectedPositions(ref, 3);
  ASSERT_EQ(r->rows.size(), 4u);
  const std::vector<std::string> types = {"F32", "Q8_0", "Q4_K_M", "F32"};
  for (size_t k = 0; k < r->rows.size(); ++k) {
    const QualityRow& row = r->rows[k];
    SCOPED_TRACE(row.model);
    EXPECT_EQ(row.file_type, types[k]);
    EXPECT_EQ(row.positions, expected);
    EXPECT_GE(row.top1_pct, 0.0);
    EXPECT_LE(row.top1_pct, 100.0);
    EXPECT_GE(row.mean_kl, 0.0);
    EXPECT_GE(row.max_kl, row.mean_kl);
  }
  // The reference row and the reference loaded again as a model: exact agreement.
  for (size_t k : {size_t(0), size_t(3)}) {
    EXPECT_EQ(r->rows[k].top1_pct, 100.0);
    EXPECT_EQ(r->rows[k].mean_kl, 0.0);
  }
  // Quantized weights do change the logits.
  EXPECT_GT(r->rows[1].mean_kl, 0.0);
  EXPECT_GT(r->rows[2].mean_kl, 0.0);
}

TEST(QualityBenchTest, DifferentVocabulariesAreRejected) {
  const std::string golden =
      test::FindGoldenOrData("models/tiny-untied-q4_k_m.gguf", "golden/tiny-untied-q4_k_m.gguf");
  ASSERT_FALSE(golden.empty());
  // A synthetic tiny model carries the full Qwen2.5 vocabulary (151936), the golden one 2051.
  const std::string dir = test::TempDir();
  ASSERT_FALSE(dir.empty());
  const std::string synth = dir + "/synth-tiny.gguf";
  SynthOptions so;
  so.shape = "tiny";
  so.type = FileType::kQ8_0;
  so.threads = 2;
  ASSERT_TRUE(WriteSynthModel(so, synth).ok());
  QualityBenchOptions o;
  o.ref = golden;
  o.models = {synth};
  o.prompts = 1;
  o.threads = 2;
  o.tg = 2;
  o.reps = 1;
  const auto r = RunQualityBench(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("vocabulary"), std::string::npos) << r.message();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace brisk
