#include "engine/engine.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <random>

#include "engine/request_validation.h"
#include "engine/stop_matcher.h"
#include "kernels/cpu/matmul.h"
#include "tokenizer/detokenizer.h"
#include "util/clock.h"

namespace brisk {
namespace {

// Greedy with nothing that needs the logits themselves: the lm_head can fuse the argmax.
bool PlainGreedy(const SamplingParams& p) {
  return p.temperature == 0.0f && p.repetition_penalty == 1.0f && p.presence_penalty == 0.0f &&
         p.frequency_penalty == 0.0f && p.logit_bias.empty() && !p.logprobs && p.top_logprobs == 0;
}

}  // namespace

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

struct Engine::Active {
  uint64_t id = 0;
  GenerationRequest req;
  SeqState seq;
  std::unique_ptr<Sampler> sampler;
  std::unique_ptr<StreamingDetokenizer> detok;
  std::unique_ptr<StopMatcher> stop;
  double t_submit = 0, t_scheduled = -1, t_first = -1, t_last = -1, deadline = 0;
  int generated = 0;
  bool finished = false;
};

Result<std::unique_ptr<Engine>> Engine::Create(const Model& model, const Tokenizer* tokenizer,
                                               const EngineConfig& config) {
  EngineConfig c = config;
  const ModelConfig& mc = model.config();
  if (c.max_num_seqs < 1 || c.max_num_seqs > 1024)
    return Status::Error("max_num_seqs must be in 1..1024, got " + std::to_string(c.max_num_seqs));
  if (c.max_num_batched_tokens < 1 || c.max_num_batched_tokens > 65536)
    return Status::Error("max_num_batched_tokens must be in 1..65536, got " +
                         std::to_string(c.max_num_batched_tokens));
  if (c.max_prefill_chunk < 0) return Status::Error("max_prefill_chunk must be >= 0");
  if (c.kv_block_size < 1 || c.kv_block_size > kMaxKvBlockSize)
    return Status::Error("KV block size must be in 1.." + std::to_string(kMaxKvBlockSize));
  if (c.max_waiting < 0) return Status::Error("max_waiting must be >= 0");
  if (c.max_model_len == 0) c.max_model_len = int(std::min<int64_t>(mc.context_length, 8192));
  if (c.max_model_len < 2 || c.max_model_len > mc.context_length)
    return Status::Error("max_model_len must be in 2.." + std::to_string(mc.context_length) +
                         " (the model's context length), got " + std::to_string(c.max_model_len));
  const size_t block_bytes = KvStore::BlockBytes(mc, c.kv_block_size, c.kv_type);
  const int64_t blocks_per_seq = (c.max_model_len + c.kv_block_size - 1) / c.kv_block_size;
  if (c.kv_cache_bytes == 0)
    c.kv_cache_bytes = std::min<size_t>(
        size_t(2) << 30, size_t(blocks_per_seq) * size_t(c.max_num_seqs) * block_bytes);
  const int64_t n_blocks = int64_t(c.kv_cache_bytes / block_bytes);
  if (n_blocks < blocks_per_seq)
    return Status::Error("the KV cache budget (" + std::to_string(c.kv_cache_bytes >> 20) +
                         " MiB) holds " + std::to_string(n_blocks * c.kv_block_size) +
                         " tokens, fewer than max_model_len " + std::to_string(c.max_model_len));
  if (n_blocks > (int64_t(1) << 30)) return Status::Error("KV cache budget too large");
  return std::unique_ptr<Engine>(new Engine(model, tokenizer, c, int(n_blocks)));
}

Engine::Engine(const Model& model, const Tokenizer* tokenizer, const EngineConfig& config,
               int n_blocks)
    : model_(model),
      tokenizer_(tokenizer),
      config_(config),
      pool_(std::make_unique<ThreadPool>(config.threads)),
      fwd_(std::make_unique<FastForward>(model, *pool_, config.max_num_batched_tokens)),
      kv_(std::make_unique<KvStore>(model.config(), n_blocks, config.kv_block_size,
                                    config.kv_type)),
      blocks_(n_blocks, config.kv_block_size, config.prefix_caching),
      scheduler_({config.max_num_seqs, config.max_num_batched_tokens, config.max_prefill_chunk},
                 blocks_),
      max_num_seqs_(config.max_num_seqs),
      controller_({config.batch_policy, config.max_num_seqs, config.max_num_batched_tokens,
                   config.tpot_target_ms}) {
  if (tokenizer_) eog_ids_ = tokenizer_->eog_ids();
  kv_->Prefault(*pool_);  // the KV budget is resident from the start: memory stays flat under load
  logits_.resize(size_t(config.max_num_seqs) * size_t(model.config().n_vocab));
  argmax_.resize(size_t(config.max_num_seqs));
  stats_.max_num_seqs = controller_.limits().max_num_seqs;
  stats_.max_num_batched_tokens = controller_.limits().max_num_batched_tokens;
  stats_.policy = config.batch_policy;
  stats_.tpot_target_ms = config.tpot_target_ms;
  stats_.kv_blocks_total = stats_.kv_blocks_free = n_blocks;
  thread_ = std::thread([this] { Loop(); });
}

Engine::~Engine() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
  TakeInbox();
  for (auto& [id, a] : active_)
    if (!a->finished) Finish(*a, FinishReason::kCancelled, "engine shut down");
}

