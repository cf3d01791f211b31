#include "model/fast_forward.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/cpu/attention.h"
#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/reference.h"
#include "model/numerics_class.h"
#include "quant/blocks.h"
#include "quant/dequantize.h"
#include "util/fp16.h"

namespace brisk {
namespace {

WeightSource Src(const WeightTensor& t) { return {t.type, t.data, t.rows}; }

// A view of rows [t0, t1) of a quantised-activation buffer.
Q8Acts SubView(const Q8Acts& a, int t0) {
  Q8Acts s = a;
  s.qs += t0 * a.qs_stride;
  s.meta += t0 * a.meta_stride;
  s.capacity = a.capacity - t0;
  s.n_tokens = 0;
  return s;
}

constexpr int64_t kTokenGrain = 4;  // tokens per parallel chunk for per-token ops

// One position's kKvQ8Group values as a q8_0 block (the weights' own Q8_0 quantizer), its
// values spread `q_stride` apart into the chunk.
void QuantizeQ8Group(const float* x, int8_t* q, int64_t q_stride, uint16_t* scale) {
  static_assert(kKvQ8Group == kQK);
  BlockQ8_0 b;
  QuantizeRow(GgmlType::kQ8_0, x, &b, kQK);
  for (int i = 0; i < kQK; ++i) q[i * q_stride] = b.qs[i];
  *scale = b.d;
}

// Stores one position's K and V (all KV heads) into its block, converting to the store's type, in
// the chunk layouts the attention kernel reads (K position-minor, V position-major).
void WriteKv(const KvBlocks& kv, int layer, int pos, const float* k, const float* v) {
  KvStore& s = *kv.store;
  const int bs = s.block_size(), block = kv.table[pos / bs], row = pos % bs;
  const int hd = s.head_dim();
  for (int h = 0; h < s.n_head_kv(); ++h) {
    uint8_t* kc = s.chunk(layer, block, 0, h);
    uint8_t* vc = s.chunk(layer, block, 1, h);
    const float* ks = k + h * hd;
    const float* vs = v + h * hd;
    if (s.type() == KvType::kQ8_0) {
      int8_t* kq = reinterpret_cast<int8_t*>(kc);
      int8_t* vq = reinterpret_cast<int8_t*>(vc);
      uint16_t* kscale = reinterpret_cast<uint16_t*>(kc + size_t(bs) * hd);
      uint16_t* vscale = reinterpret_cast<uint16_t*>(vc + size_t(bs) * hd);
      for (int d = 0; d < hd; d += kKvQ8Group) {
        QuantizeQ8Group(ks + d, kq + KChunkIndex(bs, row, d), bs, kscale + KScaleIndex(bs, row, d));
        QuantizeQ8Group(vs + d, vq + VChunkIndex(hd, row, d), 1, vscale + VScaleIndex(hd, row, d));
      }
      continue;
    }
    const bool f16 = s.type() == KvType::kF16;
    for (int i = 0; i < hd; ++i) {
      const size_t ki = KChunkIndex(bs, row, i), vi = VChunkIndex(hd, row, i);
      if (f16) {
        reinterpret_cast<uint16_t*>(kc)[ki] = Fp32ToFp16(ks[i]);
        reinterpret_cast<uint16_t*>(vc)[vi] = Fp32ToFp16(vs[i]);
      } else {
        reinterpret_cast<float*>(kc)[ki] = ks[i];
        reinterpret_cast<float*>(vc)[vi] = vs[i];
      }
    }
  }
}

// x[i] += r[i]: a residual add, on the tokens of the thread that normalises them next (it was a
// serial loop on the calling thread while the other workers waited).
void AddRows(const float* __restrict r, float* __restrict x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] += r[i];
}

// ref::RopeNeox with the (cos, sin) pairs of the position precomputed.
void RopeFromTable(float* x, int head_dim, const double* cs) {
  const int half = head_dim / 2;
  for (int i = 0; i < half; ++i) {
    const double c = cs[2 * i], s = cs[2 * i + 1];
    const double a = x[i], b = x[i + half];
    x[i] = float(a * c - b * s);
    x[i + half] = float(a * s + b * c);
  }
}

}  // namespace

