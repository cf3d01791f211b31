#include "model/quantize_model.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <vector>

#include "formats/gguf_writer.h"
#include "model/model.h"
#include "quant/dequantize.h"
#include "runtime/thread_pool.h"
#include "tokenizer/gguf_export.h"
#include "tokenizer/tokenizer.h"

namespace brisk {
namespace {

// One source tensor, whatever the input format: GGUF name, type, data, shape (ne0 first).
struct SourceTensor {
  std::string name;
  GgmlType type;
  const uint8_t* data;
  std::vector<int64_t> dims;
};

// Converts every tensor to the type the recipe picks and adds it to the writer. Tensors already
// in their target type are copied bit for bit.
class Converter {
 public:
  Converter(const QuantizeOptions& o, const ModelConfig& c, bool has_output, int64_t total)
      : o_(o),
        c_(c),
        has_output_(has_output),
        total_(std::max<int64_t>(total, 1)),
        pool_(o.threads) {}

  void Add(const SourceTensor& t, gguf::Writer& w) {
    int64_t n = 1;
    for (int64_t x : t.dims) n *= x;
    TensorPlacement p;
    p.name = t.name;
    p.n_dims = int(t.dims.size());
    p.ne0 = t.dims[0];
    p.n_layer = c_.n_layer;
    p.has_output = has_output_;
    p.n_gqa = c_.n_head_kv > 0 ? c_.n_head / c_.n_head_kv : 1;
    if (t.name.rfind("blk.", 0) == 0) p.layer = std::atoi(t.name.c_str() + 4);
    const GgmlType target = ChooseTensorType(o_.type, p);
    const int64_t cols = t.dims[0], rows = n / cols;
    const size_t src_row = RowBytes(t.type, cols), dst_row = RowBytes(target, cols);
    if (target == t.type) {
      w.AddTensor(t.name, t.type, t.dims, t.data, src_row * size_t(rows));
    } else {
      buffers_.emplace_back(dst_row * size_t(rows));
      uint8_t* dst = buffers_.back().data();
      std::vector<float> scratch(size_t(pool_.size()) * size_t(cols));
      pool_.ParallelFor(rows, 16, [&](int64_t r0, int64_t r1, int thread) {
        float* row = &scratch[size_t(thread) * size_t(cols)];
        for (int64_t r = r0; r < r1; ++r) {
          DequantizeRow(t.type, t.data + size_t(r) * src_row, row, cols);
          if (target == GgmlType::kF32)
            std::memcpy(dst + size_t(r) * dst_row, row, size_t(cols) * 4);
          else
            QuantizeRow(target, row, dst + size_t(r) * dst_row, cols);
        }
      });
      w.AddTensor(t.name, target, t.dims, dst, buffers_.back().size());
    }
    done_ += n;
    if (o_.progress) o_.progress(double(done_) / double(total_));
  }

 private:
  const QuantizeOptions& o_;
  const ModelConfig& c_;
  bool has_output_;
  int64_t total_, done_ = 0;
  ThreadPool pool_;
  std::vector<std::vector<uint8_t>> buffers_;  // converted data, alive until Write()
};

// The tensors of a model loaded from an HF directory, named and ordered as in a GGUF file.
std::vector<SourceTensor> WeightTensors(const Model& m) {
  std::vector<SourceTensor> out;
  auto add = [&](const WeightTensor& t) {
    if (!t.present()) return;
    std::vector<int64_t> dims = {t.cols};
    if (t.rows > 1) dims.push_back(t.rows);
    out.push_back({t.name, t.type, t.data, dims});
  };
  const ModelWeights& w = m.weights();
  add(w.token_embd);
  if (!m.config().tied_embeddings) add(w.output);
  add(w.output_norm);
  for (const LayerWeights& L : w.layers)
    for (const WeightTensor* t : {&L.attn_norm, &L.wq, &L.wk, &L.wv, &L.bq, &L.bk, &L.bv, &L.q_norm,
                                  &L.k_norm, &L.wo, &L.ffn_norm, &L.w_gate, &L.w_up, &L.w_down})
      add(*t);
  return out;
}

// GGUF metadata for a model that came without any (HF directory): hyper-parameters,
// tokenizer and chat template.
Status WriteHfMetadata(const Model& m, gguf::Writer& w) {
  const ModelConfig& c = m.config();
  if (m.hf_tokenizer_json().empty())
    return Status::Error(m.path() + ": no tokenizer.json to carry into the GGUF file");
  BRISK_ASSIGN_OR_RETURN(Tokenizer tok, Tokenizer::FromHfJson(m.hf_tokenizer_json()));
  const std::string& a = c.arch_name;
  w.SetString("general.architecture", a);
  w.SetString("general.name",
              c.name.empty() ? std::filesystem::path(m.path()).filename().string() : c.name);
  w.SetU32(a + ".context_length", uint32_t(c.context_length));
  w.SetU32(a + ".embedding_length", uint32_t(c.n_embd));
  w.SetU32(a + ".block_count", uint32_t(c.n_layer));
  w.SetU32(a + ".feed_forward_length", uint32_t(c.n_ff));
  w.SetU32(a + ".attention.head_count", uint32_t(c.n_head));
  w.SetU32(a + ".attention.head_count_kv", uint32_t(c.n_head_kv));
  if (c.qk_norm || c.head_dim * c.n_head != c.n_embd) {
    w.SetU32(a + ".attention.key_length", uint32_t(c.head_dim));
    w.SetU32(a + ".attention.value_length", uint32_t(c.head_dim));
  }
  w.SetF32(a + ".rope.freq_base", float(c.rope_theta));
  w.SetF32(a + ".attention.layer_norm_rms_epsilon", float(c.rms_eps));
  if (c.pooling != Pooling::kNone) w.SetU32(a + ".pooling_type", uint32_t(c.pooling));
  WriteGgufTokenizer(tok, w);
  if (!m.chat_template().empty()) w.SetString("tokenizer.chat_template", m.chat_template());
  return Status::Ok();
}

}  // namespace

Status QuantizeGguf(const std::string& input, const std::string& output, const QuantizeOptions& o) {
  if (!CanWriteFileType(o.type))
    return Status::Error("brisk cannot write file type " + FileTypeString(o.type));
  // Loading the model validates architecture and shapes before any work is done.
  BRISK_ASSIGN_OR_RETURN(std::unique_ptr<Model> model, Model::Load(input));
  const gguf::File* src = model->gguf();
  const ModelConfig& c = model->config();

  gguf::Writer w;
  std::vector<SourceTensor> tensors;
  if (src) {
    for (const auto& [key, value] : src->metadata())
      if (key != "general.file_type" && key != "general.quantization_version") w.SetRaw(key, value);
    for (const auto& t : src->tensors())
      tensors.push_back({t.name, t.type, t.data, std::vector<int64_t>(t.ne, t.ne + t.n_dims)});
  } else {
    BRISK_RETURN_IF_ERROR(WriteHfMetadata(*model, w));
    tensors = WeightTensors(*model);
  }
  w.SetU32("general.file_type", uint32_t(o.type));
  w.SetU32("general.quantization_version", 2);

  const bool has_output = std::any_of(tensors.begin(), tensors.end(), [](const SourceTensor& t) {
    return t.name == "output.weight";
  });
  int64_t total = 0;
  for (const SourceTensor& t : tensors) {
    int64_t n = 1;
    for (int64_t x : t.dims) n *= x;
    total += n;
  }
  Converter conv(o, c, has_output, total);
  for (const SourceTensor& t : tensors) conv.Add(t, w);
  return w.Write(output);
}

}  // namespace brisk
