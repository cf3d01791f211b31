// The fast forward pass: golden logits under every ISA the machine supports, agreement with the
// reference path, incremental decoding, and bitwise batch invariance.
#include "model/fast_forward.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <numeric>
#include <sstream>

#include "formats/logits_file.h"
#include "golden_util.h"
#include "model/forward.h"
#include "runtime/cpu_features.h"
#include "test_paths.h"

namespace brisk {
namespace {

using golden::ArgMax;
using golden::ReadSequences;
using golden::RelL2;

// README tolerances for a fast path (int8 activations), against llama.cpp and against ref64.
double Tolerance(const std::string& model) {
  if (model.ends_with("-f32")) return 1e-5;
  if (model.ends_with("-f16")) return 2e-3;
  if (model.ends_with("-bf16")) return 1e-2;
  return 4e-2;
}

class FastGolden : public ::testing::TestWithParam<const char*> {};

TEST_P(FastGolden, EveryIsaWithinTolerances) {
  const std::string name = GetParam();
  const std::string model_path =
      test::FindGoldenOrData("models/" + name + ".gguf", "golden/" + name + ".gguf");
  const std::string seq_path =
      test::FindGoldenOrData("logits/sequences.txt", "golden/sequences.txt");
  if (model_path.empty() || seq_path.empty()) GTEST_SKIP() << name << ": golden data not present";
  auto model = Model::Load(model_path);
  ASSERT_TRUE(model.ok()) << model.message();
  const int V = (*model)->config().n_vocab;
  const auto seqs = ReadSequences(seq_path);
  ThreadPool pool(2);
  for (Isa isa : AllIsas()) {  // every tier, x86 and ARM
    if (!IsaSupported(isa)) {
      std::printf("%s: ISA %s not supported here, skipped\n", name.c_str(),
                  std::string(IsaName(isa)).c_str());
      continue;
    }
    SetIsaForTesting(isa);
    FastForward fwd(**model, pool, 64);  // 64 < 100: the long sequence runs in two chunks
    int positions = 0, agree = 0;
    for (size_t s = 0; s < seqs.size(); ++s) {
      const std::string stem = name + ".seq" + std::to_string(s);
      const std::string llama_path =
          test::FindGoldenOrData("logits/" + stem + ".bin", "golden/" + stem + ".bin");
      const std::string ref_path =
          test::FindGoldenOrData("logits/" + stem + ".ref64.bin", "golden/" + stem + ".ref64.bin");
      if (llama_path.empty() || ref_path.empty()) continue;
      auto llama = ReadLogitsFile(llama_path);
      auto ref64 = ReadLogitsFile(ref_path);
      ASSERT_TRUE(llama.ok() && ref64.ok());
      const auto& toks = seqs[s];
      // F32 KV like the llama.cpp runs that made the golden logits, then the default f16 KV
      // (its rounding is an F16-sized difference: the F16 tolerance, or the file type's if larger;
      // f16 under the best ISA only: the ISAs' attention bits are compared in test_kernels).
      for (KvType kvt : {KvType::kF32, KvType::kF16}) {
        if (kvt == KvType::kF16 && isa != BestIsa()) continue;
        SeqKvCache kv((*model)->config(), int(toks.size()), kvt);
        std::vector<int32_t> rows(toks.size());
        std::iota(rows.begin(), rows.end(), 0);
        std::vector<float> out(toks.size() * size_t(V));
        ASSERT_TRUE(fwd.Run(toks, 0, kv.blocks(), rows, out.data()).ok());
        double worst_llama = 0, worst_ref = 0;
        for (size_t t = 0; t < toks.size(); ++t) {
          worst_llama = std::max(worst_llama, RelL2(&out[t * V], llama->row(int(t)), V));
          worst_ref = std::max(worst_ref, RelL2(&out[t * V], ref64->row(int(t)), V));
          if (kvt == KvType::kF32) {
            agree += ArgMax(&out[t * V], V) == ArgMax(llama->row(int(t)), V);
            ++positions;
          }
        }
        const double tol = kvt == KvType::kF32 ? Tolerance(name) : std::max(Tolerance(name), 2e-3);
        std::printf("%-20s %-6s %s KV seq%zu rel-L2 vs llama.cpp %.2e  vs ref64 %.2e\n",
                    name.c_str(), std::string(IsaName(isa)).c_str(), KvTypeName(kvt), s,
                    worst_llama, worst_ref);
        EXPECT_LE(worst_llama, tol) << name << " " << IsaName(isa) << " seq" << s;
        EXPECT_LE(worst_ref, tol) << name << " " << IsaName(isa) << " seq" << s;
      }
    }
    if (positions > 0) {
      std::printf("%-20s %-6s argmax agreement with llama.cpp %d/%d\n", name.c_str(),
                  std::string(IsaName(isa)).c_str(), agree, positions);
      EXPECT_GE(double(agree) / positions, 0.9) << name << " " << IsaName(isa);
    }
  }
  SetIsaForTesting(BestIsa());
}

INSTANTIATE_TEST_SUITE_P(AllModels, FastGolden, ::testing::ValuesIn(golden::kModels),
                         [](const auto& info) {
                           std::string s = info.param;
                           for (char& c : s)
                             if (c == '-') c = '_';
                           return s;
                         });

class FastForwardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto m = Model::Load(
        test::FindGoldenOrData("models/tiny-untied-q4_k_m.gguf", "golden/tiny-untied-q4_k_m.gguf"));
    ASSERT_TRUE(m.ok()) << m.message();
    model_ = std::move(m).value();
  }
  std::vector<int32_t> Tokens(int n, int salt) const {
    std::vector<int32_t> t(n);
    for (int i = 0; i < n; ++i)
      t[i] = int32_t((i * 7919 + salt * 104729 + 13) % model_->config().n_vocab);
    return t;
  }
  std::unique_ptr<Model> model_;
  ThreadPool pool_{2};
};