FastForward::FastForward(const Model& model, ThreadPool& pool, int max_batch_tokens)
    : model_(model),
      c_(model.config()),
      pool_(pool),
      max_tokens_(std::max(1, max_batch_tokens)),
      ws_(std::max({int64_t(c_.n_embd), int64_t(c_.n_ff), int64_t(c_.q_dim())}), pool.size()),
      q_embd_(max_tokens_, c_.n_embd),
      q_attn_(max_tokens_, c_.q_dim()),
      q_ff_(max_tokens_, c_.n_ff),
      xb_(max_tokens_, std::max({int64_t(c_.n_embd), int64_t(c_.n_ff), int64_t(c_.q_dim())})),
      xff_(max_tokens_, c_.n_ff) {
  BRISK_CHECK(c_.group_size() <= 16);  // Attention keeps one inverse sum per head of a group
  const ModelWeights& w = model.weights();
  for (const LayerWeights& L : w.layers) {
    LayerPacked p;
    p.qkv = PackWeightsConcat({Src(L.wq), Src(L.wk), Src(L.wv)}, c_.n_embd, &pool);
    p.wo = PackWeights(L.wo.type, L.wo.data, L.wo.rows, L.wo.cols, &pool);
    p.gate_up = PackWeightsConcat({Src(L.w_gate), Src(L.w_up)}, c_.n_embd, &pool);
    p.down = PackWeights(L.w_down.type, L.w_down.data, L.w_down.rows, L.w_down.cols, &pool);
    p.attn_norm = DequantizeAll(L.attn_norm);
    p.ffn_norm = DequantizeAll(L.ffn_norm);
    if (c_.qkv_bias) {
      for (const WeightTensor* b : {&L.bq, &L.bk, &L.bv}) {
        std::vector<float> v = DequantizeAll(*b);
        p.bqkv.insert(p.bqkv.end(), v.begin(), v.end());
      }
    }
    p.q_norm = DequantizeAll(L.q_norm);
    p.k_norm = DequantizeAll(L.k_norm);
    layers_.push_back(std::move(p));
  }
  output_ = PackWeights(w.output.type, w.output.data, w.output.rows, w.output.cols, &pool);
  output_norm_ = DequantizeAll(w.output_norm);
  // The packed copies are what this pass reads from now on: the file's pages of those matrices
  // leave the resident set, or a server under a memory limit would hold its weights twice.
  // token_embd too (packing read all of it when it is the tied output): its rows come back one
  // page at a time as tokens are looked up.
  for (const LayerWeights& L : w.layers)
    for (const WeightTensor* t : {&L.wq, &L.wk, &L.wv, &L.wo, &L.w_gate, &L.w_up, &L.w_down})
      model.DropFilePages(*t);
  model.DropFilePages(w.output);
  if (w.token_embd.data != w.output.data) model.DropFilePages(w.token_embd);

  const size_t T = size_t(max_tokens_);
  const size_t qkv_dim = size_t(c_.q_dim() + 2 * c_.kv_dim());
  x_.resize(T * c_.n_embd);
  xn_.resize(T * c_.n_embd);
  qkv_.resize(T * qkv_dim);
  att_.resize(T * c_.q_dim());
  gu_.resize(T * 2 * c_.n_ff);
  ff_.resize(T * c_.n_ff);
  tmp_.resize(T * c_.n_embd);
  token_pos_.resize(T);
  rope_.resize(T * size_t(c_.head_dim));
  token_run_.resize(T);
  attn_items_.reserve(T);
  ord_tokens_.reserve(T);
  ord_rows_.reserve(T);
  ord_index_.reserve(T);
  ord_runs_.reserve(2 * T);
  // Room for the largest block size a store may use (the scratch is per block, not per context).
  // Whole cache lines per thread on a 64-byte aligned buffer, so the kernel's vector loads and
  // stores of its K / V / sum rows never straddle two lines (with a plain vector and 76,000
  // bytes per thread, at most one thread's scratch could be line-aligned).
  attn_scratch_per_thread_ =
      (AttendScratchFloats(c_.group_size(), c_.head_dim, kMaxKvBlockSize) + 15) / 16 * 16;
  attn_scratch_.resize(size_t(pool.size()) * attn_scratch_per_thread_);
}