bool Engine::PrefillClassFor(int num_prompt) const {
  // The bf16 path's fixed cost (every weight dequantised once per step) is repaid only by enough
  // prompt tokens per step: long prompts, and a step budget that lets them in. Both are fixed for
  // the request, so its class never depends on what it is batched with.
  const int min_tokens = std::max(1, config_.prefill_class_min_tokens);
  int chunk = config_.max_num_batched_tokens;
  if (config_.max_prefill_chunk > 0) chunk = std::min(chunk, config_.max_prefill_chunk);
  return WidePathAvailable() && num_prompt >= min_tokens && chunk >= min_tokens;
}

Result<uint64_t> Engine::Submit(GenerationRequest req) {
  const int V = fwd_->config().n_vocab;
  if (!req.sink) return Status::Error("request has no sink");
  BRISK_RETURN_IF_ERROR(
      ValidateGenerationRequest(req, {V, config_.max_model_len, tokenizer_ != nullptr}));

  auto a = std::make_unique<Active>();
  a->t_submit = NowSeconds();
  if (req.timeout_s > 0) a->deadline = a->t_submit + req.timeout_s;
  const uint64_t seed = req.sampling.seed ? *req.sampling.seed : std::random_device{}();
  a->sampler = std::make_unique<Sampler>(req.sampling, V, seed);
  if (tokenizer_) a->detok = std::make_unique<StreamingDetokenizer>(*tokenizer_, false);
  a->stop = std::make_unique<StopMatcher>(req.stop);
  a->seq.tokens = req.prompt;
  a->seq.num_prompt = int(req.prompt.size());
  a->seq.prefill_class = PrefillClassFor(a->seq.num_prompt);
  a->seq.priority = req.priority;
  a->req = std::move(req);
  uint64_t id;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_) return Status::Unavailable("the engine is shutting down");
    if (queued_ >= config_.max_waiting + max_num_seqs_.load()) {
      ++stats_.rejected;
      return Status::ResourceExhausted("overloaded: " + std::to_string(queued_) +
                                       " requests are queued or running; retry later");
    }
    id = next_id_++;
    a->id = id;
    a->seq.id = id;
    ++queued_;
    inbox_.push_back(std::move(a));
  }
  wake_.notify_all();
  return id;
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
  auto c = std::make_unique<BatchControllerConfig>();
  c->policy = policy;
  c->max_num_seqs = std::clamp(max_num_seqs, 1, config_.max_num_seqs);
  c->max_num_batched_tokens = std::clamp(max_num_batched_tokens, 1, config_.max_num_batched_tokens);
  c->tpot_target_ms = tpot_target_ms > 0 ? tpot_target_ms : config_.tpot_target_ms;
  {
    std::lock_guard<std::mutex> lock(mu_);
    pending_policy_ = std::move(c);
  }
  wake_.notify_all();
}

void Engine::SetMaxNumSeqs(int n) {
  SetBatchPolicy(BatchPolicy::kStatic, n, config_.max_num_batched_tokens, 0);
}