TEST_F(FastForwardTest, PrefillThenDecodeMatchesOnePrefill) {
  const ModelConfig& c = model_->config();
  const int N = 20, K = 5, V = c.n_vocab;
  const auto toks = Tokens(N + K, 1);
  FastForward fwd(*model_, pool_, 64);
  SeqKvCache kv_full(c, N + K);
  std::vector<int32_t> rows(N + K);
  std::iota(rows.begin(), rows.end(), 0);
  std::vector<float> want(size_t(N + K) * V);
  ASSERT_TRUE(fwd.Run(toks, 0, kv_full.blocks(), rows, want.data()).ok());
  SeqKvCache kv(c, N + K);
  std::vector<float> got(V);
  const int32_t last = N - 1;
  ASSERT_TRUE(
      fwd.Run(std::span(toks.data(), N), 0, kv.blocks(), std::span(&last, 1), got.data()).ok());
  // Each output is computed in the same order whatever the batch: bitwise equal.
  EXPECT_EQ(0, std::memcmp(got.data(), &want[size_t(N - 1) * V], V * sizeof(float)));
  for (int k = 0; k < K; ++k) {
    const int32_t r0 = 0;
    ASSERT_TRUE(
        fwd.Run(std::span(&toks[N + k], 1), N + k, kv.blocks(), std::span(&r0, 1), got.data())
            .ok());
    EXPECT_EQ(0, std::memcmp(got.data(), &want[size_t(N + k) * V], V * sizeof(float))) << k;
  }
}

TEST_F(FastForwardTest, CloseToReferencePath) {
  const ModelConfig& c = model_->config();
  const auto toks = Tokens(33, 2);
  std::vector<int32_t> rows(33);
  std::iota(rows.begin(), rows.end(), 0);
  std::vector<float> a(33 * size_t(c.n_vocab)), b(a.size());
  FastForward fast(*model_, pool_, 64);
  ReferenceForward ref(*model_, pool_, 64);
  SeqKvCache k1(c, 33);
  KvCache k2(c, 33);
  ASSERT_TRUE(fast.Run(toks, 0, k1.blocks(), rows, a.data()).ok());
  ASSERT_TRUE(ref.Run(toks, 0, k2, rows, b.data()).ok());
  for (int t = 0; t < 33; ++t)
    EXPECT_LE(RelL2(&a[size_t(t) * c.n_vocab], &b[size_t(t) * c.n_vocab], c.n_vocab), 4e-2);
}