size_t FastForward::packed_bytes() const {
  size_t b = output_.bytes;
  for (const LayerPacked& p : layers_)
    b += p.qkv.bytes + p.wo.bytes + p.gate_up.bytes + p.down.bytes;
  return b;
}

Status FastForward::Validate(std::span<const int32_t> tokens, std::span<const SeqRun> runs,
                             std::span<const int32_t> logit_rows) const {
  int64_t n = 0;
  for (const SeqRun& r : runs) {
    if (!r.kv.store || r.n_tokens <= 0 || r.start_pos < 0)
      return Status::Error("every run needs a KV cache, a start position >= 0 and tokens");
    if (r.kv.store->block_size() > kMaxKvBlockSize)
      return Status::Error("KV block size " + std::to_string(r.kv.store->block_size()) +
                           " exceeds " + std::to_string(kMaxKvBlockSize));
    const int64_t limit = std::min<int64_t>(r.kv.capacity(), c_.context_length);
    if (r.n_tokens > limit - r.start_pos)
      return Status::Error("positions " + std::to_string(r.start_pos) + ".." +
                           std::to_string(r.start_pos + r.n_tokens) + " exceed the context limit " +
                           std::to_string(limit) + " (KV cache capacity / model context length)");
    n += r.n_tokens;
  }
  if (n != int64_t(tokens.size())) return Status::Error("runs do not cover the tokens exactly");
  if (n > max_tokens_)
    return Status::Error("batch of " + std::to_string(n) + " tokens exceeds the planned " +
                         std::to_string(max_tokens_));
  for (int32_t t : tokens)
    if (t < 0 || t >= c_.n_vocab)
      return Status::Error("token id " + std::to_string(t) + " is outside the vocabulary (0.." +
                           std::to_string(c_.n_vocab - 1) + ")");
  for (size_t i = 0; i < logit_rows.size(); ++i)
    if (logit_rows[i] < 0 || logit_rows[i] >= n || (i > 0 && logit_rows[i] <= logit_rows[i - 1]))
      return Status::Error("logit rows must be ascending indices into the tokens");
  return Status::Ok();
}

void FastForward::QuantizeParallel(const float* x, int64_t ld, int n, Q8Acts& acts) {
  const int nq = n - n_wide_;  // the wide tokens take bf16 rows instead (Input)
  pool_.ParallelFor(nq, kTokenGrain, [&](int64_t t0, int64_t t1, int) {
    Q8Acts sub = SubView(acts, int(t0));
    QuantizeActs(x + t0 * ld, ld, int(t1 - t0), &sub);
  });
  acts.n_tokens = nq;
}

void FastForward::NormParallel(int n, const std::vector<float>& w, const float* residual) {
  const int d = c_.n_embd, nq = n - n_wide_;
  const float eps = float(c_.rms_eps);
  pool_.ParallelFor(n, kTokenGrain, [&](int64_t t0, int64_t t1, int) {
    if (residual) AddRows(residual + t0 * d, &x_[t0 * d], (t1 - t0) * d);
    const int64_t q1 = std::min<int64_t>(t1, nq);  // tokens that need int8 rows too
    if (q1 > t0) {
      Q8Acts sub = SubView(q_embd_.view(), int(t0));
      RmsNormQuantize(&x_[t0 * d], d, int(q1 - t0), w.data(), eps, &sub, &xn_[t0 * d], d);
    }
    const int64_t w0 = std::max<int64_t>(t0, nq);
    if (t1 > w0) RmsNormRows(&x_[w0 * d], d, int(t1 - w0), w.data(), eps, d, &xn_[w0 * d], d);
  });
  q_embd_.view().n_tokens = nq;
}

MatmulInput FastForward::Input(const Q8Acts& q, const float* x, int64_t ld, int64_t cols) {
  MatmulInput in{&q, x, ld};
  if (n_wide_ == 0) return in;
  const int n0 = q.n_tokens;
  pool_.ParallelFor(n_wide_, kTokenGrain, [&](int64_t t0, int64_t t1, int) {
    ToBf16Tiles(x + (n0 + t0) * ld, ld, int(t1 - t0), cols, &xb_, int(t0));
  });
  in.xb = &xb_;
  in.n_wide = n_wide_;
  return in;
}

