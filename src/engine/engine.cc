#include "engine/engine.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <random>

#include "engine/output_processor.h"
#include "engine/prompt_logprobs.h"
#include "engine/request_validation.h"
#include "runtime/process_memory.h"
#include "tokenizer/detokenizer.h"
#include "util/clock.h"

namespace brisk {

const char* FinishReasonName(FinishReason r) {
  switch (r) {
    case FinishReason::kStop:
      return "stop";
    case FinishReason::kLength:
      return "length";
    case FinishReason::kCancelled:
      return "cancelled";
    case FinishReason::kDeadline:
      return "deadline";
    case FinishReason::kError:
      return "error";
  }
  return "?";
}

namespace {

// The first earlier request of a SubmitAll group with the same prompt in the same numerics class
// (so the same cached blocks), or 0. Requests that skip the prefix cache neither lead nor follow.
uint64_t PrefillLeaderOf(const std::vector<std::unique_ptr<RequestState>>& group, size_t i,
                         bool prefix_caching) {
  const SeqState& s = group[i]->seq;
  if (!prefix_caching || s.skip_prefix_cache) return 0;
  for (size_t j = 0; j < i; ++j) {
    const SeqState& l = group[j]->seq;
    if (!l.skip_prefix_cache && l.prompt_class == s.prompt_class && l.tokens == s.tokens)
      return group[j]->prefill_leader ? group[j]->prefill_leader : group[j]->id;
  }
  return 0;
}

}  // namespace

Result<std::unique_ptr<Engine>> Engine::Create(const Model& model, const Tokenizer* tokenizer,
                                               const EngineConfig& config) {
  BRISK_RETURN_IF_ERROR(ValidateEngineConfig(config));
  EngineConfig c = config;
  const ModelConfig& mc = model.config();
  if (c.kv_type == KvType::kQ8_0 && mc.head_dim % kKvQ8Group != 0)
    return Status::InvalidArgument("--kv-type q8_0 needs a head dimension divisible by " +
                                       std::to_string(kKvQ8Group) + "; this model's is " +
                                       std::to_string(mc.head_dim) + " (use f16)",
                                   "kv_type");
  c.max_model_len = ResolveMaxModelLen(c, mc.context_length);
  if (c.max_model_len < 2 || c.max_model_len > mc.context_length)
    return Status::Error("max_model_len must be in 2.." + std::to_string(mc.context_length) +
                         " (the model's context length), got " + std::to_string(c.max_model_len));
  const size_t block_bytes = KvStore::BlockBytes(mc, c.kv_block_size, c.kv_type);
  const int64_t blocks_per_seq = (c.max_model_len + c.kv_block_size - 1) / c.kv_block_size;
  // The weights are packed first: under a memory limit the KV budget is what the packed model
  // leaves, measured rather than guessed.
  auto pool = std::make_unique<ThreadPool>(c.threads);
  auto fwd = std::make_unique<FastForward>(model, *pool, c.max_num_batched_tokens);
  if (c.kv_cache_bytes == 0) {
    const size_t full = size_t(blocks_per_seq) * size_t(c.max_num_seqs) * block_bytes;
    c.kv_cache_bytes = std::min<size_t>(EngineLimits::kDefaultKvCacheCapBytes, full);
    if (c.memory_limit_bytes > 0) {
      // The step buffers the engine allocates next (logits rows, prompt-scoring groups).
      const size_t buffers = size_t(c.max_num_seqs + 32) * size_t(mc.n_vocab) * sizeof(float);
      BRISK_ASSIGN_OR_RETURN(
          c.kv_cache_bytes,
          KvBudgetWithinMemory(c.memory_limit_bytes, ProcessAnonRssBytes() + buffers,
                               size_t(blocks_per_seq) * block_bytes, c.kv_cache_bytes));
    }
  }
  const int64_t n_blocks = int64_t(c.kv_cache_bytes / block_bytes);
  if (n_blocks < blocks_per_seq)
    return Status::Error("the KV cache budget (" + std::to_string(c.kv_cache_bytes >> 20) +
                         " MiB) holds " + std::to_string(n_blocks * c.kv_block_size) +
                         " tokens, fewer than max_model_len " + std::to_string(c.max_model_len));
  if (n_blocks > EngineLimits::kMaxKvBlocks) return Status::Error("KV cache budget too large");
  return std::unique_ptr<Engine>(
      new Engine(model, tokenizer, c, int(n_blocks), std::move(pool), std::move(fwd)));
}

Engine::Engine(const Model& model, const Tokenizer* tokenizer, const EngineConfig& config,
               int n_blocks, std::unique_ptr<ThreadPool> pool, std::unique_ptr<FastForward> fwd)
    : model_(model),
      tokenizer_(tokenizer),
      config_(config),
      pool_(std::move(pool)),
      fwd_(std::move(fwd)),
      kv_(std::make_unique<KvStore>(model.config(), n_blocks, config.kv_block_size,
                                    config.kv_type)),
      blocks_(n_blocks, config.kv_block_size, config.prefix_caching),
      scheduler_({config.max_num_seqs, config.max_num_batched_tokens, config.max_prefill_chunk},
                 blocks_),
      sampler_(model.config().n_vocab, tokenizer ? tokenizer->eog_ids() : std::vector<int32_t>{}),
      max_num_seqs_(config.max_num_seqs),
      controller_({config.batch_policy, config.max_num_seqs, config.max_num_batched_tokens,
                   config.tpot_target_ms}) {
  kv_->Prefault(*pool_);  // the KV budget is resident from the start: memory stays flat under load
  logits_.resize(size_t(config.max_num_seqs) * size_t(model.config().n_vocab));
  argmax_.resize(size_t(config.max_num_seqs));
  settings_ = {config.batch_policy, config.max_num_seqs, config.max_num_batched_tokens,
               config.tpot_target_ms};
  stats_.max_num_seqs = controller_.limits().max_num_seqs;
  stats_.max_num_batched_tokens = controller_.limits().max_num_batched_tokens;
  stats_.policy = config.batch_policy;
  stats_.tpot_target_ms = config.tpot_target_ms;
  stats_.kv_blocks_total = stats_.kv_blocks_free = n_blocks;
  if (config.kv_event_queue > 0) {
    kv_events_ = std::make_shared<KvEventQueue>(size_t(config.kv_event_queue));
    blocks_.EnableEvents();
  }
  thread_ = std::thread([this] { Loop(); });
}

Engine::~Engine() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
  RunTasks();
  FlushKvEvents();
  if (kv_events_) kv_events_->Close();
  TakeInbox();
  for (auto& [id, a] : active_)
    if (!a->finished) Finish(*a, FinishReason::kCancelled, "engine shut down");
}

