// The serving engine (DESIGN §3 "Threads", §5): requests in, tokens out, continuous batching.
// A step loop on its own thread (worker 0 of the compute pool) repeats: take new submissions and
// cancellations, drop expired requests, schedule (decodes, prefill chunks, admissions within the
// token budget and KV blocks), run one batched forward pass over the paged KV cache, sample, and
// hand tokens to each request's sink. Submit/Cancel/Stats may be called from any thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <thread>
#include <unordered_map>
#include <vector>

#include "engine/batch_controller.h"
#include "engine/batch_sampler.h"
#include "engine/block_manager.h"
#include "engine/engine_config.h"
#include "engine/kv_events.h"
#include "engine/request.h"
#include "engine/request_state.h"
#include "engine/scheduler.h"
#include "model/fast_forward.h"
#include "model/kv_store.h"
#include "tokenizer/tokenizer.h"

namespace brisk {

// A snapshot for metrics, dashboards and the batch controller.
struct EngineStats {
  int running = 0, waiting = 0;
  int max_num_seqs = 0;
  int kv_blocks_total = 0, kv_blocks_free = 0;
  double kv_usage = 0;  // referenced blocks / total
  int64_t steps = 0;
  int64_t prompt_tokens = 0;      // prompt tokens computed (cache hits excluded)
  int64_t generation_tokens = 0;  // tokens sampled
  int64_t prefix_queried_tokens = 0, prefix_hit_tokens = 0;
  int64_t preemptions = 0;
  int64_t finished = 0, rejected = 0;
  int last_step_seqs = 0, last_step_tokens = 0;
  // Sums over all steps of sequences / tokens per step: their differences over an interval
  // divided by the difference of `steps` give the mean batch of that interval.
  int64_t step_seqs_total = 0, step_tokens_total = 0;
  double last_step_s = 0;
  BatchPolicy policy = BatchPolicy::kStatic;
  int max_num_batched_tokens = 0;  // the controller's current token budget
  double tpot_p95_ms = 0;          // slo: p95 decode step time in its window
  double tpot_target_ms = 0;       // slo: the target in force
  int64_t kv_events_dropped = 0;   // KV-event batches dropped: the publisher's queue was full
};

// The batch settings asked for at run time (GET/PATCH /admin/config, SIGHUP): the policy and its
// upper limits. The batch controller may run below the limits (slo, loadavg); EngineStats holds
// what is in force at the last step.
struct BatchSettings {
  BatchPolicy policy = BatchPolicy::kStatic;
  int max_num_seqs = 0;
  int max_num_batched_tokens = 0;
  double tpot_target_ms = 0;
};

class Engine {
 public:
  // `model` (and `tokenizer`, when given) must outlive the engine. Without a tokenizer, token
  // events carry no text, stop strings are refused and no EOG ids are known beyond the request's
  // stop_token_ids.
  static Result<std::unique_ptr<Engine>> Create(const Model& model, const Tokenizer* tokenizer,
                                                const EngineConfig& config);
  ~Engine();  // stops the loop; unfinished requests end with kCancelled
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Validates (request_validation.h) and queues a request; its sink then receives events on the
  // engine thread. Errors leave the engine untouched: invalid_argument / out_of_range /
  // failed_precondition for the request, resource_exhausted when the waiting queue is full,
  // unavailable while shutting down.
  Result<uint64_t> Submit(GenerationRequest request);
  // Submits requests together, all or none (the first error is returned): the choices of one
  // `n` > 1 request, the prompts of a batched completion, the inputs of an embeddings call. A
  // request whose prompt equals an earlier one's in the group waits until that prompt is computed,
  // then takes its KV blocks from the prefix cache: n copies of one prefill, not n prefills. Ids
  // are in request order.
  Result<std::vector<uint64_t>> SubmitAll(std::vector<GenerationRequest> requests);
  // Ends a request at the next step (kCancelled) and frees its blocks; unknown ids are ignored.
  void Cancel(uint64_t id);

  EngineStats Stats() const;
  const EngineConfig& config() const { return config_; }
  const ModelConfig& model_config() const { return fwd_->config(); }
  // Changes the batch policy or its limits at run time (clamped to the configured maxima);
  // running requests are never dropped: a lower cap only delays admissions. Applied at the next
  // step.
  void SetBatchPolicy(BatchPolicy policy, int max_num_seqs, int max_num_batched_tokens,
                      double tpot_target_ms);
  // Shorthand: the static policy with this sequence cap.
  void SetMaxNumSeqs(int n);
  // The settings last asked for (applied at the next step, or already in force): current at once,
  // unlike Stats(), which a step refreshes.
  BatchSettings batch_settings() const;
  // Read-modify-write under the engine's lock: `change` edits a copy of the current settings, the
  // result is clamped (as SetBatchPolicy) and applied at the next step. Two callers changing
  // different fields therefore never undo each other. Returns the settings stored.
  BatchSettings UpdateBatchSettings(const std::function<void(BatchSettings&)>& change);
  int max_num_seqs_limit() const { return config_.max_num_seqs; }
  const Tokenizer* tokenizer() const { return tokenizer_; }

  // KV-cache events (config.kv_event_queue > 0; else null): one batch per step that changed the
  // prefix cache, for a publisher thread to take (src/kvevents/).
  std::shared_ptr<KvEventQueue> kv_events() const { return kv_events_; }
  // Drops every cached prefix between two steps (vLLM's reset_prefix_cache): a model-independent
  // way to make routers forget this replica's cache (AllBlocksCleared). Returns at once.
  void ResetPrefixCache();
  // The published hashes of every block in the prefix cache, sorted: asked of the engine thread
  // between two steps (waits for it).
  std::vector<uint64_t> CachedBlockHashes();

