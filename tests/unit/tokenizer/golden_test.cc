// Token ids identical to HuggingFace tokenizers (1748 cases) and llama.cpp's test vectors (46),
// with the tokenizer built from GGUF metadata and from tokenizer.json; decode round trips.
#include <gtest/gtest.h>

#include "tokenizer/detokenizer.h"
#include "tokenizer/unicode.h"
#include "tokenizer_test_util.h"

namespace brisk::test {
namespace {

// Encodes every case; reports the first few mismatches in full.
void ExpectCases(const Tokenizer& tok, const std::vector<TokCase>& cases, const std::string& what) {
  ASSERT_FALSE(cases.empty()) << what << ": no cases";
  size_t bad = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::vector<int32_t> got = tok.Encode(cases[i].text);
    if (got == cases[i].ids) continue;
    if (++bad <= 5) {
      ADD_FAILURE() << what << " case " << i << " text=" << nlohmann::json(cases[i].text).dump()
                    << "\n  expected:" << IdsToString(cases[i].ids)
                    << "\n  got:     " << IdsToString(got);
    }
  }
  EXPECT_EQ(bad, 0u) << what << ": " << bad << " of " << cases.size() << " cases differ";
  std::printf("[ info ] %s: %zu/%zu cases identical\n", what.c_str(), cases.size() - bad,
              cases.size());
}

// decode(encode(s)) == NFC(s); the streaming detokenizer reproduces Decode exactly and never
// emits invalid UTF-8.
void ExpectRoundTrips(const Tokenizer& tok, const std::vector<TokCase>& cases,
                      const std::string& what) {
  size_t bad = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::string& text = cases[i].text;
    const std::vector<int32_t> ids = tok.Encode(text);
    const std::string decoded = tok.Decode(ids);
    const std::string expected = tok::NfcReference(tok::ToValidUtf8(text));
    if (decoded != expected && ++bad <= 5) {
      ADD_FAILURE() << what << " case " << i << ": decode(encode(s)) != NFC(s) for "
                    << nlohmann::json(text).dump();
    }
    for (bool show : {true, false}) {
      StreamingDetokenizer detok(tok, show);
      std::string streamed;
      for (int32_t id : ids) {
        const std::string piece = detok.Push(id);
        if (!tok::IsValidUtf8(piece)) {
          ADD_FAILURE() << what << " case " << i << ": a streamed piece is not valid UTF-8";
        }
        streamed += piece;
      }
      streamed += detok.Flush();
      if (streamed != tok.Decode(ids, show) && ++bad <= 5) {
        ADD_FAILURE() << what << " case " << i
                      << ": streaming != one-shot decode (show_special=" << show << ")";
      }
    }
  }
  EXPECT_EQ(bad, 0u) << what;
}

TEST(TokenizerGolden, HfCasesFromGguf) {
  const Tokenizer* tok = Qwen25Gguf();
  if (tok == nullptr) GTEST_SKIP() << "golden tokenizer/qwen2.5-vocab.gguf not present";
  ExpectCases(*tok, LoadJsonlCases(GoldenTok("qwen2.5-hf-cases.jsonl")), "gguf/hf-cases");
}

TEST(TokenizerGolden, HfCasesFromTokenizerJson) {
  const Tokenizer* tok = Qwen25Hf();
  if (tok == nullptr) GTEST_SKIP() << "golden tokenizer/qwen2.5-tokenizer.json not present";
  ExpectCases(*tok, LoadJsonlCases(GoldenTok("qwen2.5-hf-cases.jsonl")), "json/hf-cases");
}

TEST(TokenizerGolden, GgmlVocabCases) {
  const std::string inp = GoldenTok("ggml-vocab-qwen2.gguf.inp");
  if (inp.empty()) GTEST_SKIP() << "golden tokenizer/ggml-vocab-qwen2.gguf.inp not present";
  const std::vector<TokCase> cases = LoadGgmlCases(inp, GoldenTok("ggml-vocab-qwen2.gguf.out"));
  ASSERT_EQ(cases.size(), 46u);
  // The file's own vocabulary, and both Qwen2.5 ones: the BPE part is the same.
  if (const Tokenizer* t = GgmlQwen2()) ExpectCases(*t, cases, "ggml-vocab-qwen2.gguf/ggml-cases");
  for (const auto& [name, t] : AvailableQwen25Tokenizers())
    ExpectCases(*t, cases, name + "/ggml-cases");
}

TEST(TokenizerGolden, RoundTripAndStreaming) {
  const std::string path = GoldenTok("qwen2.5-hf-cases.jsonl");
  if (path.empty()) GTEST_SKIP() << "golden tokenizer/qwen2.5-hf-cases.jsonl not present";
  std::vector<TokCase> cases = LoadJsonlCases(path);
  const std::string inp = GoldenTok("ggml-vocab-qwen2.gguf.inp");
  if (!inp.empty()) {
    for (TokCase& c : LoadGgmlCases(inp, GoldenTok("ggml-vocab-qwen2.gguf.out"))) {
      cases.push_back(std::move(c));
    }
  }
  for (const auto& [name, t] : AvailableQwen25Tokenizers()) ExpectRoundTrips(*t, cases, name);
}

// Both loaders describe the same vocabulary: same texts and bytes for every id they share.
TEST(TokenizerGolden, GgufAndJsonAgree) {
  const Tokenizer* g = Qwen25Gguf();
  const Tokenizer* h = Qwen25Hf();
  if (g == nullptr || h == nullptr) GTEST_SKIP() << "golden Qwen2.5 vocabularies not present";
  EXPECT_EQ(g->n_vocab(), 151936);
  EXPECT_EQ(h->n_vocab(), 151665);
  EXPECT_EQ(g->n_merges(), 151387u);
  EXPECT_EQ(h->n_merges(), 151387u);
  for (int32_t id = 0; id < h->n_vocab(); ++id) {
    ASSERT_EQ(g->TokenText(id), h->TokenText(id)) << id;
    ASSERT_EQ(g->TokenBytes(id), h->TokenBytes(id)) << id;
  }
  EXPECT_EQ(g->eos_id(), 151645);
  EXPECT_EQ(g->bos_id(), 151643);
  EXPECT_EQ(g->pad_id(), 151643);
  EXPECT_FALSE(g->add_bos());
  EXPECT_EQ(g->type(151644), TokenType::kControl);
  EXPECT_EQ(g->type(151657), TokenType::kUserDefined);
  EXPECT_EQ(g->type(151700), TokenType::kUnused);
  EXPECT_TRUE(g->IsEog(151645));
  EXPECT_TRUE(g->IsEog(151643));
  EXPECT_FALSE(g->IsEog(151644));
  EXPECT_TRUE(h->IsSpecial(151644));
  EXPECT_FALSE(h->IsSpecial(151657));
  EXPECT_EQ(h->eos_id(), 151643);  // no tokenizer_config.json next to it
}

// The committed subset (a trimmed tokenizer.json with its cases): runs everywhere.
TEST(TokenizerSubset, CasesAndRoundTrips) {
  const Tokenizer* tok = SubsetHf();
  if (tok == nullptr) GTEST_SKIP() << "tests/data/tokenizer subset not present";
  const std::vector<TokCase> cases = SubsetCases();
  ExpectCases(*tok, cases, "subset");
  ExpectRoundTrips(*tok, cases, "subset");
}

}  // namespace
}  // namespace brisk::test