// A sequence's logits alone and inside batches of 2..32 other sequences (prefill chunks and
// decode tokens mixed) are bitwise identical.
TEST_F(FastForwardTest, BatchInvarianceBitwise) {
  const ModelConfig& c = model_->config();
  const int V = c.n_vocab;
  FastForward fwd(*model_, pool_, 256);
  // The sequence under test: a 12-token prefill, then 3 decode steps.
  const auto subject = Tokens(15, 3);
  auto run_alone = [&](std::vector<float>* out) {
    SeqKvCache kv(c, 15);
    std::vector<int32_t> rows = {11};
    std::vector<float> l(V);
    ASSERT_TRUE(fwd.Run(std::span(subject.data(), 12), 0, kv.blocks(), rows, l.data()).ok());
    out->insert(out->end(), l.begin(), l.end());
    for (int k = 12; k < 15; ++k) {
      const int32_t r0 = 0;
      ASSERT_TRUE(fwd.Run(std::span(&subject[k], 1), k, kv.blocks(), std::span(&r0, 1), l.data(),
                          /*prompt=*/false)
                      .ok());
      out->insert(out->end(), l.begin(), l.end());
    }
  };
  std::vector<float> alone;
  run_alone(&alone);

  for (int others : {1, 2, 7, 15, 31}) {
    // Other sequences: each already holds a few tokens, then prefills or decodes alongside.
    std::vector<SeqKvCache> kvs;
    kvs.reserve(others + 1);
    for (int o = 0; o <= others; ++o) kvs.emplace_back(c, 64);
    for (int o = 1; o <= others; ++o) {
      const auto pre = Tokens(3 + o % 5, 100 + o);
      std::vector<int32_t> none;
      ASSERT_TRUE(fwd.Run(pre, 0, kvs[o].blocks(), none, nullptr).ok());
    }
    std::vector<float> batched;
    for (int step = 0; step < 4; ++step) {
      std::vector<int32_t> tokens, rows;
      std::vector<SeqRun> runs;
      // The subject first in even steps, last in odd ones: position in the batch must not matter.
      auto add_subject = [&] {
        const int start = step == 0 ? 0 : 11 + step;
        const int len = step == 0 ? 12 : 1;
        tokens.insert(tokens.end(), subject.begin() + start, subject.begin() + start + len);
        runs.push_back({kvs[0].blocks(), start, len, step == 0 ? len : 0});  // prompt, then decode
        rows.push_back(int32_t(tokens.size()) - 1);
      };
      if (step % 2 == 0) add_subject();
      for (int o = 1; o <= others; ++o) {
        const int have = 3 + o % 5 + step * ((o % 3) + 1);
        const int len = (o % 3) + 1;  // 1 = decode, 2..3 = prefill chunks
        const auto more = Tokens(have + len, 200 + o);
        tokens.insert(tokens.end(), more.begin() + have, more.end());
        // Prefill chunks are prompt tokens, decode tokens generated ones; the chunks of
        // even-numbered sequences end in a generated token (a recompute after preemption), so
        // one run holds both classes.
        const int wide = len == 1 ? 0 : (o % 2 ? len : len - 1);
        runs.push_back({kvs[o].blocks(), have, len, wide});
      }
      if (step % 2 == 1) add_subject();
      // RunBatch wants ascending rows: the subject's row is its position in `tokens`.
      std::vector<float> l(V);
      ASSERT_TRUE(fwd.RunBatch(tokens, runs, rows, l.data()).ok());
      batched.insert(batched.end(), l.begin(), l.end());
    }
    ASSERT_EQ(batched.size(), alone.size());
    EXPECT_EQ(0, std::memcmp(batched.data(), alone.data(), alone.size() * sizeof(float)))
        << "with " << others << " other sequences";
  }
}

