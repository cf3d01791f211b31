// Forward-pass properties that need no golden numbers: incremental decoding equals one prefill,
// chunking does not change results, bad inputs are refused.
#include "model/forward.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <numeric>

#include "test_paths.h"

namespace brisk {
namespace {

std::string TinyModel() {
  return test::FindGoldenOrData("models/tiny-untied-q4_k_m.gguf", "golden/tiny-untied-q4_k_m.gguf");
}

double MaxRelDiff(const float* a, const float* b, int n) {
  double num = 0, den = 0;
  for (int i = 0; i < n; ++i) {
    num += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
    den += double(b[i]) * b[i];
  }
  return std::sqrt(num / den);
}

std::vector<int32_t> Tokens(int n, int vocab) {
  std::vector<int32_t> t(n);
  for (int i = 0; i < n; ++i) t[i] = int32_t((i * 7919 + 13) % vocab);
  return t;
}

class ForwardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto m = Model::Load(TinyModel());
    ASSERT_TRUE(m.ok()) << m.message();
    model_ = std::move(m).value();
  }
  std::unique_ptr<Model> model_;
  ThreadPool pool_{2};
};

TEST_F(ForwardTest, PrefillThenDecodeEqualsOnePrefill) {
  const ModelConfig& c = model_->config();
  const int N = 20, K = 6;
  const auto toks = Tokens(N + K, c.n_vocab);

  // One prefill of N + K tokens, logits at every position.
  ReferenceForward full(*model_, pool_, 64);
  KvCache kv_full(c, N + K);
  std::vector<int32_t> rows(N + K);
  std::iota(rows.begin(), rows.end(), 0);
  std::vector<float> want(size_t(N + K) * c.n_vocab);
  ASSERT_TRUE(full.Run(toks, 0, kv_full, rows, want.data()).ok());

  // Prefill N, then K single-token decode steps.
  ReferenceForward inc(*model_, pool_, 64);
  KvCache kv(c, N + K);
  std::vector<float> got(size_t(c.n_vocab));
  const int32_t last = N - 1;
  ASSERT_TRUE(inc.Run(std::span(toks.data(), N), 0, kv, std::span(&last, 1), got.data()).ok());
  EXPECT_LE(MaxRelDiff(got.data(), &want[size_t(N - 1) * c.n_vocab], c.n_vocab), 1e-5);
  for (int k = 0; k < K; ++k) {
    const int32_t row0 = 0;
    ASSERT_TRUE(
        inc.Run(std::span(&toks[N + k], 1), N + k, kv, std::span(&row0, 1), got.data()).ok());
    EXPECT_LE(MaxRelDiff(got.data(), &want[size_t(N + k) * c.n_vocab], c.n_vocab), 1e-5)
        << "decode step " << k;
  }
}

TEST_F(ForwardTest, ChunkSizeDoesNotChangeLogits) {
  const ModelConfig& c = model_->config();
  const int N = 37;
  const auto toks = Tokens(N, c.n_vocab);
  std::vector<int32_t> rows = {0, 5, 16, 17, 36};
  std::vector<float> a(rows.size() * c.n_vocab), b(rows.size() * c.n_vocab);
  ReferenceForward big(*model_, pool_, 64), small(*model_, pool_, 5);
  KvCache kva(c, N), kvb(c, N);
  ASSERT_TRUE(big.Run(toks, 0, kva, rows, a.data()).ok());
  ASSERT_TRUE(small.Run(toks, 0, kvb, rows, b.data()).ok());
  // Each output element is reduced in the same order whatever the chunking: bit-identical.
  EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(float)));
}

TEST_F(ForwardTest, ThreadCountDoesNotChangeLogits) {
  const ModelConfig& c = model_->config();
  const auto toks = Tokens(9, c.n_vocab);
  const int32_t row = 8;
  std::vector<float> a(c.n_vocab), b(c.n_vocab);
  ThreadPool one(1);
  ReferenceForward f1(*model_, one, 16), f2(*model_, pool_, 16);
  KvCache kva(c, 9), kvb(c, 9);
  ASSERT_TRUE(f1.Run(toks, 0, kva, std::span(&row, 1), a.data()).ok());
  ASSERT_TRUE(f2.Run(toks, 0, kvb, std::span(&row, 1), b.data()).ok());
  EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(float)));
}

TEST_F(ForwardTest, RejectsBadInput) {
  const ModelConfig& c = model_->config();
  ReferenceForward f(*model_, pool_, 8);
  KvCache kv(c, 4);
  std::vector<float> out(c.n_vocab * 4);
  const int32_t row = 0;
  std::vector<int32_t> bad = {1, c.n_vocab};
  Status st = f.Run(bad, 0, kv, std::span(&row, 1), out.data());
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("outside the vocabulary"), std::string::npos) << st.message();
  std::vector<int32_t> neg = {-1};
  EXPECT_FALSE(f.Run(neg, 0, kv, std::span(&row, 1), out.data()).ok());
  std::vector<int32_t> five = {1, 2, 3, 4, 5};
  st = f.Run(five, 0, kv, std::span(&row, 1), out.data());
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("exceed the context limit"), std::string::npos) << st.message();
  std::vector<int32_t> two = {1, 2};
  std::vector<int32_t> rows = {1, 0};
  EXPECT_FALSE(f.Run(two, 0, kv, rows, out.data()).ok());
  std::vector<int32_t> past = {2};
  EXPECT_FALSE(f.Run(two, 0, kv, past, out.data()).ok());
}

}  // namespace
}  // namespace brisk