NumericsClass Engine::PromptClassFor(int num_prompt) const {
  // The bf16 path's fixed cost (every weight dequantised once per step) is repaid only by enough
  // prompt tokens per step: long prompts, and a step budget that lets them in. Both are fixed for
  // the request, so its class never depends on what it is batched with.
  const int min_tokens = std::max(1, config_.prefill_class_min_tokens);
  int chunk = config_.max_num_batched_tokens;
  if (config_.max_prefill_chunk > 0) chunk = std::min(chunk, config_.max_prefill_chunk);
  const bool prefill = PrefillClassAvailable() && num_prompt >= min_tokens && chunk >= min_tokens;
  return prefill ? NumericsClass::kPrefill : NumericsClass::kDecode;
}

Result<uint64_t> Engine::Submit(GenerationRequest req) {
  std::vector<GenerationRequest> one;
  one.push_back(std::move(req));
  BRISK_ASSIGN_OR_RETURN(const std::vector<uint64_t> ids, SubmitAll(std::move(one)));
  return ids[0];
}

Result<std::vector<uint64_t>> Engine::SubmitAll(std::vector<GenerationRequest> reqs) {
  const int V = fwd_->config().n_vocab;
  if (reqs.empty()) return Status::Error("no requests to submit");
  for (const GenerationRequest& req : reqs) {
    if (!req.sink) return Status::Error("request has no sink");
    BRISK_RETURN_IF_ERROR(
        ValidateGenerationRequest(req, {V, config_.max_model_len, tokenizer_ != nullptr}));
  }
  std::vector<std::unique_ptr<RequestState>> states;
  for (GenerationRequest& req : reqs) states.push_back(NewRequestState(std::move(req)));
  std::vector<uint64_t> ids;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_) return Status::Unavailable("the engine is shutting down");
    const int n = int(states.size());
    if (queued_ + n > config_.max_waiting + max_num_seqs_.load()) {
      stats_.rejected += n;
      return Status::ResourceExhausted("overloaded: " + std::to_string(queued_) +
                                       " requests are queued or running; retry later");
    }
    for (size_t i = 0; i < states.size(); ++i) {
      RequestState& a = *states[i];
      a.id = a.seq.id = next_id_++;
      ids.push_back(a.id);
      a.prefill_leader = PrefillLeaderOf(states, i, config_.prefix_caching);
    }
    queued_ += n;
    for (auto& a : states) inbox_.push_back(std::move(a));
  }
  wake_.notify_all();
  return ids;
}