// A 4096-token prompt prefilled in one piece, in 7 uneven chunks, in 64 chunks, and in 64 chunks
// each run beside another sequence's tokens: identical bits at every position asked (each chunk's
// first and last token, the prompt's last). Long prompts are where attention dominates, so this
// is the promise any faster attention path must keep.
TEST_F(FastForwardTest, LongPromptChunkAndBatchInvariance4k) {
  const ModelConfig& c = model_->config();
  const int V = c.n_vocab, N = 4096;
  const auto prompt = Tokens(N, 9);
  FastForward fwd(*model_, pool_, N);
  // Logits of `positions` (ascending) when the prompt runs in chunks starting at `starts`,
  // alone or each chunk after one token of a neighbour sequence that decodes meanwhile.
  auto run = [&](const std::vector<int>& starts, const std::vector<int>& positions,
                 bool neighbour) {
    SeqKvCache kv(c, N);
    SeqKvCache other_kv(c, 64 + int(starts.size()));
    const auto other = Tokens(64 + int(starts.size()), 77);
    std::vector<int32_t> none;
    EXPECT_TRUE(fwd.Run(std::span(other.data(), 64), 0, other_kv.blocks(), none, nullptr).ok());
    std::vector<float> out;
    for (size_t i = 0; i < starts.size(); ++i) {
      const int begin = starts[i], end = i + 1 < starts.size() ? starts[i + 1] : N;
      std::vector<int32_t> tokens, rows;
      std::vector<SeqRun> runs;
      if (neighbour) {
        tokens.push_back(other[64 + i]);
        runs.push_back({other_kv.blocks(), 64 + int(i), 1, 0});
      }
      const int offset = int(tokens.size());
      tokens.insert(tokens.end(), prompt.begin() + begin, prompt.begin() + end);
      runs.push_back({kv.blocks(), begin, end - begin, end - begin});
      for (int p : positions)
        if (p >= begin && p < end) rows.push_back(offset + p - begin);
      std::vector<float> l(rows.size() * size_t(V));
      EXPECT_TRUE(fwd.RunBatch(tokens, runs, rows, rows.empty() ? nullptr : l.data()).ok());
      out.insert(out.end(), l.begin(), l.end());
    }
    return out;
  };
  std::vector<int> seven = {0}, sixty_four;
  for (int size : {700, 512, 811, 333, 1024, 90}) seven.push_back(seven.back() + size);
  for (int i = 0; i < 64; ++i) sixty_four.push_back(i * 64);
  std::vector<int> positions;
  for (const auto* starts : {&seven, &sixty_four}) {
    for (size_t i = 0; i < starts->size(); ++i) {
      positions.push_back((*starts)[i]);
      positions.push_back(i + 1 < starts->size() ? (*starts)[i + 1] - 1 : N - 1);
    }
  }
  std::sort(positions.begin(), positions.end());
  positions.erase(std::unique(positions.begin(), positions.end()), positions.end());

  const std::vector<float> whole = run({0}, positions, false);
  ASSERT_EQ(whole.size(), positions.size() * size_t(V));
  const auto expect_same = [&](const std::vector<float>& got, const char* how) {
    ASSERT_EQ(got.size(), whole.size()) << how;
    for (size_t i = 0; i < positions.size(); ++i)
      ASSERT_EQ(0, std::memcmp(&got[i * V], &whole[i * V], V * sizeof(float)))
          << how << ": position " << positions[i];
  };
  expect_same(run(seven, positions, false), "7 chunks");
  expect_same(run(sixty_four, positions, false), "64 chunks");
  expect_same(run(sixty_four, positions, true), "64 chunks beside another sequence");
}

