// Issue 30 acceptance for the pooling routes, through the real route and engine: the tiny
// synthetic Qwen3 embedding model (f32, `brisk synth --shape qwen3-embedding-tiny`) embeds 50
// varied texts in one /v1/embeddings request, and every served embedding has cosine >= 0.9999
// with the float reference: the last token's final-normed hidden state from ReferenceForward
// (whose logits the golden tests check against float64), L2-normalised. `dimensions` truncates
// then renormalises, base64 carries the same floats, and /v1/rerank on the tiny reranker orders
// documents as the reference's P(yes) does.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <nlohmann/json.hpp>

#include "model/embedding.h"
#include "model/forward.h"
#include "model/model_tokenizer.h"
#include "model/synth.h"
#include "server/api_server.h"
#include "server/pooling_prompts.h"
#include "test_paths.h"

namespace brisk::server {
namespace {

using Json = nlohmann::json;

// Respond may come from the engine thread: the test waits for it.
class WaitingExchange : public HttpExchange {
 public:
  void Respond(HttpResponse r) override {
    std::lock_guard<std::mutex> lock(mu_);
    response_ = std::move(r);
    ++responses_;
    cv_.notify_all();
  }
  void StartStream(int, std::string, std::vector<std::pair<std::string, std::string>>) override {
    ADD_FAILURE() << "no stream expected";
  }
  void Write(std::string) override {}
  void EndStream() override {}
  void OnDisconnect(std::function<void()>) override {}
  bool disconnected() const override { return false; }
  size_t queued_bytes() const override { return 0; }
  HttpResponse Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    EXPECT_TRUE(cv_.wait_for(lock, std::chrono::seconds(120), [&] { return responses_ > 0; }));
    EXPECT_EQ(responses_, 1);
    return response_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int responses_ = 0;
  HttpResponse response_;
};

// A served model: synthetic file, tokenizer, engine, and the ApiServer over them.
struct Served {
  std::unique_ptr<Model> model;
  std::unique_ptr<Tokenizer> tokenizer;
  std::unique_ptr<Engine> engine;
  std::unique_ptr<RerankHead> head;
  std::unique_ptr<ApiServer> api;

  explicit Served(const std::string& shape) {
    SynthOptions o;
    o.shape = shape;
    o.type = FileType::kF32;
    o.threads = 2;
    const std::string path = test::TempDir() + "/" + shape + ".gguf";
    Status st = WriteSynthModel(o, path);
    EXPECT_TRUE(st.ok()) << st.message();
    model = std::move(Model::Load(path)).value();
    tokenizer = std::make_unique<Tokenizer>(std::move(TokenizerForModel(*model)).value());
    EngineConfig c;
    c.threads = 2;
    c.max_model_len = 2048;
    engine = std::move(Engine::Create(*model, tokenizer.get(), c)).value();
    ServerOptions so;
    so.model_id = shape;
    api = std::make_unique<ApiServer>(so, nullptr, nullptr);
    LoadedModel lm;
    lm.engine = engine.get();
    lm.tokenizer = tokenizer.get();
    lm.pooling = model->config().pooling;
    if (lm.pooling == Pooling::kRank) {
      head =
          std::make_unique<RerankHead>(std::move(RerankHead::Create(*model, *tokenizer)).value());
      lm.rerank = head.get();
    }
    api->SetLoaded(lm);
  }

  Json Post(const std::string& path, const Json& body, int want_status = 200) {
    HttpRequest r;
    r.method = "POST";
    r.target = r.path = path;
    r.body = body.dump();
    auto ex = std::make_shared<WaitingExchange>();
    api->Handle(std::move(r), ex);
    const HttpResponse resp = ex->Wait();
    EXPECT_EQ(resp.status, want_status) << resp.body;
    return Json::parse(resp.body);
  }