void Engine::Cancel(uint64_t id) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    cancels_.push_back(id);
  }
  wake_.notify_all();
}

EngineStats Engine::Stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

void Engine::SetBatchPolicy(BatchPolicy policy, int max_num_seqs, int max_num_batched_tokens,
                            double tpot_target_ms) {
  UpdateBatchSettings([&](BatchSettings& s) {
    s = {policy, max_num_seqs, max_num_batched_tokens, tpot_target_ms};
  });
}

BatchSettings Engine::batch_settings() const {
  std::lock_guard<std::mutex> lock(mu_);
  return settings_;
}

BatchSettings Engine::UpdateBatchSettings(const std::function<void(BatchSettings&)>& change) {
  BatchSettings stored;
  {
    std::lock_guard<std::mutex> lock(mu_);
    BatchSettings s = settings_;
    change(s);
    s.max_num_seqs = std::clamp(s.max_num_seqs, 1, config_.max_num_seqs);
    s.max_num_batched_tokens =
        std::clamp(s.max_num_batched_tokens, 1, config_.max_num_batched_tokens);
    if (!(s.tpot_target_ms > 0)) s.tpot_target_ms = config_.tpot_target_ms;
    auto c = std::make_unique<BatchControllerConfig>();
    c->policy = s.policy;
    c->max_num_seqs = s.max_num_seqs;
    c->max_num_batched_tokens = s.max_num_batched_tokens;
    c->tpot_target_ms = s.tpot_target_ms;
    settings_ = s;
    pending_policy_ = std::move(c);
    stored = s;
  }
  wake_.notify_all();
  return stored;
}

void Engine::SetMaxNumSeqs(int n) {
  SetBatchPolicy(BatchPolicy::kStatic, n, config_.max_num_batched_tokens, 0);
}

std::unique_ptr<RequestState> Engine::NewRequestState(GenerationRequest req) const {
  const int V = fwd_->config().n_vocab;
  auto r = std::make_unique<RequestState>();
  r->t_submit = NowSeconds();
  if (req.timeout_s > 0) r->deadline = r->t_submit + req.timeout_s;
  const uint64_t seed = req.sampling.seed ? *req.sampling.seed : std::random_device{}();
  r->sampler = std::make_unique<Sampler>(req.sampling, V, seed);
  if (tokenizer_) r->detok = std::make_unique<StreamingDetokenizer>(*tokenizer_, false);
  r->stop = std::make_unique<StopMatcher>(req.stop);
  r->plain_greedy = IsPlainGreedy(req.sampling) && !req.constraint;
  if (req.constraint) {
    const int64_t room = int64_t(config_.max_model_len) - int64_t(req.prompt.size());
    req.constraint->SetMaxTokens(int(std::clamp<int64_t>(room, 0, req.max_tokens)));
  }
  r->seq.tokens = req.prompt;
  r->seq.num_prompt = int(req.prompt.size());
  r->seq.prompt_class = PromptClassFor(r->seq.num_prompt);
  r->seq.priority = req.priority;
  r->seq.skip_prefix_cache = req.prompt_logprobs >= 0;
  if (req.prompt_logprobs >= 0) r->prompt_logprobs.resize(req.prompt.size() - 1);
  r->req = std::move(req);
  return r;
}