 private:
  // What a row of the model's output is for: sampling the request's next token (sample: its index
  // in ModelBatch::sampled), scoring prompt token prompt_pos + 1, or only its hidden state.
  struct RowUse {
    RequestState* request = nullptr;
    int sample = -1;
    int prompt_pos = -1;
  };
  // The model inputs of one step, built from the scheduler's plan (plain data).
  struct ModelBatch {
    std::vector<int32_t> tokens;         // the chunks' tokens back to back
    std::vector<SeqRun> runs;            // one per chunk
    std::vector<int32_t> logit_rows;     // rows of `tokens` whose output is needed (ascending)
    std::vector<RowUse> row_uses;        // what each logit row is for
    std::vector<RequestState*> sampled;  // requests sampled this step, in logit-row order
    // Requests whose prompt is computed for the first time this step.
    std::vector<RequestState*> prompts_done;
    bool needs_hidden = false;  // a row of a return_hidden request
    bool fused_argmax = false;  // every sampled request is plain greedy
    int64_t prompt_tokens = 0;  // prompt tokens computed (for stats)
    int decode_seqs = 0;        // chunks that extend generated tokens (the controller's)
  };

  Engine(const Model& model, const Tokenizer* tokenizer, const EngineConfig& config, int n_blocks,
         std::unique_ptr<ThreadPool> pool, std::unique_ptr<FastForward> fwd);
  void Loop();
  // One step: plan -> build batch -> run model -> sample -> process outputs -> publish. False when
  // nothing could be scheduled.
  bool Step();
  StepPlan PlanStep(double now);
  void ExpireDeadlines(double now);
  void ApplyPendingPolicy();
  const ModelBatch& BuildBatch(const StepPlan& plan, double now);
  void AddOutputRows(const ScheduledChunk& c, RequestState& r, int32_t first_row, ModelBatch* b);
  Status RunModel(const ModelBatch& batch);
  // RunModel when rows other than sampled ones are needed (prompt logprobs, hidden states).
  Status RunModelRows(const ModelBatch& batch);
  void ScorePromptRows(const ModelBatch& batch, int first, int count, const float* logits);
  // After the model ran: prompt logprobs to sinks and prefill-only requests finished, before any
  // token of the step is published.
  void CompletePrompts(const ModelBatch& batch);
  std::span<const SampleResult> SampleOutputs(const ModelBatch& batch);
  void CountStepTokens(const ModelBatch& batch);
  void ObserveStep(const ModelBatch& batch, double t0);
  void PublishStep(const StepPlan& plan, double t0);
  NumericsClass PromptClassFor(int num_prompt) const;  // SeqState::prompt_class of a new request
  std::unique_ptr<RequestState> NewRequestState(GenerationRequest req) const;
  void TakeInbox();
  // Parked requests whose prefill leader's prompt is done (or gone) join the scheduler.
  void ReleaseParked();
  void Finish(RequestState& r, FinishReason reason, const std::string& message = {},
              const std::string& stop = {});
  void DropFinished();
  void PublishLocked();  // refreshes stats_ from the scheduler and blocks (mu_ held)
  void RunTasks();       // engine-thread tasks posted by other threads (RunOnEngineThread)
  // Posts `task` to run on the engine thread between steps (at once after the engine stopped).
  void RunOnEngineThread(std::function<void()> task);
  void FlushKvEvents();  // the step's block events into kv_events_ (dropped if full)

  const Model& model_;
  const Tokenizer* tokenizer_;
  EngineConfig config_;
  std::unique_ptr<ThreadPool> pool_;
  std::unique_ptr<FastForward> fwd_;
  std::unique_ptr<KvStore> kv_;
  BlockManager blocks_;
  Scheduler scheduler_;

  // Engine-thread state.
  std::unordered_map<uint64_t, std::unique_ptr<RequestState>> active_;
  std::vector<RequestState*> parked_;  // waiting for a SubmitAll sibling's prefill
  ModelBatch batch_;                   // BuildBatch's output, reused step to step
  std::vector<float> logits_;          // RunModel's output: one n_vocab row per sampled request
  std::vector<int32_t> argmax_;        // RunModel's output on the fused-argmax route
  std::vector<float> hidden_;          // RunModelRows: final hidden states of the logit rows
  std::vector<float> group_logits_;    // RunModelRows: logits of one group of rows
  std::vector<SampleResult> argmax_results_;
  BatchSampler sampler_;
  uint64_t next_arrival_ = 0;

  // Shared with submitters (mu_).
  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::vector<std::unique_ptr<RequestState>> inbox_;
  std::vector<uint64_t> cancels_;
  int queued_ = 0;  // submitted, not yet finished (for the waiting limit)
  uint64_t next_id_ = 1;
  bool stop_ = false;
  EngineStats stats_;                         // published copy, updated after each step
  std::vector<std::function<void()>> tasks_;  // RunOnEngineThread
  std::atomic<int> max_num_seqs_;  // the controller's current cap (for the waiting limit)
  BatchSettings settings_;         // the authoritative copy (mu_)
  std::unique_ptr<BatchControllerConfig> pending_policy_;  // set with settings_ (mu_)
  BatchController controller_;                             // engine thread
  double load_read_at_ = -1, load1_ = 0;
  std::shared_ptr<KvEventQueue> kv_events_;
  std::thread thread_;
};

}  // namespace brisk