  // ReferenceForward's final-normed hidden state of the last token of `tokens`.
  std::vector<float> ReferenceHidden(const std::vector<int32_t>& tokens, float* logits = nullptr) {
    ThreadPool pool(2);
    ReferenceForward fwd(*model, pool, 128);
    KvCache kv(model->config(), int(tokens.size()));
    std::vector<float> hidden(size_t(model->config().n_embd));
    const std::vector<int32_t> rows = {int32_t(tokens.size()) - 1};
    Status st = fwd.Run(tokens, 0, kv, rows, logits, hidden.data());
    EXPECT_TRUE(st.ok()) << st.message();
    return hidden;
  }
};

std::vector<std::string> FiftyTexts() {
  std::vector<std::string> t = {
      "hello",
      "Hello, world!",
      "The quick brown fox jumps over the lazy dog.",
      "a",
      "?",
      "1234567890",
      "What is the capital of China?",
      "The capital of China is Beijing.",
      "Gravity is a force that attracts two bodies towards each other.",
      "北京是中国的首都。",
      "東京は日本の首都です。",
      "Москва — столица России.",
      "القاهرة هي عاصمة مصر",
      "emoji: 🚀🔥👍🏽 and ZWJ 👩‍💻",
      "Ünïcödé àccents: café, naïve, façade",
      "  leading and trailing spaces  ",
      "tabs\tand\nnewlines\r\n",
      "def add(a, b):\n    return a + b\n",
      "SELECT * FROM users WHERE id = 42;",
      "{\"json\": [1, 2, 3], \"ok\": true}",
      "<|im_start|>user\nspecial tokens in text<|im_end|>",
      "ends with the end token<|endoftext|>",
      "Instruct: Given a web search query, retrieve relevant passages\nQuery: what is RoPE?",
      "repeat repeat repeat repeat repeat repeat repeat repeat",
      "hello",  // a repeat of an earlier input: computed once, embedded the same
      "The quick brown fox jumps over the lazy dog.",
      "x y z",
      "https://example.com/path?query=1&b=2#frag",
      "e = mc^2, ∫ f(x) dx, ∑ i² , √2 ≈ 1.414",
      "ALL CAPS SENTENCE FOR TESTING",
      "mIxEd CaSe",
      "😀",
      "\u00a0non-breaking\u00a0spaces\u00a0",
      "Lorem ipsum dolor sit amet, consectetur adipiscing elit.",
      "Numbers 3.14159 2.71828 1.41421 and dates 2024-06-05",
      "한국어 문장입니다.",
      "हिन्दी वाक्य",
      "Ελληνικά γράμματα",
      "שלום עולם",
      "ok",
  };
  std::string long1, long2;
  for (int i = 0; i < 60; ++i)
    long1 += "Sentence number " + std::to_string(i) + " of a long text. ";
  for (int i = 0; i < 150; ++i) long2 += "词" + std::to_string(i % 7) + " ";
  t.push_back(long1);
  t.push_back(long2);
  for (int i = 0; t.size() < 50; ++i)
    t.push_back("varied input " + std::to_string(i * 7919) + (i % 2 ? " with more words" : ""));
  return t;
}

double Cosine(const std::vector<float>& a, const std::vector<float>& b) {
  double ab = 0, aa = 0, bb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    ab += double(a[i]) * b[i];
    aa += double(a[i]) * a[i];
    bb += double(b[i]) * b[i];
  }
  return ab / std::sqrt(aa * bb);
}

std::vector<float> Floats(const Json& j) { return j.get<std::vector<float>>(); }

std::vector<float> DecodeBase64Floats(const std::string& s) {
  static const std::string kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string bytes;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : s) {
    if (c == '=') break;
    acc = acc << 6 | uint32_t(kAlphabet.find(c));
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      bytes += char((acc >> bits) & 0xff);
    }
  }
  std::vector<float> out(bytes.size() / 4);
  std::memcpy(out.data(), bytes.data(), out.size() * 4);  // the test machine is little-endian
  return out;
}

class EmbeddingsReference : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { served_ = new Served("qwen3-embedding-tiny"); }
  static void TearDownTestSuite() {
    delete served_;
    served_ = nullptr;
  }
  static Served* served_;
};
Served* EmbeddingsReference::served_ = nullptr;