void Engine::TakeInbox() {
  std::vector<std::unique_ptr<RequestState>> in;
  std::vector<uint64_t> cancels;
  {
    std::lock_guard<std::mutex> lock(mu_);
    in.swap(inbox_);
    cancels.swap(cancels_);
  }
  for (auto& r : in) {
    r->seq.arrival = next_arrival_++;
    if (r->prefill_leader)
      parked_.push_back(r.get());
    else
      scheduler_.Add(&r->seq);
    const uint64_t id = r->id;
    active_[id] = std::move(r);
  }
  for (uint64_t id : cancels) {
    auto it = active_.find(id);
    if (it != active_.end() && !it->second->finished)
      Finish(*it->second, FinishReason::kCancelled, "cancelled");
  }
}

void Engine::ReleaseParked() {
  auto ready = [&](RequestState* r) {
    if (r->finished) return true;  // cancelled or expired while parked: just drop it
    const auto leader = active_.find(r->prefill_leader);
    if (leader != active_.end() && !leader->second->finished && !leader->second->prompt_done)
      return false;
    scheduler_.Add(&r->seq);
    return true;
  };
  parked_.erase(std::remove_if(parked_.begin(), parked_.end(), ready), parked_.end());
}

void Engine::Finish(RequestState& r, FinishReason reason, const std::string& message,
                    const std::string& stop) {
  if (r.finished) return;
  r.finished = true;
  scheduler_.Remove(&r.seq);
  const FinishInfo f = MakeFinishInfo(r, reason, message, stop, NowSeconds());
  {
    // Published before the sink hears of it: whoever waits on the finish sees its blocks freed.
    std::lock_guard<std::mutex> lock(mu_);
    --queued_;
    ++stats_.finished;
    PublishLocked();
  }
  r.req.sink->OnFinish(f);
}

void Engine::DropFinished() {
  for (auto it = active_.begin(); it != active_.end();)
    it = it->second->finished ? active_.erase(it) : std::next(it);
}

void Engine::PublishLocked() {
  EngineStats& s = stats_;
  s.running = scheduler_.num_running();
  s.waiting = scheduler_.num_waiting() + int(inbox_.size()) + int(parked_.size());
  s.max_num_seqs = max_num_seqs_.load();
  s.kv_blocks_free = blocks_.num_free_blocks();
  s.kv_usage = blocks_.usage();
  s.prefix_queried_tokens = blocks_.stats().prefix_queries;
  s.prefix_hit_tokens = blocks_.stats().prefix_hits;
  s.preemptions = scheduler_.num_preemptions();
  if (kv_events_) s.kv_events_dropped = kv_events_->dropped();
}

// ---- the step's phases -------------------------------------------------------------------------

