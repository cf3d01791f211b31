#include "model/synth.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "formats/gguf_writer.h"
#include "model/embedded_vocab.h"
#include "quant/dequantize.h"
#include "runtime/thread_pool.h"
#include "util/splitmix64.h"

namespace brisk {
namespace {

// One SplitMix64 stream per (tensor, row chunk) keeps the bytes independent of the thread count.
struct SplitMix {
  uint64_t s;
  uint64_t Next() { return SplitMix64(s); }
};

uint64_t HashName(const std::string& s, uint64_t seed) {
  uint64_t h = 1469598103934665603ull ^ seed;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

// Approximately N(0, sigma): the sum of four 16-bit uniforms (Irwin-Hall) — cheap and smooth
// enough for weights whose values only need realistic magnitudes.
void FillNormal(SplitMix& rng, float sigma, float mean, float* out, int64_t n) {
  // Sum of 4 U(0,1) has mean 2 and variance 4/12.
  const float scale = sigma / std::sqrt(4.0f / 12.0f) / 65536.0f;
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t r = rng.Next();
    const float u =
        float(r & 0xffff) + float((r >> 16) & 0xffff) + float((r >> 32) & 0xffff) + float(r >> 48);
    out[i] = mean + (u - 2.0f * 65536.0f) * scale;
  }
}

struct PlannedTensor {
  std::string name;
  std::vector<int64_t> dims;  // ne0 first
  float sigma, mean;
  GgmlType type;
  std::vector<uint8_t> data;
};

void SetSynthMetadata(const SynthOptions& o, const SynthShape& shape, const gguf::File& vocab,
                      gguf::Writer* w) {
  const bool qwen3 = shape.arch == Arch::kQwen3;
  const std::string arch = qwen3 ? "qwen3" : "qwen2";
  w->SetString("general.architecture", arch);
  w->SetString("general.name", "brisk synthetic " + shape.name + " (random weights)");
  w->SetU32("general.file_type", uint32_t(o.type));
  w->SetU32("general.quantization_version", 2);
  w->SetBool(kSyntheticKey, true);
  w->SetU64("brisk.synthetic.seed", o.seed);
  w->SetU32(arch + ".context_length", uint32_t(shape.context_length));
  w->SetU32(arch + ".embedding_length", uint32_t(shape.n_embd));
  w->SetU32(arch + ".block_count", uint32_t(shape.n_layer));
  w->SetU32(arch + ".feed_forward_length", uint32_t(shape.n_ff));
  w->SetU32(arch + ".attention.head_count", uint32_t(shape.n_head));
  w->SetU32(arch + ".attention.head_count_kv", uint32_t(shape.n_head_kv));
  if (qwen3 || shape.head_dim * shape.n_head != shape.n_embd) {
    w->SetU32(arch + ".attention.key_length", uint32_t(shape.head_dim));
    w->SetU32(arch + ".attention.value_length", uint32_t(shape.head_dim));
  }
  w->SetF32(arch + ".rope.freq_base", 1e6f);
  w->SetF32(arch + ".attention.layer_norm_rms_epsilon", 1e-6f);
  if (shape.pooling != Pooling::kNone) w->SetU32(arch + ".pooling_type", uint32_t(shape.pooling));
  for (const auto& [key, value] : vocab.metadata())
    if (key.rfind("tokenizer.", 0) == 0) w->SetRaw(key, value);
}

// Every tensor of the shape, in file order, with its type for `file_type` (tied embeddings, as
// all small Qwen models have).
std::vector<PlannedTensor> PlanSynthTensors(const SynthShape& shape, FileType file_type,
                                            int64_t n_vocab) {
  const bool qwen3 = shape.arch == Arch::kQwen3;
  const int64_t d = shape.n_embd, q = int64_t(shape.n_head) * shape.head_dim,
                kv = int64_t(shape.n_head_kv) * shape.head_dim, ff = shape.n_ff;
  std::vector<PlannedTensor> plan;
  auto add = [&](std::string name, std::vector<int64_t> dims, float sigma, float mean, int layer) {
    TensorPlacement p;
    p.name = name;
    p.n_dims = int(dims.size());
    p.ne0 = dims[0];
    p.layer = layer;
    p.n_layer = shape.n_layer;
    p.has_output = false;
    p.n_gqa = shape.n_head_kv > 0 ? shape.n_head / shape.n_head_kv : 1;
    GgmlType t = ChooseTensorType(file_type, p);
    plan.push_back({std::move(name), std::move(dims), sigma, mean, t, {}});
  };
  add("token_embd.weight", {d, n_vocab}, 0.02f, 0, -1);
  for (int l = 0; l < shape.n_layer; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    add(b + "attn_norm.weight", {d}, 0.02f, 1.0f, l);
    add(b + "attn_q.weight", {d, q}, 0.02f, 0, l);
    add(b + "attn_k.weight", {d, kv}, 0.02f, 0, l);
    add(b + "attn_v.weight", {d, kv}, 0.02f, 0, l);
    if (!qwen3) {
      add(b + "attn_q.bias", {q}, 0.02f, 0, l);
      add(b + "attn_k.bias", {kv}, 0.02f, 0, l);
      add(b + "attn_v.bias", {kv}, 0.02f, 0, l);
    } else {
      add(b + "attn_q_norm.weight", {shape.head_dim}, 0.02f, 1.0f, l);
      add(b + "attn_k_norm.weight", {shape.head_dim}, 0.02f, 1.0f, l);
    }
    add(b + "attn_output.weight", {q, d}, 0.02f, 0, l);
    add(b + "ffn_norm.weight", {d}, 0.02f, 1.0f, l);
    add(b + "ffn_gate.weight", {d, ff}, 0.02f, 0, l);
    add(b + "ffn_up.weight", {d, ff}, 0.02f, 0, l);
    add(b + "ffn_down.weight", {ff, d}, 0.02f, 0, l);
  }
  add("output_norm.weight", {d}, 0.02f, 1.0f, -1);
  return plan;
}

// Generates t.data: rows in chunks of kChunkRows, each chunk from its own stream, in parallel.
// `scratch` holds `stride` floats per pool thread.
void FillTensor(PlannedTensor& t, uint64_t seed, ThreadPool& pool, std::vector<float>& scratch,
                size_t stride) {
  constexpr int64_t kChunkRows = 64;
  const int64_t cols = t.dims[0], rows = t.dims.size() > 1 ? t.dims[1] : 1;
  const size_t row_bytes = RowBytes(t.type, cols);
  t.data.resize(row_bytes * size_t(rows));
  const uint64_t tensor_seed = HashName(t.name, seed);
  const int64_t n_chunks = (rows + kChunkRows - 1) / kChunkRows;
  pool.ParallelFor(n_chunks, 1, [&](int64_t c0, int64_t c1, int thread) {
    float* row = &scratch[size_t(thread) * stride];
    for (int64_t c = c0; c < c1; ++c) {
      SplitMix rng{tensor_seed + uint64_t(c) * 0x632be59bd9b4e019ull};
      for (int64_t r = c * kChunkRows; r < std::min(rows, (c + 1) * kChunkRows); ++r) {
        FillNormal(rng, t.sigma, t.mean, row, cols);
        uint8_t* dst = t.data.data() + size_t(r) * row_bytes;
        if (t.type == GgmlType::kF32)
          std::memcpy(dst, row, size_t(cols) * 4);
        else
          QuantizeRow(t.type, row, dst, cols);
      }
    }
  });
}

// llama.cpp's reranker head: the rows of "yes" and "no" of the (tied) lm_head, bytes copied.
Result<PlannedTensor> RerankHeadTensor(const PlannedTensor& embd,
                                       const std::vector<std::string_view>& tokens) {
  PlannedTensor cls{"cls.output.weight", {embd.dims[0], 2}, 0, 0, embd.type, {}};
  const size_t row_bytes = RowBytes(embd.type, embd.dims[0]);
  for (std::string_view word : {"yes", "no"}) {
    auto it = std::find(tokens.begin(), tokens.end(), word);
    if (it == tokens.end())
      return Status::Error("the vocabulary has no token '" + std::string(word) + "'");
    const uint8_t* row = embd.data.data() + size_t(it - tokens.begin()) * row_bytes;
    cls.data.insert(cls.data.end(), row, row + row_bytes);
  }
  return cls;
}

int64_t Elements(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t x : dims) n *= x;
  return n;
}

}  // namespace