void FastForward::OrderByClass(std::span<const int32_t> tokens, std::span<const SeqRun> runs,
                               std::span<const int32_t> logit_rows) {
  const bool wide = PrefillClassAvailable();
  ord_tokens_.clear();
  ord_runs_.clear();
  ord_index_.assign(tokens.size(), 0);
  for (int pass = 0; pass < 2; ++pass) {  // 0: decode-class tails, 1: prompt heads
    size_t off = 0;
    for (const SeqRun& r : runs) {
      const int head = wide ? std::clamp(r.prefill_class_tokens, 0, r.n_tokens) : 0;
      const int i0 = pass == 0 ? head : 0, i1 = pass == 0 ? r.n_tokens : head;
      if (i1 > i0) {
        ord_runs_.push_back({r.kv, r.start_pos + i0, i1 - i0, pass == 1 ? i1 - i0 : 0});
        for (int i = i0; i < i1; ++i) {
          ord_index_[off + size_t(i)] = int32_t(ord_tokens_.size());
          ord_tokens_.push_back(tokens[off + size_t(i)]);
        }
      }
      off += size_t(r.n_tokens);
    }
    if (pass == 0) n_wide_ = int(tokens.size() - ord_tokens_.size());
  }
  ord_rows_.clear();
  for (int32_t row : logit_rows) ord_rows_.push_back(ord_index_[size_t(row)]);
}

void FastForward::Body(std::span<const int32_t> tokens, std::span<const SeqRun> runs) {
  const int n = int(tokens.size());
  int t = 0;
  for (size_t r = 0; r < runs.size(); ++r)
    for (int i = 0; i < runs[r].n_tokens; ++i, ++t) {
      token_pos_[t] = runs[r].start_pos + i;
      token_run_[t] = int32_t(r);
    }
  const WeightTensor& e = model_.weights().token_embd;
  const int hd = c_.head_dim;
  pool_.ParallelFor(n, kTokenGrain, [&](int64_t t0, int64_t t1, int) {
    for (int64_t i = t0; i < t1; ++i) {
      DequantizeRow(e.type, e.row(tokens[i]), &x_[size_t(i) * c_.n_embd], c_.n_embd);
      // RoPE angles of this token's position, once for all heads and layers (the formula of
      // ref::RopeNeox, so the rotation is bit-identical to it).
      double* cs = &rope_[size_t(i) * hd];
      for (int j = 0; j < hd / 2; ++j) {
        const double angle = double(token_pos_[i]) * std::pow(c_.rope_theta, -2.0 * j / hd);
        cs[2 * j] = std::cos(angle);
        cs[2 * j + 1] = std::sin(angle);
      }
    }
  });
  for (int l = 0; l < c_.n_layer; ++l) Layer(l, n, runs);
  // The last layer's residual (every other one is added by the norm that follows it).
  pool_.ParallelFor(n, kTokenGrain, [&](int64_t t0, int64_t t1, int) {
    AddRows(&tmp_[t0 * c_.n_embd], &x_[t0 * c_.n_embd], (t1 - t0) * c_.n_embd);
  });
}