bool Engine::Step() {
  const double t0 = NowSeconds();
  const StepPlan plan = PlanStep(t0);
  if (plan.chunks.empty()) {
    // Nothing ran: the "last step" gauges read 0, so an idle engine never shows the batch of its
    // final step beside 0 running requests (issue 32).
    std::lock_guard<std::mutex> lock(mu_);
    PublishLocked();
    stats_.last_step_seqs = stats_.last_step_tokens = 0;
    return false;
  }
  // Partial prefix-cache hits: the shared rows must be in place before anything reads them.
  for (const KvBlockCopy& c : plan.copies) kv_->CopyBlock(c.src, c.dst);
  const ModelBatch& batch = BuildBatch(plan, t0);
  if (const Status st = RunModel(batch); st.ok()) {
    scheduler_.Commit(plan);
    CountStepTokens(batch);
    CompletePrompts(batch);
    const std::span<const SampleResult> results = SampleOutputs(batch);
    const OutputRules rules{sampler_.eog_ids(), config_.max_model_len};
    for (const FinishDecision& d : ProcessOutputs(batch.sampled, results, NowSeconds(), rules))
      Finish(*d.request, d.reason, d.message, d.stop_matched);
  } else {  // inputs were validated at submission: a failure here fails the batch only
    for (const ScheduledChunk& c : plan.chunks)
      Finish(*active_.at(c.seq->id), FinishReason::kError, st.message());
  }
  DropFinished();
  ObserveStep(batch, t0);
  PublishStep(plan, t0);
  return true;
}

// Takes new submissions and cancellations, ends expired requests, applies a policy change, and
// asks the scheduler for this step's chunks.
StepPlan Engine::PlanStep(double now) {
  TakeInbox();
  ExpireDeadlines(now);
  ReleaseParked();
  ApplyPendingPolicy();
  const BatchLimits limits = controller_.limits();
  max_num_seqs_.store(limits.max_num_seqs);
  SchedulerConfig sc = scheduler_.config();
  sc.max_num_seqs = limits.max_num_seqs;
  sc.max_num_batched_tokens = limits.max_num_batched_tokens;
  scheduler_.set_config(sc);
  return scheduler_.Schedule();
}

void Engine::ExpireDeadlines(double now) {
  for (auto& [id, r] : active_)
    if (!r->finished && r->deadline > 0 && now > r->deadline)
      Finish(*r, FinishReason::kDeadline, "deadline exceeded");
}

void Engine::ApplyPendingPolicy() {
  std::unique_ptr<BatchControllerConfig> pending;
  {
    std::lock_guard<std::mutex> lock(mu_);
    pending.swap(pending_policy_);
  }
  if (pending) controller_ = BatchController(*pending);
}

const Engine::ModelBatch& Engine::BuildBatch(const StepPlan& plan, double now) {
  ModelBatch& b = batch_;
  b.tokens.clear();
  b.runs.clear();
  b.logit_rows.clear();
  b.row_uses.clear();
  b.sampled.clear();
  b.prompts_done.clear();
  b.needs_hidden = false;
  b.fused_argmax = true;
  b.prompt_tokens = 0;
  b.decode_seqs = 0;
  for (const ScheduledChunk& c : plan.chunks) {
    const SeqState& seq = *c.seq;
    RequestState& r = *active_.at(seq.id);
    if (r.t_scheduled < 0) r.t_scheduled = now;
    b.decode_seqs += c.start >= seq.num_prompt;
    const int32_t first_row = int32_t(b.tokens.size());
    b.tokens.insert(b.tokens.end(), seq.tokens.begin() + c.start,
                    seq.tokens.begin() + c.start + c.n);
    const std::span<const int32_t> table = blocks_.BlockTable(seq.id);
    // A prefill-class sequence's prompt tokens take that class; generated tokens (also when
    // recomputed after a preemption) and short prompts the decode class.
    const int prompt_part = std::max(0, std::min(c.start + c.n, seq.num_prompt) - c.start);
    const bool prefill_class = seq.prompt_class == NumericsClass::kPrefill;
    b.runs.push_back({KvBlocks{kv_.get(), table.data(), int(table.size())}, c.start, c.n,
                      prefill_class ? prompt_part : 0});
    b.prompt_tokens += prompt_part;
    AddOutputRows(c, r, first_row, &b);
  }
  return b;
}