// Paged KV: the same sequence in a private store and in a shared store whose block table is
// scattered (other sequences' blocks in between, blocks out of order) gives the same bits; an
// f16 cache stays close to an f32 one.
TEST_F(FastForwardTest, PagedBlockTableAndKvTypes) {
  const ModelConfig& c = model_->config();
  const int V = c.n_vocab, N = 45;  // three blocks of 16, the last one partial
  FastForward fwd(*model_, pool_, 64);
  const auto toks = Tokens(N, 6);
  std::vector<int32_t> rows(N);
  std::iota(rows.begin(), rows.end(), 0);
  std::vector<float> own(size_t(N) * V), paged(own.size()), f32(own.size());
  SeqKvCache kv(c, N);
  ASSERT_TRUE(fwd.Run(toks, 0, kv.blocks(), rows, own.data()).ok());
  KvStore shared(c, 9);
  const std::vector<int32_t> table = {7, 2, 5};
  // Another sequence fills blocks 0 and 1 first: its writes must not leak into ours.
  const std::vector<int32_t> other_table = {0, 1};
  const auto other = Tokens(32, 9);
  ASSERT_TRUE(fwd.Run(other, 0, {&shared, other_table.data(), 2}, {}, nullptr).ok());
  ASSERT_TRUE(fwd.Run(toks, 0, {&shared, table.data(), 3}, rows, paged.data()).ok());
  EXPECT_EQ(0, std::memcmp(own.data(), paged.data(), own.size() * sizeof(float)));
  SeqKvCache kv32(c, N, KvType::kF32);
  ASSERT_TRUE(fwd.Run(toks, 0, kv32.blocks(), rows, f32.data()).ok());
  for (int t = 0; t < N; ++t) {
    const double d = RelL2(&own[size_t(t) * V], &f32[size_t(t) * V], V);
    // fp16 rounding of K/V moves some int8 activation roundings downstream: a difference of the
    // size of activation quantisation itself (the golden tolerance for quantized files).
    EXPECT_LE(d, 4e-2) << t;
    EXPECT_GT(d, 0.0) << t;  // the cache types really differ
  }
}

// --kv-type q8_0: paged and private stores give the same bits, a prompt in chunks gives the bits
// of one piece, and the logits stay within the golden quantized tolerance of an f32 cache.
TEST_F(FastForwardTest, Q8KvPagedChunkedAndCloseToF32) {
  const ModelConfig& c = model_->config();
  const int V = c.n_vocab, N = 45;
  FastForward fwd(*model_, pool_, 64);
  const auto toks = Tokens(N, 6);
  std::vector<int32_t> rows(N);
  std::iota(rows.begin(), rows.end(), 0);
  std::vector<float> own(size_t(N) * V), paged(own.size()), f32(own.size());
  SeqKvCache kv(c, N, KvType::kQ8_0);
  ASSERT_TRUE(fwd.Run(toks, 0, kv.blocks(), rows, own.data()).ok());
  KvStore shared(c, 9, kDefaultKvBlockSize, KvType::kQ8_0);
  const std::vector<int32_t> table = {7, 2, 5}, other_table = {0, 1};
  ASSERT_TRUE(fwd.Run(Tokens(32, 9), 0, {&shared, other_table.data(), 2}, {}, nullptr).ok());
  ASSERT_TRUE(fwd.Run(toks, 0, {&shared, table.data(), 3}, rows, paged.data()).ok());
  EXPECT_EQ(0, std::memcmp(own.data(), paged.data(), own.size() * sizeof(float)));
  SeqKvCache chunked_kv(c, N, KvType::kQ8_0);
  std::vector<float> last(V);
  const int32_t last_row = 44 - 30;
  ASSERT_TRUE(fwd.Run(std::span(toks.data(), 30), 0, chunked_kv.blocks(), {}, nullptr).ok());
  ASSERT_TRUE(fwd.Run(std::span(toks.data() + 30, 15), 30, chunked_kv.blocks(),
                      std::span(&last_row, 1), last.data())
                  .ok());
  EXPECT_EQ(0, std::memcmp(last.data(), &own[size_t(44) * V], V * sizeof(float)));
  SeqKvCache kv32(c, N, KvType::kF32);
  ASSERT_TRUE(fwd.Run(toks, 0, kv32.blocks(), rows, f32.data()).ok());
  double worst = 0;
  for (int t = 0; t < N; ++t) {
    const double d = RelL2(&own[size_t(t) * V], &f32[size_t(t) * V], V);
    worst = std::max(worst, d);
    EXPECT_LE(d, 4e-2) << t;
    if (t > 0)
      EXPECT_GT(d, 0.0) << t;  // the cache types really differ (position 0: softmax of one)
  }
  std::printf("q8_0 KV vs f32 KV: worst rel-L2 %.2e over %d positions\n", worst, N);
}