void Engine::TakeInbox() {
  std::vector<std::unique_ptr<Active>> in;
  std::vector<uint64_t> cancels;
  {
    std::lock_guard<std::mutex> lock(mu_);
    in.swap(inbox_);
    cancels.swap(cancels_);
  }
  for (auto& a : in) {
    a->seq.arrival = next_arrival_++;
    scheduler_.Add(&a->seq);
    const uint64_t id = a->id;
    active_[id] = std::move(a);
  }
  for (uint64_t id : cancels) {
    auto it = active_.find(id);
    if (it != active_.end() && !it->second->finished)
      Finish(*it->second, FinishReason::kCancelled, "cancelled");
  }
}

void Engine::Finish(Active& a, FinishReason reason, const std::string& message,
                    const std::string& stop) {
  if (a.finished) return;
  a.finished = true;
  scheduler_.Remove(&a.seq);
  const double now = NowSeconds();
  FinishInfo f;
  f.reason = reason;
  f.message = message;
  f.stop_matched = stop;
  f.usage.prompt_tokens = a.seq.num_prompt;
  f.usage.completion_tokens = a.generated;
  f.usage.cached_tokens = std::min(a.seq.num_cached, a.seq.num_prompt);
  RequestTimings& t = f.timings;
  t.queued_s = a.t_scheduled >= 0 ? a.t_scheduled - a.t_submit : now - a.t_submit;
  t.ttft_s = a.t_first >= 0 ? a.t_first - a.t_submit : 0;
  t.e2e_s = now - a.t_submit;
  t.prefill_s = a.t_first >= 0 && a.t_scheduled >= 0 ? a.t_first - a.t_scheduled : 0;
  t.decode_s = a.t_first >= 0 ? a.t_last - a.t_first : 0;
  t.preemptions = a.seq.num_preemptions;
  {
    // Published before the sink hears of it: whoever waits on the finish sees its blocks freed.
    std::lock_guard<std::mutex> lock(mu_);
    --queued_;
    ++stats_.finished;
    PublishLocked();
  }
  a.req.sink->OnFinish(f);
}

void Engine::PublishLocked() {
  EngineStats& s = stats_;
  s.running = scheduler_.num_running();
  s.waiting = scheduler_.num_waiting() + int(inbox_.size());
  s.max_num_seqs = max_num_seqs_.load();
  s.kv_blocks_free = blocks_.num_free_blocks();
  s.kv_usage = blocks_.usage();
  s.prefix_queried_tokens = blocks_.stats().prefix_queries;
  s.prefix_hit_tokens = blocks_.stats().prefix_hits;
  s.preemptions = scheduler_.num_preemptions();
}

void Engine::Suppressed(const Active& a, std::vector<int32_t>* ids) const {
  ids->clear();
  if (a.req.ignore_eos || a.generated < a.req.min_tokens)
    ids->assign(eog_ids_.begin(), eog_ids_.end());
  if (a.generated < a.req.min_tokens)
    ids->insert(ids->end(), a.req.stop_token_ids.begin(), a.req.stop_token_ids.end());
}

std::span<const std::span<const int32_t>> Engine::SuppressedSpans(
    const std::vector<Active*>& sampled) {
  if (suppressed_ids_.size() < sampled.size()) suppressed_ids_.resize(sampled.size());
  suppressed_spans_.clear();
  bool any = false;
  for (size_t i = 0; i < sampled.size(); ++i) {
    Suppressed(*sampled[i], &suppressed_ids_[i]);
    suppressed_spans_.emplace_back(suppressed_ids_[i]);
    any = any || !suppressed_ids_[i].empty();
  }
  if (!any) return {};
  return suppressed_spans_;
}

// In parallel over the compute pool, which is idle between steps: a top-p row costs ~0.4 ms
// (sampler_bench), so a 16-sequence step spent ~6 ms sampling on one core while the other waited.
// Each request's sampler (its RNG and scratch) is used by one thread, and rows are claimed one at
// a time, so the tokens do not depend on which thread drew them.
void Engine::SampleRows(const std::vector<Active*>& sampled) {
  const size_t V = size_t(fwd_->config().n_vocab);
  sample_results_.resize(sampled.size());
  sample_suppress_.resize(size_t(pool_->size()));
  std::atomic<size_t> next{0};
  pool_->Run([&](int thread, int) {
    std::vector<int32_t>& suppress = sample_suppress_[size_t(thread)];
    for (size_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < sampled.size();) {
      Active& a = *sampled[i];
      if (a.req.constraint) continue;
      Suppressed(a, &suppress);
      sample_results_[i] = a.sampler->Sample(&logits_[i * V], a.seq.tokens, suppress);
    }
  });
}