TEST_F(EmbeddingsReference, FiftyTextsMatchTheFloatReference) {
  Served& s = *served_;
  const std::vector<std::string> texts = FiftyTexts();
  ASSERT_EQ(texts.size(), 50u);
  const Json r = s.Post("/v1/embeddings", {{"model", "qwen3-embedding-tiny"}, {"input", texts}});
  ASSERT_EQ(r["data"].size(), 50u);
  EXPECT_EQ(r["object"], "list");
  EXPECT_EQ(r["model"], "qwen3-embedding-tiny");
  const int32_t eot = s.tokenizer->TokenToId("<|endoftext|>");
  ASSERT_EQ(eot, 151643);
  int64_t tokens = 0;
  double min_cos = 1;
  for (size_t i = 0; i < texts.size(); ++i) {
    SCOPED_TRACE(texts[i]);
    // The model card's input: the text's tokens, then <|endoftext|> (once).
    std::vector<int32_t> ids = s.tokenizer->Encode(texts[i]);
    if (ids.back() != eot) ids.push_back(eot);
    EXPECT_EQ(EmbeddingPrompt(*s.tokenizer, texts[i]), ids);
    tokens += int64_t(ids.size());
    const Json& d = r["data"][i];
    EXPECT_EQ(d["object"], "embedding");
    EXPECT_EQ(d["index"], i);
    const std::vector<float> served = Floats(d["embedding"]);
    ASSERT_EQ(served.size(), 256u);
    const std::vector<float> ref = PoolEmbedding(s.ReferenceHidden(ids));
    double norm = 0;
    for (float v : served) norm += double(v) * v;
    EXPECT_NEAR(norm, 1.0, 1e-5);
    const double cos = Cosine(served, ref);
    EXPECT_GE(cos, 0.9999);
    min_cos = std::min(min_cos, cos);
  }
  EXPECT_EQ(r["usage"]["prompt_tokens"], tokens);
  EXPECT_EQ(r["usage"]["total_tokens"], tokens);
  // Equal inputs get equal embeddings (the engine computes a repeated prompt once).
  EXPECT_EQ(r["data"][0]["embedding"], r["data"][24]["embedding"]);
  std::printf("min cosine over %zu texts: %.9f\n", texts.size(), min_cos);
}

// dimensions: the first k components of the hidden state, renormalised (not the first k of the
// normalised vector); computed here by hand from the reference hidden state.
TEST_F(EmbeddingsReference, DimensionsTruncateThenNormalise) {
  Served& s = *served_;
  const std::string text = "Matryoshka embeddings keep their head.";
  const Json full = s.Post("/v1/embeddings", {{"input", text}});
  const std::vector<float> served_full = Floats(full["data"][0]["embedding"]);
  std::vector<int32_t> ids = EmbeddingPrompt(*s.tokenizer, text);
  const std::vector<float> hidden = s.ReferenceHidden(ids);
  for (int k : {1, 32, 100, 256}) {
    SCOPED_TRACE(k);
    const Json r = s.Post("/v1/embeddings", {{"input", text}, {"dimensions", k}});
    const std::vector<float> served = Floats(r["data"][0]["embedding"]);
    ASSERT_EQ(served.size(), size_t(k));
    double ref_norm = 0, served_full_norm = 0, norm = 0;
    for (int i = 0; i < k; ++i) {
      ref_norm += double(hidden[i]) * hidden[i];
      served_full_norm += double(served_full[i]) * served_full[i];
      norm += double(served[i]) * served[i];
    }
    EXPECT_NEAR(norm, 1.0, 1e-5);
    std::vector<float> expected(static_cast<size_t>(k));
    for (int i = 0; i < k; ++i) {
      expected[i] = float(hidden[i] / std::sqrt(ref_norm));
      // The same hidden state as the full request: its first k components, rescaled.
      EXPECT_NEAR(served[i], served_full[i] / std::sqrt(served_full_norm), 1e-5);
    }
    if (k > 1) {
      EXPECT_GE(Cosine(served, expected), 0.9999);
    } else {
      EXPECT_FLOAT_EQ(std::fabs(served[0]), 1.0f);
      EXPECT_EQ(served[0] > 0, hidden[0] > 0);
    }
  }
  const Json bad = s.Post("/v1/embeddings", {{"input", text}, {"dimensions", 257}}, 400);
  EXPECT_EQ(bad["error"]["param"], "dimensions");
}

TEST_F(EmbeddingsReference, Base64CarriesTheSameFloatsAndTokenInputsRunAsGiven) {
  Served& s = *served_;
  const std::vector<std::string> texts = {"first input", "second input"};
  const Json f = s.Post("/v1/embeddings", {{"input", texts}, {"dimensions", 64}});
  const Json b = s.Post("/v1/embeddings",
                        {{"input", texts}, {"dimensions", 64}, {"encoding_format", "base64"}});
  for (size_t i = 0; i < texts.size(); ++i)
    EXPECT_EQ(DecodeBase64Floats(b["data"][i]["embedding"]), Floats(f["data"][i]["embedding"]));
  // Token ids are taken as given (no end token added): the text's ids + <|endoftext|> give the
  // text's embedding, the bare ids another one.
  std::vector<int32_t> ids = s.tokenizer->Encode(texts[0]);
  const Json bare = s.Post("/v1/embeddings", {{"input", ids}, {"dimensions", 64}});
  ids.push_back(151643);
  const Json with_end =
      s.Post("/v1/embeddings", {{"input", Json::array({ids})}, {"dimensions", 64}});
  EXPECT_EQ(with_end["data"][0]["embedding"], f["data"][0]["embedding"]);
  EXPECT_NE(bare["data"][0]["embedding"], f["data"][0]["embedding"]);
  EXPECT_EQ(bare["usage"]["prompt_tokens"], ids.size() - 1);
}