// A partial prefix-cache hit: a block copied with KvStore::CopyBlock continues exactly like the
// block it was copied from (every layer, K and V, both cache types), so a sequence that shares
// the first 20 positions with another and then diverges gives the bits of its own cold run.
TEST_F(FastForwardTest, CopiedBlockContinuesLikeTheOriginal) {
  const ModelConfig& c = model_->config();
  const int V = c.n_vocab;
  FastForward fwd(*model_, pool_, 64);
  const auto a = Tokens(30, 3);
  auto b = a;
  const auto tail = Tokens(10, 8);
  std::copy(tail.begin(), tail.end(), b.begin() + 20);  // shares a[0, 20), then differs
  std::vector<int32_t> rows(b.size() - 20);
  std::iota(rows.begin(), rows.end(), 0);
  for (KvType type : {KvType::kF16, KvType::kF32}) {
    SCOPED_TRACE(KvTypeName(type));
    SeqKvCache cold_kv(c, int(b.size()), type);
    std::vector<float> cold(b.size() * size_t(V));
    std::vector<int32_t> all(b.size());
    std::iota(all.begin(), all.end(), 0);
    ASSERT_TRUE(fwd.Run(b, 0, cold_kv.blocks(), all, cold.data()).ok());

    KvStore shared(c, 8, kDefaultKvBlockSize, type);
    const std::vector<int32_t> ta = {3, 6};
    ASSERT_TRUE(fwd.Run(a, 0, {&shared, ta.data(), 2}, {}, nullptr).ok());
    shared.CopyBlock(6, 1);  // b's second block starts as a copy of a's
    const std::vector<int32_t> tb = {3, 1};
    std::vector<float> warm(rows.size() * size_t(V));
    const std::span<const int32_t> rest(b.data() + 20, b.size() - 20);
    ASSERT_TRUE(fwd.Run(rest, 20, {&shared, tb.data(), 2}, rows, warm.data()).ok());
    EXPECT_EQ(0,
              std::memcmp(warm.data(), cold.data() + 20 * size_t(V), warm.size() * sizeof(float)));
  }
}

TEST_F(FastForwardTest, ArgmaxMatchesFullLogits) {
  const ModelConfig& c = model_->config();
  FastForward fwd(*model_, pool_, 64);
  const auto toks = Tokens(9, 4);
  std::vector<int32_t> rows = {0, 4, 8};
  SeqKvCache k1(c, 9), k2(c, 9);
  std::vector<float> l(3 * size_t(c.n_vocab));
  std::vector<int32_t> best(3);
  ASSERT_TRUE(fwd.Run(toks, 0, k1.blocks(), rows, l.data()).ok());
  const SeqRun run{k2.blocks(), 0, 9, 9};  // prompt tokens, as Run takes them
  ASSERT_TRUE(fwd.RunBatchArgmax(toks, std::span(&run, 1), rows, best.data()).ok());
  for (int i = 0; i < 3; ++i) EXPECT_EQ(best[i], ArgMax(&l[size_t(i) * c.n_vocab], c.n_vocab));
}

TEST_F(FastForwardTest, RejectsBadBatches) {
  const ModelConfig& c = model_->config();
  FastForward fwd(*model_, pool_, 8);
  SeqKvCache kv(c, 16);  // one 16-position block
  std::vector<int32_t> toks = {1, 2, 3};
  const SeqRun short_run{kv.blocks(), 0, 2};
  std::vector<int32_t> none;
  EXPECT_FALSE(fwd.RunBatch(toks, std::span(&short_run, 1), none, nullptr).ok());
  const SeqRun past{kv.blocks(), 14, 3};
  EXPECT_FALSE(fwd.RunBatch(toks, std::span(&past, 1), none, nullptr).ok());
  std::vector<int32_t> many(9, 1);
  SeqKvCache big(c, 16);
  const SeqRun over{big.blocks(), 0, 9};
  EXPECT_FALSE(fwd.RunBatch(many, std::span(&over, 1), none, nullptr).ok());
}

}  // namespace
}  // namespace brisk