void FastForward::Layer(int l, int n, std::span<const SeqRun> runs) {
  const LayerPacked& P = layers_[l];
  const int d = c_.n_embd, qd = c_.q_dim(), kvd = c_.kv_dim(), hd = c_.head_dim, ff = c_.n_ff;
  const int ldqkv = qd + 2 * kvd;
  const Isa isa = ActiveIsa();

  // Attention block: the previous layer's residual + norm + quantise, one fused QKV matmul,
  // bias/norm/RoPE, KV write.
  NormParallel(n, P.attn_norm, l > 0 ? tmp_.data() : nullptr);
  Matmul(pool_, P.qkv, Input(q_embd_.view(), xn_.data(), d, d), n, qkv_.data(), ldqkv, ws_, isa,
         &P.wo);
  pool_.ParallelFor(n, kTokenGrain, [&](int64_t t0, int64_t t1, int) {
    for (int64_t t = t0; t < t1; ++t) {
      float* q = &qkv_[size_t(t) * ldqkv];
      float* k = q + qd;
      float* v = k + kvd;
      if (c_.qkv_bias)
        for (int i = 0; i < ldqkv; ++i) q[i] += P.bqkv[i];
      const int pos = token_pos_[t];
      const double* cs = &rope_[size_t(t) * hd];
      for (int h = 0; h < c_.n_head; ++h) {
        if (c_.qk_norm) ref::RmsNorm(q + h * hd, P.q_norm.data(), hd, c_.rms_eps, q + h * hd);
        RopeFromTable(q + h * hd, hd, cs);
      }
      for (int h = 0; h < c_.n_head_kv; ++h) {
        if (c_.qk_norm) ref::RmsNorm(k + h * hd, P.k_norm.data(), hd, c_.rms_eps, k + h * hd);
        RopeFromTable(k + h * hd, hd, cs);
      }
      WriteKv(runs[token_run_[t]].kv, l, pos, k, v);
    }
  });
  Attention(l, n, runs);
  QuantizeParallel(att_.data(), qd, n, q_attn_.view());
  Matmul(pool_, P.wo, Input(q_attn_.view(), att_.data(), qd, qd), n, tmp_.data(), d, ws_, isa,
         &P.gate_up);

  // Feed-forward block: residual + norm + quantise, fused gate/up, SiLU * up, down (its
  // residual is added by the next layer's first norm, or at the end of Body). Wide tokens go
  // through the fused gate/up + SwiGLU kernel straight into the down projection's bf16 input (the
  // 20 MB of gate/up floats of a 512-token prefill never reach memory) unless down needs fp32 rows.
  NormParallel(n, P.ffn_norm, tmp_.data());
  const bool glu = n_wide_ > 0 && GluWideSupported(P.gate_up, isa) && !P.down.uses_f32();
  const int n_plain = glu ? n - n_wide_ : n;  // tokens whose gate/up go through gu_ and ff_
  MatmulInput gin = Input(q_embd_.view(), xn_.data(), d, d);
  // Many narrow tokens: the integer path's fused gate/up + SwiGLU writes ff_ directly.
  const bool int_glu = !glu && n_wide_ == 0 && IntGluSupported(P.gate_up, n, isa);
  if (glu) {
    gin.n_wide = 0;
    Matmul(pool_, P.gate_up, gin, n_plain, gu_.data(), 2 * ff, ws_, isa);
    MatmulGluWide(pool_, P.gate_up, xb_, n_wide_, &xff_, ws_, isa);
  } else if (int_glu) {
    MatmulGlu(pool_, P.gate_up, gin, n, ff_.data(), ff, ws_, isa);
  } else {
    Matmul(pool_, P.gate_up, gin, n, gu_.data(), 2 * ff, ws_, isa, &P.down);
  }
  // SiLU * up, then (narrow tokens, a prefix of the plain ones) the down projection's int8 rows,
  // in one parallel region: each thread quantises the rows it just wrote.
  const int nq = n - n_wide_;
  pool_.ParallelFor(n_plain, kTokenGrain, [&](int64_t t0, int64_t t1, int) {
    for (int64_t t = t0; t < t1 && !int_glu; ++t) {
      const float* g = &gu_[size_t(t) * 2 * ff];
      SiluMul(g, g + ff, ff, &ff_[size_t(t) * ff]);
    }
    const int64_t q1 = std::min<int64_t>(t1, nq);
    if (q1 > t0) {
      Q8Acts sub = SubView(q_ff_.view(), int(t0));
      QuantizeActs(&ff_[size_t(t0) * ff], ff, int(q1 - t0), &sub);
    }
  });
  q_ff_.view().n_tokens = nq;
  MatmulInput din{&q_ff_.view(), ff_.data(), ff, &xff_, n_wide_};
  if (!glu) din = Input(q_ff_.view(), ff_.data(), ff, ff);
  // The next matmul after this layer's down projection: the next layer's QKV or the lm_head.
  const PackedWeights* after_down = l + 1 < c_.n_layer ? &layers_[l + 1].qkv : &output_;
  Matmul(pool_, P.down, din, n, tmp_.data(), d, ws_, isa, after_down);
}

