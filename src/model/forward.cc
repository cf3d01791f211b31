#include "model/forward.h"

#include <algorithm>
#include <cmath>

#include "kernels/cpu/reference.h"
#include "quant/dequantize.h"

namespace brisk {
namespace {

ref::Matrix AsMatrix(const WeightTensor& t) { return {t.type, t.data, t.rows, t.cols}; }

}  // namespace

ReferenceForward::ReferenceForward(const Model& model, ThreadPool& pool, int max_batch_tokens)
    : model_(model), c_(model.config()), pool_(pool), max_tokens_(std::max(1, max_batch_tokens)) {
  const ModelWeights& w = model.weights();
  for (const LayerWeights& L : w.layers) {
    lv_.push_back({DequantizeAll(L.attn_norm), DequantizeAll(L.ffn_norm), DequantizeAll(L.bq),
                   DequantizeAll(L.bk), DequantizeAll(L.bv), DequantizeAll(L.q_norm),
                   DequantizeAll(L.k_norm)});
  }
  output_norm_ = DequantizeAll(w.output_norm);
  const size_t T = size_t(max_tokens_);
  x_.resize(T * c_.n_embd);
  h_.resize(T * c_.n_embd);
  tmp_.resize(T * c_.n_embd);
  q_.resize(T * c_.q_dim());
  att_.resize(T * c_.q_dim());
  k_.resize(T * c_.kv_dim());
  v_.resize(T * c_.kv_dim());
  gate_.resize(T * c_.n_ff);
  up_.resize(T * c_.n_ff);
  const int max_cols = std::max({c_.n_embd, c_.n_ff, c_.q_dim()});
  scores_.resize(size_t(pool.size()) * c_.context_length);
  scratch_.resize(size_t(pool.size()) * max_cols);
}

Status ReferenceForward::Run(std::span<const int32_t> tokens, int start_pos, KvCache& kv,
                             std::span<const int32_t> logit_rows, float* logits, float* hidden) {
  const int64_t n_total = int64_t(tokens.size());
  const int64_t limit = std::min(kv.capacity(), c_.context_length);
  if (start_pos < 0 || n_total > limit - start_pos)
    return Status::Error("positions " + std::to_string(start_pos) + ".." +
                         std::to_string(start_pos + n_total) + " exceed the context limit " +
                         std::to_string(limit) + " (KV cache capacity / model context length)");
  for (int32_t t : tokens)
    if (t < 0 || t >= c_.n_vocab)
      return Status::Error("token id " + std::to_string(t) + " is outside the vocabulary (0.." +
                           std::to_string(c_.n_vocab - 1) + ")");
  for (size_t i = 0; i < logit_rows.size(); ++i)
    if (logit_rows[i] < 0 || logit_rows[i] >= n_total ||
        (i > 0 && logit_rows[i] <= logit_rows[i - 1]))
      return Status::Error("logit rows must be ascending indices into the tokens");

  const ModelWeights& w = model_.weights();
  size_t next_logit = 0;
  for (int64_t c0 = 0; c0 < n_total; c0 += max_tokens_) {
    const int n = int(std::min<int64_t>(max_tokens_, n_total - c0));
    const int pos0 = start_pos + int(c0);
    for (int t = 0; t < n; ++t)
      DequantizeRow(w.token_embd.type, w.token_embd.row(tokens[c0 + t]), &x_[size_t(t) * c_.n_embd],
                    c_.n_embd);
    for (int l = 0; l < c_.n_layer; ++l) Layer(l, n, pos0, kv);

    // Final norm + lm_head only for the rows that asked for logits.
    int n_rows = 0;
    const size_t first_logit = next_logit;
    while (next_logit < logit_rows.size() && logit_rows[next_logit] < c0 + n) {
      const int t = int(logit_rows[next_logit] - c0);
      ref::RmsNorm(&x_[size_t(t) * c_.n_embd], output_norm_.data(), c_.n_embd, c_.rms_eps,
                   &h_[size_t(n_rows) * c_.n_embd]);
      ++n_rows;
      ++next_logit;
    }
    if (n_rows > 0 && hidden)
      std::copy_n(h_.data(), size_t(n_rows) * c_.n_embd, hidden + first_logit * size_t(c_.n_embd));
    if (n_rows > 0 && logits)
      ref::Matmul(pool_, AsMatrix(w.output), h_.data(), n_rows,
                  logits + first_logit * size_t(c_.n_vocab), scratch_.data());
  }
  return Status::Ok();
}

void ReferenceForward::Layer(int l, int n, int pos0, KvCache& kv) {
  const LayerWeights& L = model_.weights().layers[l];
  const LayerVectors& V = lv_[l];
  const int d = c_.n_embd, qd = c_.q_dim(), kvd = c_.kv_dim(), hd = c_.head_dim;

  for (int t = 0; t < n; ++t)
    ref::RmsNorm(&x_[size_t(t) * d], V.attn_norm.data(), d, c_.rms_eps, &h_[size_t(t) * d]);
  ref::Matmul(pool_, AsMatrix(L.wq), h_.data(), n, q_.data(), scratch_.data());
  ref::Matmul(pool_, AsMatrix(L.wk), h_.data(), n, k_.data(), scratch_.data());
  ref::Matmul(pool_, AsMatrix(L.wv), h_.data(), n, v_.data(), scratch_.data());
  for (int t = 0; t < n; ++t) {
    float* q = &q_[size_t(t) * qd];
    float* k = &k_[size_t(t) * kvd];
    float* v = &v_[size_t(t) * kvd];
    if (c_.qkv_bias) {
      for (int i = 0; i < qd; ++i) q[i] += V.bq[i];
      for (int i = 0; i < kvd; ++i) k[i] += V.bk[i];
      for (int i = 0; i < kvd; ++i) v[i] += V.bv[i];
    }
    for (int h = 0; h < c_.n_head; ++h) {
      if (c_.qk_norm) ref::RmsNorm(q + h * hd, V.q_norm.data(), hd, c_.rms_eps, q + h * hd);
      ref::RopeNeox(q + h * hd, hd, pos0 + t, c_.rope_theta);
    }
    for (int h = 0; h < c_.n_head_kv; ++h) {
      if (c_.qk_norm) ref::RmsNorm(k + h * hd, V.k_norm.data(), hd, c_.rms_eps, k + h * hd);
      ref::RopeNeox(k + h * hd, hd, pos0 + t, c_.rope_theta);
    }
    std::copy(k, k + kvd, kv.k(l, pos0 + t));
    std::copy(v, v + kvd, kv.v(l, pos0 + t));
  }
  Attention(l, n, pos0, kv);
  ref::Matmul(pool_, AsMatrix(L.wo), att_.data(), n, tmp_.data(), scratch_.data());
  for (size_t i = 0; i < size_t(n) * d; ++i) x_[i] += tmp_[i];

  for (int t = 0; t < n; ++t)
    ref::RmsNorm(&x_[size_t(t) * d], V.ffn_norm.data(), d, c_.rms_eps, &h_[size_t(t) * d]);
  ref::Matmul(pool_, AsMatrix(L.w_gate), h_.data(), n, gate_.data(), scratch_.data());
  ref::Matmul(pool_, AsMatrix(L.w_up), h_.data(), n, up_.data(), scratch_.data());
  for (size_t i = 0; i < size_t(n) * c_.n_ff; ++i) gate_[i] = ref::Silu(gate_[i]) * up_[i];
  ref::Matmul(pool_, AsMatrix(L.w_down), gate_.data(), n, tmp_.data(), scratch_.data());
  for (size_t i = 0; i < size_t(n) * d; ++i) x_[i] += tmp_[i];
}

void ReferenceForward::Attention(int l, int n, int pos0, const KvCache& kv) {
  const int hd = c_.head_dim, qd = c_.q_dim(), group = c_.group_size();
  const float scale = float(1.0 / std::sqrt(double(hd)));
  const int n_ctx_max = pos0 + n;
  // Per-thread score rows, planned for the full context length at construction.
  pool_.ParallelFor(int64_t(n) * c_.n_head, 1, [&](int64_t i0, int64_t i1, int thread) {
    float* scores = &scores_[size_t(thread) * n_ctx_max];
    for (int64_t i = i0; i < i1; ++i) {
      const int t = int(i / c_.n_head), h = int(i % c_.n_head), g = h / group;
      const int n_ctx = pos0 + t + 1;  // causal: positions 0..pos0+t
      const float* q = &q_[size_t(t) * qd + size_t(h) * hd];
      float mx = -INFINITY;
      for (int p = 0; p < n_ctx; ++p) {
        scores[p] = ref::Dot(q, kv.k(l, p) + g * hd, hd) * scale;
        mx = std::max(mx, scores[p]);
      }
      double sum = 0;
      for (int p = 0; p < n_ctx; ++p) {
        scores[p] = std::exp(scores[p] - mx);
        sum += scores[p];
      }
      const float inv = float(1.0 / sum);
      float* out = &att_[size_t(t) * qd + size_t(h) * hd];
      std::fill(out, out + hd, 0.0f);
      for (int p = 0; p < n_ctx; ++p) {
        const float wgt = scores[p] * inv;
        const float* v = kv.v(l, p) + g * hd;
        for (int j = 0; j < hd; ++j) out[j] += wgt * v[j];
      }
    }
  });
}

}  // namespace brisk