// The rows chunk c of r needs: each prompt position whose next token is scored (prompt logprobs,
// until delivered), and the last token's row to sample from, or for a prefill-only request its
// hidden state when asked for.
void Engine::AddOutputRows(const ScheduledChunk& c, RequestState& r, int32_t first_row,
                           ModelBatch* b) {
  const SeqState& seq = *c.seq;
  const int end = c.start + c.n;
  if (r.req.prompt_logprobs >= 0 && !r.prompt_done) {
    for (int pos = c.start; pos < std::min(end, seq.num_prompt - 1); ++pos) {
      b->logit_rows.push_back(first_row + pos - c.start);
      b->row_uses.push_back({&r, -1, pos});
    }
  }
  if (!r.prompt_done && end >= seq.num_prompt) b->prompts_done.push_back(&r);
  if (!c.sample) return;
  if (r.req.max_tokens == 0) {
    if (!r.req.return_hidden) return;
    b->logit_rows.push_back(first_row + c.n - 1);
    b->row_uses.push_back({&r, -1, -1});
    b->needs_hidden = true;
    return;
  }
  b->logit_rows.push_back(first_row + c.n - 1);
  b->row_uses.push_back({&r, int(b->sampled.size()), -1});
  b->sampled.push_back(&r);
  // Suppressed tokens (ignore_eos, min_tokens) do not need the logits: the fused argmax skips
  // them.
  b->fused_argmax = b->fused_argmax && r.plain_greedy;
}

// Logits (or, on the fused-argmax route, the argmax ids) of the batch's sampled rows.
Status Engine::RunModel(const ModelBatch& b) {
  if (b.row_uses.size() != b.sampled.size()) return RunModelRows(b);
  if (b.sampled.empty()) return fwd_->RunBatch(b.tokens, b.runs, {}, nullptr);
  if (b.fused_argmax)
    return fwd_->RunBatchArgmax(b.tokens, b.runs, b.logit_rows, argmax_.data(),
                                sampler_.SuppressedSpans(b.sampled));
  return fwd_->RunBatch(b.tokens, b.runs, b.logit_rows, logits_.data());
}

Status Engine::RunModelRows(const ModelBatch& b) {
  const ModelConfig& mc = fwd_->config();
  float* hidden = nullptr;
  if (b.needs_hidden) {
    hidden_.resize(b.logit_rows.size() * size_t(mc.n_embd));
    hidden = hidden_.data();
  }
  Status st;
  const bool only_hidden = std::all_of(b.row_uses.begin(), b.row_uses.end(), [](const RowUse& u) {
    return u.sample < 0 && u.prompt_pos < 0;
  });
  if (only_hidden) {
    st = fwd_->RunBatch(b.tokens, b.runs, b.logit_rows, nullptr, hidden);
  } else {
    // Prompt scoring can ask for a logits row per prompt token: a bounded group at a time.
    constexpr int kGroupRows = 32;
    group_logits_.resize(size_t(kGroupRows) * size_t(mc.n_vocab));
    st = fwd_->RunBatchGrouped(
        b.tokens, b.runs, b.logit_rows, kGroupRows, group_logits_.data(),
        [&](int first, int count, const float* logits) {
          ScorePromptRows(b, first, count, logits);
        },
        hidden);
  }
  if (!st.ok() || !hidden) return st;
  for (size_t i = 0; i < b.row_uses.size(); ++i) {
    const RowUse& u = b.row_uses[i];
    if (u.sample < 0 && u.prompt_pos < 0)
      u.request->hidden.assign(hidden + i * size_t(mc.n_embd),
                               hidden + (i + 1) * size_t(mc.n_embd));
  }
  return st;
}