// Samples, and while the constraint refuses the token, samples again without it (the row is
// the sampler's scratch, so each try starts from a saved copy). After a few refusals every token
// the constraint refuses is masked at once. False (request finished with an error) when no token
// is allowed at all.
bool Engine::SampleConstrained(Active& a, float* row, std::vector<int32_t>* suppress,
                               SampleResult* r) {
  constexpr int kRetries = 8;
  const int V = fwd_->config().n_vocab;
  const TokenConstraint& c = *a.req.constraint;
  constrained_row_.assign(row, row + V);
  *r = a.sampler->Sample(row, a.seq.tokens, *suppress);
  for (int attempt = 0; r->token >= 0 && !c.Allows(r->token); ++attempt) {
    if (attempt == kRetries) {
      for (int32_t t = 0; t < V; ++t)
        if (!c.Allows(t)) suppress->push_back(t);
    } else if (attempt > kRetries) {
      r->token = -1;
      break;
    } else {
      suppress->push_back(r->token);
    }
    std::copy(constrained_row_.begin(), constrained_row_.end(), row);
    *r = a.sampler->Sample(row, a.seq.tokens, *suppress);
  }
  if (r->token < 0 || !c.Allows(r->token)) {
    Finish(a, FinishReason::kError, "no token can continue the required output format");
    return false;
  }
  a.req.constraint->Accept(r->token);
  return true;
}

void Engine::EmitToken(Active& a, const SampleResult& r, double now) {
  a.seq.tokens.push_back(r.token);
  ++a.generated;
  if (a.t_first < 0) a.t_first = now;
  a.t_last = now;
  const bool eog = std::find(eog_ids_.begin(), eog_ids_.end(), r.token) != eog_ids_.end();
  const bool stop_token = std::find(a.req.stop_token_ids.begin(), a.req.stop_token_ids.end(),
                                    r.token) != a.req.stop_token_ids.end();
  const bool stops = stop_token || (eog && !a.req.ignore_eos);
  TokenEvent e;
  e.token = r.token;
  e.logprob = r.logprob;
  e.top = r.top;
  std::string matched;
  if (!stops && a.detok) e.text = a.stop->Append(a.detok->Push(r.token), &matched);
  const bool length =
      a.generated >= a.req.max_tokens || int64_t(a.seq.tokens.size()) >= config_.max_model_len;
  if ((stops || length) && matched.empty() && a.detok) {
    e.text += a.stop->Append(a.detok->Flush(), &matched);
    if (matched.empty()) e.text += a.stop->Flush();
  }
  a.req.sink->OnToken(e);
  if (!matched.empty())
    Finish(a, FinishReason::kStop, {}, matched);
  else if (stops)
    Finish(a, FinishReason::kStop);
  else if (length)
    Finish(a, FinishReason::kLength);
}

