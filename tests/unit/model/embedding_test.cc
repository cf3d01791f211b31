// Pooling metadata and the embedding / rerank math (docs/embeddings.md): the synthetic embedding
// model and reranker declare their pooling, the reranker's cls.output.weight is the lm_head's
// yes/no rows, RerankHead's logits are the reference forward's, and PoolEmbedding truncates then
// L2-normalises.
#include "model/embedding.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "model/forward.h"
#include "model/model_tokenizer.h"
#include "model/synth.h"
#include "test_paths.h"

namespace brisk {
namespace {

std::string SynthPath(const std::string& shape, std::optional<Pooling> pooling = std::nullopt) {
  SynthOptions o;
  o.shape = shape;
  o.type = FileType::kF32;
  o.pooling = pooling;
  o.threads = 2;
  const std::string path =
      test::TempDir() + "/" + shape + (pooling ? PoolingName(*pooling) : "") + ".gguf";
  const Status st = WriteSynthModel(o, path);
  EXPECT_TRUE(st.ok()) << st.message();
  return path;
}

TEST(PoolEmbedding, TruncatesThenNormalises) {
  const std::vector<float> h = {3, 4, 12, -84};
  const std::vector<float> all = PoolEmbedding(h);
  ASSERT_EQ(all.size(), 4u);
  // |h| = sqrt(9 + 16 + 144 + 7056) = 85.
  EXPECT_FLOAT_EQ(all[0], 3.0f / 85);
  EXPECT_FLOAT_EQ(all[3], -84.0f / 85);
  const std::vector<float> two = PoolEmbedding(h, 2);  // the first two, |(3, 4)| = 5
  ASSERT_EQ(two.size(), 2u);
  EXPECT_FLOAT_EQ(two[0], 0.6f);
  EXPECT_FLOAT_EQ(two[1], 0.8f);
  EXPECT_EQ(PoolEmbedding(h, 9).size(), 4u);
  const std::vector<float> zero = PoolEmbedding(std::vector<float>{0, 0, 0});
  EXPECT_EQ(zero, (std::vector<float>{0, 0, 0}));
}

TEST(PoolingMetadata, SynthShapesDeclareTheirPooling) {
  auto emb = Model::Load(SynthPath("qwen3-embedding-tiny"));
  ASSERT_TRUE(emb.ok()) << emb.message();
  EXPECT_EQ((*emb)->config().pooling, Pooling::kLast);
  EXPECT_EQ((*emb)->config().arch, Arch::kQwen3);
  EXPECT_EQ((*emb)->config().head_dim, 128);
  EXPECT_FALSE((*emb)->weights().cls_output.present());
  auto chat = Model::Load(SynthPath("qwen3-embedding-tiny", Pooling::kNone));
  ASSERT_TRUE(chat.ok()) << chat.message();
  EXPECT_EQ((*chat)->config().pooling, Pooling::kNone);
  EXPECT_EQ((*chat)->gguf()->Find("qwen3.pooling_type"), nullptr);
}

TEST(PoolingMetadata, NamesParseAndMeanIsRefusedByName) {
  EXPECT_EQ(*ParsePooling("last"), Pooling::kLast);
  EXPECT_EQ(*ParsePooling("rank"), Pooling::kRank);
  EXPECT_EQ(*ParsePooling("none"), Pooling::kNone);
  auto mean = ParsePooling("mean");
  ASSERT_FALSE(mean.ok());
  EXPECT_EQ(mean.status().code(), StatusCode::kUnimplemented);
  EXPECT_FALSE(ParsePooling("avg").ok());
}

TEST(RerankHead, ClsRowsAreTheLmHeadRowsOfYesAndNo) {
  auto model = Model::Load(SynthPath("qwen3-reranker-tiny"));
  ASSERT_TRUE(model.ok()) << model.message();
  const Model& m = **model;
  EXPECT_EQ(m.config().pooling, Pooling::kRank);
  auto tok = TokenizerForModel(m);
  ASSERT_TRUE(tok.ok()) << tok.message();
  const WeightTensor& cls = m.weights().cls_output;
  ASSERT_TRUE(cls.present());
  ASSERT_EQ(cls.rows, 2);
  const int32_t yes = tok->TokenToId("yes"), no = tok->TokenToId("no");
  ASSERT_GE(yes, 0);
  ASSERT_GE(no, 0);
  EXPECT_EQ(std::memcmp(cls.row(0), m.weights().output.row(yes), cls.row_bytes()), 0);
  EXPECT_EQ(std::memcmp(cls.row(1), m.weights().output.row(no), cls.row_bytes()), 0);
}

// The head's two logits are the reference forward's lm_head logits of "yes" and "no", with the
// cls rows (reranker file) and with the lm_head rows (embedding file, no cls tensor); and the
// reference's hidden output is the state those logits come from.
TEST(RerankHead, LogitsAreTheReferenceLogits) {
  for (const char* shape : {"qwen3-reranker-tiny", "qwen3-embedding-tiny"}) {
    SCOPED_TRACE(shape);
    auto model = Model::Load(SynthPath(shape));
    ASSERT_TRUE(model.ok()) << model.message();
    const Model& m = **model;
    auto tok = TokenizerForModel(m);
    ASSERT_TRUE(tok.ok());
    auto head = RerankHead::Create(m, *tok);
    ASSERT_TRUE(head.ok()) << head.message();
    const ModelConfig& c = m.config();
    ThreadPool pool(2);
    ReferenceForward fwd(m, pool, 64);
    KvCache kv(c, 64);
    const std::vector<int32_t> toks = tok->Encode("Is the sky blue? yes or no");
    const std::vector<int32_t> rows = {int32_t(toks.size()) - 1};
    std::vector<float> logits(size_t(c.n_vocab)), hidden(size_t(c.n_embd));
    ASSERT_TRUE(fwd.Run(toks, 0, kv, rows, logits.data(), hidden.data()).ok());
    const double yes = head->YesLogit(hidden), no = head->NoLogit(hidden);
    EXPECT_NEAR(yes, logits[size_t(head->yes_id())], 1e-3 * (1 + std::fabs(yes)));
    EXPECT_NEAR(no, logits[size_t(head->no_id())], 1e-3 * (1 + std::fabs(no)));
    EXPECT_NEAR(head->Score(hidden), 1 / (1 + std::exp(no - yes)), 1e-12);
    EXPECT_NE(yes, no);
  }
}

}  // namespace
}  // namespace brisk
