// The fast CPU forward pass: weights repacked at load (kernels/cpu/packed.h), activations
// quantised once per matmul input, fused QKV and gate/up matmuls, GQA attention that reads each
// KV row once for all query heads of its group, lm_head only for rows that need logits (or a
// fused argmax for greedy decoding).
//
// A call runs a batch of token runs from several sequences (prefill chunks and decode tokens
// mixed). Every output element is computed in a fixed order whatever else is in the batch, so a
// sequence's logits are bitwise identical alone or batched (DESIGN §5).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "kernels/cpu/acts.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/packed.h"
#include "model/kv_store.h"
#include "model/model.h"
#include "runtime/huge_page_allocator.h"
#include "runtime/thread_pool.h"

namespace brisk {

// n_tokens consecutive tokens of one sequence, at positions [start_pos, start_pos + n_tokens);
// their K/V are written into the sequence's blocks and attention reads positions [0, pos].
// The first prefill_class_tokens tokens are computed in the prefill numerics class
// (model/numerics_class.h; the kernels' "wide" path), the rest in the decode class. A token's
// class must depend only on its request, never on the batch, so it is the caller's to say.
struct SeqRun {
  KvBlocks kv;
  int start_pos = 0;
  int n_tokens = 0;
  int prefill_class_tokens = 0;
};

class FastForward {
 public:
  // Packs every weight matrix (load time) and plans buffers for up to max_batch_tokens tokens
  // per step; longer single-sequence inputs are processed in chunks.
  FastForward(const Model& model, ThreadPool& pool, int max_batch_tokens = 512);

  // Batch of runs; `tokens` holds the runs' tokens back to back. Writes the logits of each
  // row in `logit_rows` (ascending indices into tokens) as consecutive n_vocab rows (none when
  // `logits` is null), and, when `hidden` is not null, each such row's final hidden state (after
  // the output norm, the lm_head's input) as consecutive n_embd rows.
  Status RunBatch(std::span<const int32_t> tokens, std::span<const SeqRun> runs,
                  std::span<const int32_t> logit_rows, float* logits, float* hidden = nullptr);
  // Called with the logits of logit rows [first, first + count), n_vocab floats each.
  using LogitGroupFn = std::function<void(int first, int count, const float* logits)>;
  // RunBatch for many logit rows in bounded memory: the logits are computed group_rows rows at a
  // time into `scratch` (group_rows x n_vocab floats) and handed to `consume` in row order. Each
  // row's logits are the bits RunBatch gives it.
  Status RunBatchGrouped(std::span<const int32_t> tokens, std::span<const SeqRun> runs,
                         std::span<const int32_t> logit_rows, int group_rows, float* scratch,
                         const LogitGroupFn& consume, float* hidden = nullptr);
  // Same, but returns only the argmax token of each logit row (greedy sampling without
  // materialising the vocabulary-sized rows). excluded (empty, or one entry per logit row):
  // token ids that may not win for that row (MatmulArgmax).
  Status RunBatchArgmax(std::span<const int32_t> tokens, std::span<const SeqRun> runs,
                        std::span<const int32_t> logit_rows, int32_t* best,
                        std::span<const std::span<const int32_t>> excluded = {});

  // One sequence (same contract as ReferenceForward::Run); chunks inputs longer than the batch.
  // prompt: the tokens are prompt tokens (prefill class), else generated ones (decode class).
  Status Run(std::span<const int32_t> tokens, int start_pos, KvBlocks kv,
             std::span<const int32_t> logit_rows, float* logits, bool prompt = true);

  int max_batch_tokens() const { return max_tokens_; }
  size_t packed_bytes() const;  // bytes of weights streamed per full forward (all matrices)
  const ModelConfig& config() const { return c_; }

 private:
  struct LayerPacked {
    PackedWeights qkv, wo, gate_up, down;
    std::vector<float> attn_norm, ffn_norm, bqkv, q_norm, k_norm;
  };
  Status Validate(std::span<const int32_t> tokens, std::span<const SeqRun> runs,
                  std::span<const int32_t> logit_rows) const;
  // Orders the batch for the matmuls, which take the wide tokens last: each run splits into its
  // decode-class tail (first, with the other runs' tails) and prompt head (after them). Fills
  // ord_tokens_, ord_runs_, ord_rows_ (the logit rows renumbered) and n_wide_.
  void OrderByClass(std::span<const int32_t> tokens, std::span<const SeqRun> runs,
                    std::span<const int32_t> logit_rows);
  void Body(std::span<const int32_t> tokens, std::span<const SeqRun> runs);
  // RunBatch's and RunBatchArgmax's common part: validate, order, run the layers, final-norm the
  // logit rows into q8_/xn_ (*m of them).
  Status Forward(std::span<const int32_t> tokens, std::span<const SeqRun> runs,
                 std::span<const int32_t> logit_rows, int* m);
  // The input of a matmul over rows x (stride ld) with int8 rows q; converts the wide rows to bf16.
  MatmulInput Input(const Q8Acts& q, const float* x, int64_t ld, int64_t cols);
  void Layer(int l, int n, std::span<const SeqRun> runs);
  void Attention(int l, int n, std::span<const SeqRun> runs);
  // Final norm of the logit rows into q8_/xn_; returns how many rows.
  int GatherLogitRows(std::span<const int32_t> logit_rows);
  // The lm_head over gathered rows [first, first + count) into logits.
  void LmHead(int first, int count, float* logits);
  void CopyHidden(int m, float* hidden) const;
  // Quantises the narrow (not wide) ones of n rows of x (stride ld) into acts on all threads.
  void QuantizeParallel(const float* x, int64_t ld, int n, Q8Acts& acts);
  // RMSNorm of x_'s n rows with weights w into xn_, quantising the narrow ones into q_embd_;
  // residual (n rows like x_): added to x_ first.
  void NormParallel(int n, const std::vector<float>& w, const float* residual = nullptr);

  const Model& model_;
  const ModelConfig& c_;
  ThreadPool& pool_;
  int max_tokens_;
  std::vector<LayerPacked> layers_;
  PackedWeights output_;
  std::vector<float> output_norm_;
  MatmulWorkspace ws_;
  Q8ActsBuffer q_embd_, q_attn_, q_ff_;
  // Activations for up to max_tokens_ tokens.
  HugeVector<float> x_, xn_, qkv_, att_, gu_, ff_, tmp_;
  Bf16Acts xb_;     // the wide tokens' bf16 rows of the current matmul input
  Bf16Acts xff_;    // the wide tokens' SwiGLU output (down's input) from MatmulGluWide
  int n_wide_ = 0;  // wide tokens of the current batch (the last ones; 0 without the path)
  std::vector<int32_t> ord_tokens_, ord_rows_, ord_index_;  // OrderByClass (reserved)
  std::vector<SeqRun> ord_runs_;
  std::vector<int32_t> token_pos_, token_run_;  // per token: position and run index
  std::vector<double> rope_;                    // per token: head_dim/2 (cos, sin) pairs
  HugeVector<float> attn_scratch_;              // per thread: AttendScratchFloats, 64-aligned
  struct AttnItem {
    int t0, n_tokens;  // consecutive tokens of one run
  };
  std::vector<AttnItem> attn_items_;  // Attention()'s work items (reserved: no allocation)
  size_t attn_scratch_per_thread_ = 0;
};

}  // namespace brisk