void FastForward::Attention(int l, int n, std::span<const SeqRun> runs) {
  const int hd = c_.head_dim, qd = c_.q_dim(), G = c_.group_size();
  const int ldqkv = qd + 2 * c_.kv_dim();
  const float scale = float(1.0 / std::sqrt(double(hd)));
  // One work item per (up to kAttendMaxTokens consecutive tokens of one run, KV head): each K/V
  // block is widened once for all G query heads of all the item's tokens. An item's cost grows
  // with its context, so items are split by total context, not by count (causal prefill would
  // otherwise leave the first thread idle for most of the op). Runs occupy consecutive tokens.
  attn_items_.clear();
  int64_t total = 0;
  for (int t = 0; t < n;) {
    const int run = token_run_[t];
    int t1 = t + 1;
    while (t1 < n && t1 - t < kAttendMaxTokens && token_run_[t1] == run) ++t1;
    attn_items_.push_back({t, t1 - t});
    for (int i = t; i < t1; ++i) total += int64_t(token_pos_[i] + 1) * c_.n_head_kv;
    t = t1;
  }
  const int64_t items = int64_t(attn_items_.size()) * c_.n_head_kv;
  pool_.Run([&](int thread, int n_threads) {
    const int64_t lo = total * thread / n_threads, hi = total * (thread + 1) / n_threads;
    int64_t acc = 0;
    for (int64_t i = 0; i < items; ++i) {
      const AttnItem& it = attn_items_[size_t(i / c_.n_head_kv)];
      const int g = int(i % c_.n_head_kv), t = it.t0;
      int64_t cost = 0;
      for (int k = 0; k < it.n_tokens; ++k) cost += token_pos_[t + k] + 1;
      const int64_t start = acc;  // item i belongs to the thread whose range holds its start
      acc += cost;
      if (start < lo) continue;
      if (start >= hi) break;
      const KvBlocks& kv = runs[token_run_[t]].kv;
      AttendArgs a;
      a.q = &qkv_[size_t(t) * ldqkv + size_t(g) * G * hd];
      a.q_stride = ldqkv;
      a.n_tokens = it.n_tokens;
      a.k0 = kv.store->chunk(l, 0, 0, g);
      a.v0 = kv.store->chunk(l, 0, 1, g);
      a.block_stride = kv.store->block_stride();
      a.table = kv.table;
      a.block_size = kv.store->block_size();
      a.elem = KvElemOf(kv.store->type());
      a.n_ctx = token_pos_[t] + 1;
      a.group = G;
      a.head_dim = hd;
      a.scale = scale;
      a.scratch = &attn_scratch_[size_t(thread) * attn_scratch_per_thread_];
      a.out = &att_[size_t(t) * qd + size_t(g) * G * hd];
      a.out_stride = qd;
      AttendGroup(a);
    }
  });
}

int FastForward::GatherLogitRows(std::span<const int32_t> logit_rows) {
  const int d = c_.n_embd;
  const int m = int(logit_rows.size());
  pool_.ParallelFor(m, kTokenGrain, [&](int64_t i0, int64_t i1, int) {
    for (int64_t i = i0; i < i1; ++i) {
      Q8Acts sub = SubView(q_embd_.view(), int(i));
      RmsNormQuantize(&x_[size_t(logit_rows[i]) * d], d, 1, output_norm_.data(), float(c_.rms_eps),
                      &sub, &xn_[size_t(i) * d], d);
    }
  });
  q_embd_.view().n_tokens = m;
  return m;
}

Status FastForward::Forward(std::span<const int32_t> tokens, std::span<const SeqRun> runs,
                            std::span<const int32_t> logit_rows, int* m) {
  BRISK_RETURN_IF_ERROR(Validate(tokens, runs, logit_rows));
  OrderByClass(tokens, runs, logit_rows);
  Body(ord_tokens_, ord_runs_);
  *m = GatherLogitRows(ord_rows_);
  return Status::Ok();
}

void FastForward::LmHead(int first, int count, float* logits) {
  Q8Acts sub = SubView(q_embd_.view(), first);
  sub.n_tokens = count;
  Matmul(pool_, output_, {&sub, &xn_[size_t(first) * c_.n_embd], c_.n_embd}, count, logits,
         c_.n_vocab, ws_);
}