const std::vector<SynthShape>& SynthShapes() {
  static const std::vector<SynthShape> kShapes = {
      {"qwen2.5-0.5b", Arch::kQwen2, 896, 24, 14, 2, 64, 4864, 32768},
      {"qwen2.5-1.5b", Arch::kQwen2, 1536, 28, 12, 2, 128, 8960, 32768},
      {"qwen3-0.6b", Arch::kQwen3, 1024, 28, 16, 8, 128, 3072, 40960},
      {"tiny", Arch::kQwen2, 384, 2, 6, 2, 64, 1024, 32768},
      {"qwen3-embedding-tiny", Arch::kQwen3, 256, 2, 4, 2, 128, 768, 32768, Pooling::kLast},
      {"qwen3-reranker-tiny", Arch::kQwen3, 256, 2, 4, 2, 128, 768, 32768, Pooling::kRank},
  };
  return kShapes;
}

Result<SynthShape> FindSynthShape(const std::string& name) {
  std::string known;
  for (const SynthShape& s : SynthShapes()) {
    if (s.name == name) return s;
    known += (known.empty() ? "" : ", ") + s.name;
  }
  return Status::Error("unknown shape '" + name + "' (known: " + known + ")");
}

bool IsSynthetic(const Model& model) {
  if (!model.gguf()) return false;
  auto v = model.gguf()->GetBool(kSyntheticKey);
  return v.ok() && *v;
}

