// The bodies of /v1/embeddings and /v1/rerank: every input shape OpenAI documents, and a 400
// naming the field for each bad one; base64 and float encodings of a vector.
#include "server/pooling_request.h"

#include <gtest/gtest.h>

#include <cstring>

#include "server/embedding_json.h"

namespace brisk::server {
namespace {

PoolingLimits Limits() {
  PoolingLimits l;
  l.n_embd = 64;
  l.n_vocab = 1000;
  l.max_inputs = 4;
  l.model_id = "emb";
  return l;
}

EmbeddingsRequest Embeddings(const std::string& body) {
  auto r = ParseEmbeddingsRequest(body, Limits());
  if (auto* e = std::get_if<ApiError>(&r)) {
    ADD_FAILURE() << body << " -> " << e->message;
    return {};
  }
  return std::get<EmbeddingsRequest>(r);
}

ApiError EmbeddingsError(const std::string& body) {
  auto r = ParseEmbeddingsRequest(body, Limits());
  if (auto* e = std::get_if<ApiError>(&r)) return *e;
  ADD_FAILURE() << body << " was accepted";
  return {};
}

TEST(EmbeddingsRequest, EveryInputShape) {
  EmbeddingsRequest r = Embeddings(R"({"model": "emb", "input": "hi"})");
  EXPECT_EQ(r.texts, std::vector<std::string>{"hi"});
  EXPECT_EQ(r.dimensions, 0);
  EXPECT_FALSE(r.base64);
  r = Embeddings(R"({"input": ["a", "b"], "encoding_format": "base64", "dimensions": 8})");
  EXPECT_EQ(r.texts, (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(r.base64);
  EXPECT_EQ(r.dimensions, 8);
  EXPECT_EQ(r.size(), 2u);
  r = Embeddings(R"({"input": [1, 2, 999], "user": "u-1"})");
  EXPECT_EQ(r.token_inputs, (std::vector<std::vector<int32_t>>{{1, 2, 999}}));
  r = Embeddings(R"({"input": [[5], [6, 7]], "encoding_format": "float"})");
  EXPECT_EQ(r.token_inputs, (std::vector<std::vector<int32_t>>{{5}, {6, 7}}));
  EXPECT_EQ(r.size(), 2u);
}

TEST(EmbeddingsRequest, BadFieldsAre400sNamingThem) {
  struct Case {
    const char* body;
    const char* param;
    const char* words;
  } cases[] = {
      {R"({})", "input", "missing"},
      {R"({"input": ""})", "input", "empty string"},
      {R"({"input": []})", "input", "must not be empty"},
      {R"({"input": ["a", ""]})", "input[1]", "empty string"},
      {R"({"input": ["a", 3]})", "input[1]", "a string"},
      {R"({"input": [[1], []]})", "input[1]", "empty array"},
      {R"({"input": [1, 1000]})", "input", "out of range"},
      {R"({"input": [[1], [2, -1]]})", "input[1]", "out of range"},
      {R"({"input": ["a", "b", "c", "d", "e"]})", "input", "at most 4"},
      {R"({"input": {"text": "a"}})", "input", "must be a string"},
      {R"({"input": [true]})", "input", "must be a string"},
      {R"({"input": "a", "dimensions": 0})", "dimensions", "1"},
      {R"({"input": "a", "dimensions": 65})", "dimensions", "64"},
      {R"({"input": "a", "dimensions": "8"})", "dimensions", ""},
      {R"({"input": "a", "encoding_format": "int8"})", "encoding_format", "base64"},
      {R"({"input": "a", "user": 5})", "user", ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.body);
    const ApiError e = EmbeddingsError(c.body);
    EXPECT_EQ(e.status, 400);
    EXPECT_EQ(e.param, c.param);
    EXPECT_NE(e.message.find(c.words), std::string::npos) << e.message;
  }
  auto other = ParseEmbeddingsRequest(R"({"model": "gpt", "input": "a"})", Limits());
  ASSERT_TRUE(std::holds_alternative<ApiError>(other));
  EXPECT_EQ(std::get<ApiError>(other).status, 404);
}

TEST(RerankRequest, DocumentsAsStringsOrObjects) {
  auto r = ParseRerankRequest(
      R"({"model": "emb", "query": "q", "documents": ["a", {"text": "b"}], "top_n": 1,
          "return_documents": true, "instruction": "Find code"})",
      Limits());
  ASSERT_TRUE(std::holds_alternative<RerankRequest>(r));
  const RerankRequest& q = std::get<RerankRequest>(r);
  EXPECT_EQ(q.query, "q");
  EXPECT_EQ(q.documents, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(q.top_n, 1);
  EXPECT_TRUE(q.return_documents);
  EXPECT_EQ(q.instruction, "Find code");
  struct Case {
    const char* body;
    const char* param;
  } bad[] = {
      {R"({"documents": ["a"]})", "query"},
      {R"({"query": "", "documents": ["a"]})", "query"},
      {R"({"query": "q"})", "documents"},
      {R"({"query": "q", "documents": "a"})", "documents"},
      {R"({"query": "q", "documents": []})", "documents"},
      {R"({"query": "q", "documents": [{"txt": "a"}]})", "documents[0].text"},
      {R"({"query": "q", "documents": ["a", 1]})", "documents[1]"},
      {R"({"query": "q", "documents": ["a"], "top_n": -1})", "top_n"},
      {R"({"query": "q", "documents": ["1", "2", "3", "4", "5"]})", "documents"},
  };
  for (const Case& c : bad) {
    SCOPED_TRACE(c.body);
    auto e = ParseRerankRequest(c.body, Limits());
    ASSERT_TRUE(std::holds_alternative<ApiError>(e));
    EXPECT_EQ(std::get<ApiError>(e).status, 400);
    EXPECT_EQ(std::get<ApiError>(e).param, c.param);
  }
}

TEST(EmbeddingJson, Base64IsLittleEndianFloat32) {
  EXPECT_EQ(Base64(""), "");
  EXPECT_EQ(Base64("f"), "Zg==");
  EXPECT_EQ(Base64("fo"), "Zm8=");
  EXPECT_EQ(Base64("foo"), "Zm9v");
  EXPECT_EQ(Base64("foobar"), "Zm9vYmFy");
  // 1.0f = 0x3f800000 -> bytes 00 00 80 3f; -2.0f = 0xc0000000 -> 00 00 00 c0.
  EXPECT_EQ(Float32Base64Json(std::vector<float>{1.0f, -2.0f}), "\"AACAPwAAAMA=\"");
  EXPECT_EQ(FloatArrayJson(std::vector<float>{0.5f, -0.1f, 3}), "[0.5,-0.1,3]");
}

}  // namespace
}  // namespace brisk::server