bool Engine::Step() {
  TakeInbox();
  const double t0 = NowSeconds();
  for (auto& [id, a] : active_)
    if (!a->finished && a->deadline > 0 && t0 > a->deadline)
      Finish(*a, FinishReason::kDeadline, "deadline exceeded");

  {
    std::unique_ptr<BatchControllerConfig> pending;
    {
      std::lock_guard<std::mutex> lock(mu_);
      pending.swap(pending_policy_);
    }
    if (pending) controller_ = BatchController(*pending);
  }
  const BatchLimits limits = controller_.limits();
  max_num_seqs_.store(limits.max_num_seqs);
  SchedulerConfig sc = scheduler_.config();
  sc.max_num_seqs = limits.max_num_seqs;
  sc.max_num_batched_tokens = limits.max_num_batched_tokens;
  scheduler_.set_config(sc);
  const StepPlan plan = scheduler_.Schedule();
  if (plan.chunks.empty()) return false;
  // Partial prefix-cache hits: the shared rows must be in place before anything reads them.
  for (const KvBlockCopy& c : plan.copies) kv_->CopyBlock(c.src, c.dst);

  const int V = fwd_->config().n_vocab;
  batch_tokens_.clear();
  runs_.clear();
  logit_rows_.clear();
  std::vector<Active*> sampled;
  bool all_plain = true;
  int64_t prompt_tokens = 0;
  int decode_seqs = 0;  // counted now: finished requests' states are freed before the end
  for (const ScheduledChunk& c : plan.chunks) {
    decode_seqs += c.start >= c.seq->num_prompt;
    Active& a = *active_.at(c.seq->id);
    if (a.t_scheduled < 0) a.t_scheduled = t0;
    batch_tokens_.insert(batch_tokens_.end(), c.seq->tokens.begin() + c.start,
                         c.seq->tokens.begin() + c.start + c.n);
    const std::span<const int32_t> table = blocks_.BlockTable(c.seq->id);
    // A prefill-class sequence's prompt tokens take that class (fast_forward.h); generated
    // tokens (also when recomputed after a preemption) and short prompts the decode class.
    const int prompt_part = std::max(0, std::min(c.start + c.n, c.seq->num_prompt) - c.start);
    runs_.push_back({KvBlocks{kv_.get(), table.data(), int(table.size())}, c.start, c.n,
                     c.seq->prefill_class ? prompt_part : 0});
    prompt_tokens += prompt_part;
    if (c.sample) {
      logit_rows_.push_back(int32_t(batch_tokens_.size()) - 1);
      sampled.push_back(&a);
      // Suppressed tokens (ignore_eos, min_tokens) do not need the logits: the fused argmax
      // skips them.
      all_plain = all_plain && PlainGreedy(a.req.sampling) && !a.req.constraint;
    }
  }
  Status st;
  if (sampled.empty())
    st = fwd_->RunBatch(batch_tokens_, runs_, {}, nullptr);
  else if (all_plain)
    st = fwd_->RunBatchArgmax(batch_tokens_, runs_, logit_rows_, argmax_.data(),
                              SuppressedSpans(sampled));
  else
    st = fwd_->RunBatch(batch_tokens_, runs_, logit_rows_, logits_.data());
  if (!st.ok()) {  // inputs were validated at submission: a failure here fails the batch only
    for (const ScheduledChunk& c : plan.chunks)
      Finish(*active_.at(c.seq->id), FinishReason::kError, st.message());
  } else {
    scheduler_.Commit(plan);
    {
      // Counted before the sinks hear of the tokens, so counters never lag what clients got.
      std::lock_guard<std::mutex> lock(mu_);
      stats_.prompt_tokens += prompt_tokens;
      stats_.generation_tokens += int64_t(sampled.size());
    }
    if (!all_plain) SampleRows(sampled);
    const double now = NowSeconds();
    std::vector<int32_t> suppress;
    for (size_t i = 0; i < sampled.size(); ++i) {
      Active& a = *sampled[i];
      SampleResult r;
      if (all_plain) {
        r.token = argmax_[i];
      } else if (a.req.constraint) {
        Suppressed(a, &suppress);
        if (!SampleConstrained(a, &logits_[i * size_t(V)], &suppress, &r)) continue;
      } else {
        r = std::move(sample_results_[i]);
      }
      EmitToken(a, r, now);
    }
  }
  for (auto it = active_.begin(); it != active_.end();)
    it = it->second->finished ? active_.erase(it) : std::next(it);

  // Feed the batch controller (the load average is read at most once a second).
  const double t_end = NowSeconds();
  if (controller_.config().policy == BatchPolicy::kLoadAvg && t_end - load_read_at_ > 1.0) {
    load1_ = ReadLoadAverage1();
    load_read_at_ = t_end;
  }
  controller_.Observe(t_end, t_end - t0, decode_seqs, scheduler_.num_running(), load1_);

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
  return true;
}

void Engine::Loop() {
  bool idle = false;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      // With nothing schedulable (all work waiting on a lowered cap, say) re-check every
      // millisecond so deadlines still fire; otherwise run the next step at once.
      auto ready = [&] {
        return stop_ || !inbox_.empty() || !cancels_.empty() || (!active_.empty() && !idle);
      };
      if (!ready()) wake_.wait_for(lock, std::chrono::milliseconds(idle ? 1 : 1000), ready);
      if (stop_) return;
    }
    idle = !Step();
  }
}

}  // namespace brisk