// Rows [first, first + count) of the batch: sampled rows' logits go where the sampler reads them,
// prompt rows are scored in parallel.
void Engine::ScorePromptRows(const ModelBatch& b, int first, int count, const float* logits) {
  const size_t V = size_t(fwd_->config().n_vocab);
  pool_->ParallelFor(count, 1, [&](int64_t k0, int64_t k1, int) {
    for (int64_t k = k0; k < k1; ++k) {
      const RowUse& u = b.row_uses[size_t(first + k)];
      const float* row = logits + size_t(k) * V;
      if (u.sample >= 0) {
        std::copy(row, row + V, logits_.data() + size_t(u.sample) * V);
      } else if (u.prompt_pos >= 0) {
        RequestState& r = *u.request;
        const int32_t next = r.seq.tokens[size_t(u.prompt_pos) + 1];
        r.prompt_logprobs[size_t(u.prompt_pos)] =
            ScoreToken(row, int(V), next, r.req.prompt_logprobs);
      }
    }
  });
}

// Each request whose prompt was computed this step: its prompt logprobs go out before any token
// of it, and a prefill-only request ends here.
void Engine::CompletePrompts(const ModelBatch& b) {
  for (RequestState* r : b.prompts_done) {
    r->prompt_done = true;
    if (r->req.prompt_logprobs >= 0) r->req.sink->OnPromptLogprobs(r->prompt_logprobs);
    if (r->req.max_tokens == 0) Finish(*r, FinishReason::kLength);
  }
}

std::span<const SampleResult> Engine::SampleOutputs(const ModelBatch& b) {
  if (!b.fused_argmax) return sampler_.Sample(*pool_, b.sampled, logits_.data());
  argmax_results_.assign(b.sampled.size(), SampleResult{});
  for (size_t i = 0; i < b.sampled.size(); ++i) argmax_results_[i].token = argmax_[i];
  return argmax_results_;
}

// Counted before the sinks hear of the tokens, so counters never lag what clients got.
void Engine::CountStepTokens(const ModelBatch& b) {
  std::lock_guard<std::mutex> lock(mu_);
  stats_.prompt_tokens += b.prompt_tokens;
  stats_.generation_tokens += int64_t(b.sampled.size());
}

// Feeds the batch controller (the load average is read at most once a second).
void Engine::ObserveStep(const ModelBatch& b, double t0) {
  const double t_end = NowSeconds();
  if (controller_.config().policy == BatchPolicy::kLoadAvg && t_end - load_read_at_ > 1.0) {
    load1_ = ReadLoadAverage1();
    load_read_at_ = t_end;
  }
  controller_.Observe(t_end, t_end - t0, b.decode_seqs, scheduler_.num_running(), load1_);
}

void Engine::PublishStep(const StepPlan& plan, double t0) {
  std::lock_guard<std::mutex> lock(mu_);
  PublishLocked();
  EngineStats& s = stats_;
  s.policy = controller_.config().policy;
  s.max_num_batched_tokens = controller_.limits().max_num_batched_tokens;
  s.tpot_target_ms = controller_.config().tpot_target_ms;
  s.tpot_p95_ms = controller_.tpot_p95_ms();
  ++s.steps;
  s.last_step_seqs = int(plan.chunks.size());
  s.last_step_tokens = plan.num_tokens;
  s.step_seqs_total += s.last_step_seqs;
  s.step_tokens_total += s.last_step_tokens;
  s.last_step_s = NowSeconds() - t0;
  // This step ended the last request: the engine is idle now, not running a batch of the size
  // it just ran (the step's counts are in the totals above).
  if (active_.empty()) s.last_step_seqs = s.last_step_tokens = 0;
}

void Engine::Loop() {
  bool idle = false;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      // With nothing schedulable (all work waiting on a lowered cap, say) re-check every
      // millisecond so deadlines still fire; otherwise run the next step at once.
      auto ready = [&] {
        return stop_ || !inbox_.empty() || !cancels_.empty() || !tasks_.empty() ||
               (!active_.empty() && !idle);
      };
      if (!ready()) wake_.wait_for(lock, std::chrono::milliseconds(idle ? 1 : 1000), ready);
      if (stop_) return;
    }
    RunTasks();
    FlushKvEvents();
    idle = !Step();
    FlushKvEvents();
  }
}

}  // namespace brisk