void FastForward::CopyHidden(int m, float* hidden) const {
  if (hidden && m > 0)
    std::memcpy(hidden, xn_.data(), size_t(m) * size_t(c_.n_embd) * sizeof(float));
}

Status FastForward::RunBatch(std::span<const int32_t> tokens, std::span<const SeqRun> runs,
                             std::span<const int32_t> logit_rows, float* logits, float* hidden) {
  int m = 0;
  BRISK_RETURN_IF_ERROR(Forward(tokens, runs, logit_rows, &m));
  CopyHidden(m, hidden);
  if (m > 0 && logits) LmHead(0, m, logits);
  return Status::Ok();
}

Status FastForward::RunBatchGrouped(std::span<const int32_t> tokens, std::span<const SeqRun> runs,
                                    std::span<const int32_t> logit_rows, int group_rows,
                                    float* scratch, const LogitGroupFn& consume, float* hidden) {
  if (group_rows < 1) return Status::Error("group_rows must be at least 1");
  int m = 0;
  BRISK_RETURN_IF_ERROR(Forward(tokens, runs, logit_rows, &m));
  CopyHidden(m, hidden);
  for (int r0 = 0; r0 < m; r0 += group_rows) {
    const int k = std::min(group_rows, m - r0);
    LmHead(r0, k, scratch);
    consume(r0, k, scratch);
  }
  return Status::Ok();
}

Status FastForward::RunBatchArgmax(std::span<const int32_t> tokens, std::span<const SeqRun> runs,
                                   std::span<const int32_t> logit_rows, int32_t* best,
                                   std::span<const std::span<const int32_t>> excluded) {
  if (!excluded.empty() && excluded.size() != logit_rows.size())
    return Status::Error("excluded ids must be given for every logit row or none");
  for (const std::span<const int32_t> ex : excluded)
    for (const int32_t id : ex)
      if (id < 0 || id >= c_.n_vocab)
        return Status::Error("excluded token id " + std::to_string(id) +
                             " is outside the vocabulary");
  int m = 0;
  BRISK_RETURN_IF_ERROR(Forward(tokens, runs, logit_rows, &m));
  constexpr int kMaxArgmaxRows = 64;
  float best_value[kMaxArgmaxRows];
  for (int r0 = 0; r0 < m; r0 += kMaxArgmaxRows) {
    const int k = std::min(kMaxArgmaxRows, m - r0);
    Q8Acts sub = SubView(q_embd_.view(), r0);
    sub.n_tokens = k;
    MatmulArgmax(pool_, output_, {&sub, &xn_[size_t(r0) * c_.n_embd], c_.n_embd}, k, best + r0,
                 best_value, ws_, ActiveIsa(),
                 excluded.empty() ? excluded : excluded.subspan(size_t(r0), size_t(k)));
  }
  return Status::Ok();
}

Status FastForward::Run(std::span<const int32_t> tokens, int start_pos, KvBlocks kv,
                        std::span<const int32_t> logit_rows, float* logits, bool prompt) {
  const int64_t n = int64_t(tokens.size());
  size_t next = 0;
  for (int64_t c0 = 0; c0 < n; c0 += max_tokens_) {
    const int len = int(std::min<int64_t>(max_tokens_, n - c0));
    std::vector<int32_t> rows;  // logit rows of this chunk, relative to it
    const size_t first = next;
    while (next < logit_rows.size() && logit_rows[next] < c0 + len) {
      if (logit_rows[next] < c0) return Status::Error("logit rows must be ascending indices");
      rows.push_back(int32_t(logit_rows[next++] - c0));
    }
    const SeqRun run{kv, start_pos + int(c0), len, prompt ? len : 0};
    BRISK_RETURN_IF_ERROR(RunBatch(tokens.subspan(size_t(c0), size_t(len)),
                                   std::span<const SeqRun>(&run, 1), rows,
                                   logits + first * size_t(c_.n_vocab)));
  }
  if (next != logit_rows.size()) return Status::Error("logit rows must be ascending indices");
  return Status::Ok();
}

}  // namespace brisk