TEST_F(EmbeddingsReference, TooLongEmptyAndGenerationAre400s) {
  Served& s = *served_;
  std::string huge;
  for (int i = 0; i < 2100; ++i) huge += " word";
  Json e = s.Post("/v1/embeddings", {{"input", Json::array({"ok", huge})}}, 400);
  EXPECT_EQ(e["error"]["param"], "input[1]");
  EXPECT_EQ(e["error"]["code"], "context_length_exceeded");
  e = s.Post("/v1/embeddings", {{"input", ""}}, 400);
  EXPECT_EQ(e["error"]["param"], "input");
  e = s.Post("/v1/chat/completions", {{"messages", {{{"role", "user"}, {"content", "hi"}}}}}, 400);
  EXPECT_NE(e["error"]["message"].get<std::string>().find("/v1/embeddings"), std::string::npos);
  e = s.Post("/v1/rerank", {{"query", "q"}, {"documents", {"d"}}}, 400);
  EXPECT_NE(e["error"]["message"].get<std::string>().find("--pooling rank"), std::string::npos);
}

// Rerank: the served order is the reference order, where the reference score is the softmax of
// ReferenceForward's full lm_head logits of "yes" and "no" at the prompt's last position.
TEST(RerankReference, OrderIsTheReferenceOrder) {
  Served s("qwen3-reranker-tiny");
  const std::string query = "What is the capital of China?";
  const std::vector<std::string> docs = {
      "The capital of China is Beijing.",
      "Gravity is a force that attracts two bodies towards each other.",
      "Paris is the capital of France.",
      "北京是中国的首都。",
      "def capital(country): return lookup[country]",
      "Bananas are yellow.",
      "China's capital city, Beijing, has over 21 million people.",
      "no",
  };
  const Json r = s.Post("/v1/rerank", {{"model", "qwen3-reranker-tiny"},
                                       {"query", query},
                                       {"documents", docs},
                                       {"return_documents", true}});
  ASSERT_EQ(r["results"].size(), docs.size());
  const int32_t yes = s.tokenizer->TokenToId("yes"), no = s.tokenizer->TokenToId("no");
  std::vector<double> ref(docs.size());
  int64_t tokens = 0;
  for (size_t i = 0; i < docs.size(); ++i) {
    const std::vector<int32_t> ids = RerankPrompt(*s.tokenizer, "", query, docs[i]);
    tokens += int64_t(ids.size());
    std::vector<float> logits(size_t(s.model->config().n_vocab));
    s.ReferenceHidden(ids, logits.data());
    ref[i] = 1 / (1 + std::exp(double(logits[no]) - double(logits[yes])));
  }
  std::vector<size_t> want(docs.size());
  for (size_t i = 0; i < want.size(); ++i) want[i] = i;
  std::stable_sort(want.begin(), want.end(), [&](size_t a, size_t b) { return ref[a] > ref[b]; });
  double min_gap = 1, max_diff = 0;
  for (size_t k = 0; k < docs.size(); ++k) {
    const Json& res = r["results"][k];
    EXPECT_EQ(res["index"], want[k]) << "rank " << k;
    EXPECT_NEAR(res["relevance_score"].get<double>(), ref[want[k]], 1e-3);
    EXPECT_EQ(res["document"]["text"], docs[want[k]]);
    if (k > 0) min_gap = std::min(min_gap, ref[want[k - 1]] - ref[want[k]]);
    max_diff = std::max(max_diff, std::fabs(res["relevance_score"].get<double>() - ref[want[k]]));
  }
  EXPECT_EQ(r["usage"]["total_tokens"], tokens);
  std::printf("rerank: reference scores %.4f..%.4f, smallest gap %.2e, served - reference %.2e\n",
              ref[want.back()], ref[want.front()], min_gap, max_diff);

  const Json top = s.Post("/rerank", {{"query", query}, {"documents", docs}, {"top_n", 3}});
  ASSERT_EQ(top["results"].size(), 3u);
  EXPECT_EQ(top["results"][0]["index"], want[0]);
  EXPECT_FALSE(top["results"][0].contains("document"));
  const Json e = s.Post("/v1/embeddings", {{"input", "x"}}, 400);
  EXPECT_NE(e["error"]["message"].get<std::string>().find("/v1/rerank"), std::string::npos);
}

}  // namespace
}  // namespace brisk::server
