#include "model/weights.h"

#include "quant/dequantize.h"

namespace brisk {

std::vector<float> DequantizeAll(const WeightTensor& t) {
  if (!t.present()) return {};
  std::vector<float> out(size_t(t.cols) * size_t(t.rows));
  DequantizeRow(t.type, t.data, out.data(), int64_t(out.size()));
  return out;
}
namespace {

std::string ShapeString(int64_t cols, int64_t rows) {
  return "[" + std::to_string(cols) + ", " + std::to_string(rows) + "]";
}

// Binds `name` with GGUF shape {cols, rows} (rows == 1 for vectors).
Status Bind(const gguf::File& f, const std::string& name, int64_t cols, int64_t rows,
            bool float_only, WeightTensor* out) {
  const gguf::TensorInfo* t = f.FindTensor(name);
  if (!t) return Status::Error("missing tensor '" + name + "'");
  const bool shape_ok = rows == 1 ? (t->n_elements == cols && t->ne[0] == cols)
                                  : (t->n_dims == 2 && t->ne[0] == cols && t->ne[1] == rows);
  if (!shape_ok) {
    std::string found = "[";
    for (int d = 0; d < t->n_dims; ++d) found += (d ? ", " : "") + std::to_string(t->ne[d]);
    return Status::Error("tensor '" + name + "' has shape " + found + "], expected " +
                         (rows == 1 ? "[" + std::to_string(cols) + "]" : ShapeString(cols, rows)) +
                         " for this architecture");
  }
  if (float_only && t->type != GgmlType::kF32 && t->type != GgmlType::kF16 &&
      t->type != GgmlType::kBF16)
    return Status::Error("tensor '" + name + "' must be a float type, found " +
                         std::string(TypeName(t->type)));
  out->name = name;
  out->type = t->type;
  out->data = t->data;
  out->cols = cols;
  out->rows = rows;
  return Status::Ok();
}

}  // namespace

Result<ModelWeights> WeightsFromGguf(const gguf::File& f, const ModelConfig& c) {
  ModelWeights w;
  const int64_t d = c.n_embd, q = c.q_dim(), kv = c.kv_dim(), ff = c.n_ff, hd = c.head_dim;
  BRISK_RETURN_IF_ERROR(Bind(f, "token_embd.weight", d, c.n_vocab, false, &w.token_embd));
  BRISK_RETURN_IF_ERROR(Bind(f, "output_norm.weight", d, 1, true, &w.output_norm));
  if (c.tied_embeddings) {
    w.output = w.token_embd;
  } else {
    BRISK_RETURN_IF_ERROR(Bind(f, "output.weight", d, c.n_vocab, false, &w.output));
  }
  if (f.FindTensor("cls.output.weight"))
    BRISK_RETURN_IF_ERROR(Bind(f, "cls.output.weight", d, 2, false, &w.cls_output));
  w.layers.resize(c.n_layer);
  for (int l = 0; l < c.n_layer; ++l) {
    LayerWeights& L = w.layers[l];
    const std::string p = "blk." + std::to_string(l) + ".";
    BRISK_RETURN_IF_ERROR(Bind(f, p + "attn_norm.weight", d, 1, true, &L.attn_norm));
    BRISK_RETURN_IF_ERROR(Bind(f, p + "attn_q.weight", d, q, false, &L.wq));
    BRISK_RETURN_IF_ERROR(Bind(f, p + "attn_k.weight", d, kv, false, &L.wk));
    BRISK_RETURN_IF_ERROR(Bind(f, p + "attn_v.weight", d, kv, false, &L.wv));
    BRISK_RETURN_IF_ERROR(Bind(f, p + "attn_output.weight", q, d, false, &L.wo));
    if (c.qkv_bias) {
      BRISK_RETURN_IF_ERROR(Bind(f, p + "attn_q.bias", q, 1, true, &L.bq));
      BRISK_RETURN_IF_ERROR(Bind(f, p + "attn_k.bias", kv, 1, true, &L.bk));
      BRISK_RETURN_IF_ERROR(Bind(f, p + "attn_v.bias", kv, 1, true, &L.bv));
    }
    if (c.qk_norm) {
      BRISK_RETURN_IF_ERROR(Bind(f, p + "attn_q_norm.weight", hd, 1, true, &L.q_norm));
      BRISK_RETURN_IF_ERROR(Bind(f, p + "attn_k_norm.weight", hd, 1, true, &L.k_norm));
    }
    BRISK_RETURN_IF_ERROR(Bind(f, p + "ffn_norm.weight", d, 1, true, &L.ffn_norm));
    BRISK_RETURN_IF_ERROR(Bind(f, p + "ffn_gate.weight", d, ff, false, &L.w_gate));
    BRISK_RETURN_IF_ERROR(Bind(f, p + "ffn_up.weight", d, ff, false, &L.w_up));
    BRISK_RETURN_IF_ERROR(Bind(f, p + "ffn_down.weight", ff, d, false, &L.w_down));
  }
  return w;
}

}  // namespace brisk