Status WriteSynthModel(const SynthOptions& o, const std::string& path) {
  BRISK_ASSIGN_OR_RETURN(SynthShape shape, FindSynthShape(o.shape));
  if (o.pooling) shape.pooling = *o.pooling;
  if (!CanWriteFileType(o.type))
    return Status::Error("brisk cannot write file type " + FileTypeString(o.type));
  BRISK_ASSIGN_OR_RETURN(gguf::File vocab,
                         gguf::File::FromBuffer(EmbeddedVocabData(), EmbeddedVocabSize(), "vocab"));
  BRISK_ASSIGN_OR_RETURN(auto tokens, vocab.GetStringArray("tokenizer.ggml.tokens"));
  gguf::Writer w;
  SetSynthMetadata(o, shape, vocab, &w);
  std::vector<PlannedTensor> plan = PlanSynthTensors(shape, o.type, int64_t(tokens.size()));

  int64_t total = 0, done = 0;
  for (const auto& t : plan) total += Elements(t.dims);
  ThreadPool pool(o.threads);
  const size_t stride = size_t(std::max<int64_t>(shape.n_embd, shape.n_ff));
  std::vector<float> scratch(size_t(pool.size()) * stride);
  for (PlannedTensor& t : plan) {
    FillTensor(t, o.seed, pool, scratch, stride);
    done += Elements(t.dims);
    if (o.progress) o.progress(double(done) / double(total));
    w.AddTensor(t.name, t.type, t.dims, t.data.data(), t.data.size());
  }
  PlannedTensor cls{};  // outlives Write(), which reads the data
  if (shape.pooling == Pooling::kRank) {
    BRISK_ASSIGN_OR_RETURN(cls, RerankHeadTensor(plan.front(), tokens));
    w.AddTensor(cls.name, cls.type, cls.dims, cls.data.data(), cls.data.size());
  }
  return w.Write(path);
}

}  // namespace brisk
