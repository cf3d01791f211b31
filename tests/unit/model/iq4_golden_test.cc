// IQ4_NL / IQ4_XS models made by llama.cpp's quantizer (tests/data/golden/README.md): the fast
// path under every ISA against the float reference forward on the same (dequantized) weights,
// with the quantized-type tolerance of ../shared/golden/README.md (fast path vs ref64: 4e-2
// rel-L2, argmax agreement >= 90%; the float reference itself is within 1e-4 of ref64), and
// against llama.cpp's logits of the same files with the same tolerance.
#include <gtest/gtest.h>

#include <map>
#include <numeric>

#include "formats/gguf.h"
#include "formats/logits_file.h"
#include "golden_util.h"
#include "model/fast_forward.h"
#include "model/forward.h"
#include "runtime/cpu_features.h"
#include "test_paths.h"

namespace brisk {
namespace {

using golden::ArgMax;
using golden::ReadSequences;
using golden::RelL2;

struct Iq4Model {
  const char* name;
  int min_nl, min_xs;  // tensors of each type the file must hold (it is llama.cpp's mix)
};
const Iq4Model kModels[] = {
    {"tiny-untied-iq4_nl", 19, 0},  // every matrix but attn_v (Q5_K) and output (Q6_K)
    {"tiny-untied-iq4_xs", 0, 19},
};

class Iq4Golden : public ::testing::TestWithParam<Iq4Model> {};

TEST_P(Iq4Golden, EveryIsaWithinQuantToleranceOfReference) {
  const Iq4Model& m = GetParam();
  const std::string path = test::DataPath("golden/" + std::string(m.name) + ".gguf");
  const std::string seq_path =
      test::FindGoldenOrData("logits/sequences.txt", "golden/sequences.txt");
  {
    auto f = gguf::File::Open(path);
    ASSERT_TRUE(f.ok()) << f.message();
    std::map<GgmlType, int> n;
    for (const auto& t : f->tensors()) ++n[t.type];
    EXPECT_GE(n[GgmlType::kIQ4_NL], m.min_nl);
    EXPECT_GE(n[GgmlType::kIQ4_XS], m.min_xs);
  }
  auto model = Model::Load(path);
  ASSERT_TRUE(model.ok()) << model.message();
  const int V = (*model)->config().n_vocab;
  const auto seqs = ReadSequences(seq_path);
  ASSERT_EQ(seqs.size(), 3u);
  ThreadPool pool(2);

  // The float reference on the dequantized weights, once per sequence.
  std::vector<std::vector<float>> ref(seqs.size());
  {
    ReferenceForward rf(**model, pool, 32);
    for (size_t s = 0; s < seqs.size(); ++s) {
      KvCache kv((*model)->config(), int(seqs[s].size()));
      std::vector<int32_t> rows(seqs[s].size());
      std::iota(rows.begin(), rows.end(), 0);
      ref[s].resize(seqs[s].size() * size_t(V));
      ASSERT_TRUE(rf.Run(seqs[s], 0, kv, rows, ref[s].data()).ok());
    }
  }
  for (Isa isa : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512}) {
    if (!IsaSupported(isa)) continue;
    SetIsaForTesting(isa);
    FastForward fwd(**model, pool, 64);  // 64 < 100: the long sequence runs in two chunks
    int positions = 0, agree = 0, llama_positions = 0, llama_agree = 0;
    for (size_t s = 0; s < seqs.size(); ++s) {
      const auto& toks = seqs[s];
      SeqKvCache kv((*model)->config(), int(toks.size()), KvType::kF32);
      std::vector<int32_t> rows(toks.size());
      std::iota(rows.begin(), rows.end(), 0);
      std::vector<float> out(toks.size() * size_t(V));
      ASSERT_TRUE(fwd.Run(toks, 0, kv.blocks(), rows, out.data()).ok());
      double worst = 0;
      for (size_t t = 0; t < toks.size(); ++t) {
        worst = std::max(worst, RelL2(&out[t * V], &ref[s][t * V], V));
        agree += ArgMax(&out[t * V], V) == ArgMax(&ref[s][t * V], V);
        ++positions;
      }
      // llama.cpp's own logits of the same file.
      double worst_llama = -1;
      auto llama = ReadLogitsFile(
          test::DataPath("golden/" + std::string(m.name) + ".seq" + std::to_string(s) + ".bin"));
      if (llama.ok()) {
        EXPECT_EQ(llama->n_tokens, int(toks.size()));
        EXPECT_EQ(llama->n_vocab, V);
        worst_llama = 0;
        for (size_t t = 0; t < toks.size(); ++t) {
          worst_llama = std::max(worst_llama, RelL2(&out[t * V], llama->row(int(t)), V));
          llama_agree += ArgMax(&out[t * V], V) == ArgMax(llama->row(int(t)), V);
          ++llama_positions;
        }
        EXPECT_LE(worst_llama, 4e-2) << m.name << " " << IsaName(isa) << " seq" << s;
      }
      std::printf("%-20s %-6s seq%zu rel-L2 vs float reference %.2e  vs llama.cpp %.2e\n", m.name,
                  std::string(IsaName(isa)).c_str(), s, worst, worst_llama);
      EXPECT_LE(worst, 4e-2) << m.name << " " << IsaName(isa) << " seq" << s;
    }
    std::printf("%-20s %-6s argmax agreement %d/%d\n", m.name, std::string(IsaName(isa)).c_str(),
                agree, positions);
    EXPECT_GE(double(agree) / positions, 0.9) << m.name << " " << IsaName(isa);
    std::printf("%-20s %-6s argmax agreement with llama.cpp %d/%d\n", m.name,
                std::string(IsaName(isa)).c_str(), llama_agree, llama_positions);
    EXPECT_GT(llama_positions, 0) << "tests/data/golden lacks " << m.name << "'s llama.cpp logits";
    if (llama_positions > 0)
      EXPECT_GE(double(llama_agree) / llama_positions, 0.9) << m.name << " " << IsaName(isa);
  }
  SetIsaForTesting(BestIsa());
}

INSTANTIATE_TEST_SUITE_P(Files, Iq4Golden, ::testing::ValuesIn(kModels),
                         [](const auto& info) { return golden::ParamName(info.param.name); });

}  // namespace
}  // namespace brisk
