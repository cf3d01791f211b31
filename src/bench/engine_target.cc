#include "bench/engine_target.h"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "engine/collecting_sink.h"
#include "formats/file_type.h"
#include "model/model.h"
#include "model/model_tokenizer.h"
#include "model/synth.h"
#include "runtime/cpu_features.h"
#include "tokenizer/jinja/chat_template.h"
#include "util/clock.h"

namespace brisk {
namespace {

// Counters() waits at most this long for the engine to publish the last step of a point.
constexpr int kSettlePolls = 200;
constexpr auto kSettlePollDelay = std::chrono::milliseconds(5);

double MsSince(double t0) { return (NowSeconds() - t0) * 1e3; }

struct Completion {
  RequestRecord record;
  std::function<void(RequestRecord)> done;
  const CollectingSink* sink = nullptr;  // null: refused before it reached the engine
};

// Finished requests travel from the engine thread to the driver through this queue.
struct Completions {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<Completion> done;
};

// What the engine's sink measured, as the driver's record.
RequestRecord RecordOf(CollectingSink& sink, double start_s) {
  const FinishInfo f = sink.info();
  RequestRecord rec;
  rec.start_s = start_s;
  rec.end_s = sink.finish_s();
  rec.token_s = sink.token_times();
  rec.finish_reason = FinishReasonName(f.reason);
  rec.ok = f.reason == FinishReason::kStop || f.reason == FinishReason::kLength;
  if (!rec.ok)
    rec.error = std::string("finished with ") + FinishReasonName(f.reason) +
                (f.message.empty() ? "" : ": " + f.message);
  rec.prompt_tokens = f.usage.prompt_tokens;
  rec.output_tokens = f.usage.completion_tokens;
  rec.cached_tokens = f.usage.cached_tokens;
  return rec;
}

class EngineTarget : public LoadTarget {
 public:
  explicit EngineTarget(const EngineTargetOptions& o) : o_(o) {}

  // Loads everything from o_.model; the sweep sends chat turns, so all of it is required.
  Status Load() {
    double t0 = NowSeconds();
    BRISK_ASSIGN_OR_RETURN(owned_model_, Model::Load(o_.model));
    info_.model_load_ms = MsSince(t0);
    t0 = NowSeconds();
    auto tok = TokenizerForModel(*owned_model_);
    if (!tok.ok())
      return tok.status().WithContext("brisk bench sends chat prompts and needs the tokenizer");
    owned_tokenizer_ = std::make_unique<Tokenizer>(std::move(tok).value());
    info_.tokenizer_load_ms = MsSince(t0);
    if (owned_model_->chat_template().empty())
      return Status::Error("the model has no chat template; brisk bench sends chat turns");
    return Init(*owned_model_, owned_tokenizer_.get());
  }

  Status Init(const Model& model, const Tokenizer* tokenizer) {
    model_ = &model;
    tokenizer_ = tokenizer;
    if (tokenizer_ && !model.chat_template().empty()) {
      auto tmpl = jinja::ChatTemplate::Parse(model.chat_template());
      if (!tmpl.ok()) return tmpl.status().WithContext("chat template");
      template_ = std::make_unique<jinja::ChatTemplate>(std::move(tmpl).value());
    }
    info_.mode = "in-process";
    info_.model = o_.model;
    if (model.gguf())
      if (auto ft = model.gguf()->GetUInt("general.file_type"); ft.ok())
        info_.file_type = FileTypeName(uint32_t(*ft));
    info_.synthetic = IsSynthetic(model);
    info_.tokenizer = tokenizer_ != nullptr;
    info_.isa = std::string(IsaName(ActiveIsa()));
    // The engine's pool follows the same rule (ThreadPool: 0 = one per core).
    info_.threads = o_.engine.threads > 0 ? o_.engine.threads
                                          : int(std::max(1u, std::thread::hardware_concurrency()));
    return Status::Ok();
  }

  TargetInfo Info() const override {
    TargetInfo i = info_;
    if (!engine_) return i;
    const EngineConfig& c = engine_->config();
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "max_model_len %d, KV cache %.0f MiB %s, prefix caching %s, threads %d",
                  c.max_model_len, double(c.kv_cache_bytes) / double(1 << 20),
                  KvTypeName(c.kv_type), c.prefix_caching ? "on" : "off", i.threads);
    i.engine_settings = buf;
    i.max_model_len = c.max_model_len;
    i.kv_block_size = c.kv_block_size;
    i.kv_blocks = engine_->Stats().kv_blocks_total;
    i.kv_cache_mib = double(c.kv_cache_bytes) / double(1 << 20);
    return i;
  }

  Status Configure(const TargetLimits& l) override {
    EngineConfig c = o_.engine;
    c.max_waiting = 1 << 20;  // the driver bounds its own load
    if (l.max_num_seqs > 0) c.max_num_seqs = l.max_num_seqs;
    if (l.max_num_batched_tokens > 0) c.max_num_batched_tokens = l.max_num_batched_tokens;
    c.max_prefill_chunk = l.max_prefill_chunk;
    if (!l.batch_policy.empty()) {
      BRISK_ASSIGN_OR_RETURN(c.batch_policy, ParseBatchPolicy(l.batch_policy));
    }
    if (l.tpot_target_ms > 0) c.tpot_target_ms = l.tpot_target_ms;
    if (engine_ && Same(engine_->config(), c)) return Status::Ok();
    BRISK_CHECK(in_flight_ == 0);
    engine_.reset();  // first: its KV cache is freed before the next one is allocated
    BRISK_ASSIGN_OR_RETURN(engine_, Engine::Create(*model_, tokenizer_, c));
    return Status::Ok();
  }

  void Start(const BenchRequest& r, std::function<void(RequestRecord)> done) override {
    BRISK_CHECK(engine_ != nullptr);
    const double start = NowSeconds();
    ++in_flight_;
    auto prompt = PromptOf(r);
    if (!prompt.ok()) return Refuse(start, prompt.status(), std::move(done));
    GenerationRequest g;
    g.prompt = std::move(prompt).value();
    g.max_tokens = r.max_tokens;
    g.ignore_eos = r.ignore_eos;
    g.sampling.temperature = r.temperature;
    g.sampling.top_p = r.top_p;
    g.sampling.seed = r.seed;
    g.timeout_s = o_.request_timeout_s;
    CollectingSink::Callbacks on;
    on.on_finish = [q = q_, done = std::move(done), start](CollectingSink& sink) mutable {
      std::lock_guard<std::mutex> lock(q->mu);
      q->done.push_back({RecordOf(sink, start), std::move(done), &sink});
      q->cv.notify_all();
    };
    auto sink = std::make_shared<CollectingSink>(r.max_tokens, std::move(on));
    g.sink = sink;
    auto id = engine_->Submit(std::move(g));
    if (!id.ok()) {
      // Submit refused it and will never call the sink: finish the record here.
      FinishInfo f;
      f.reason = FinishReason::kError;
      f.message = id.message();
      sink->OnFinish(f);
      return;
    }
    live_.push_back({*id, sink});
  }

  void Poll(double seconds) override {
    std::unique_lock<std::mutex> lock(q_->mu);
    if (in_flight_ == 0 && q_->done.empty()) return;
    q_->cv.wait_for(lock, std::chrono::duration<double>(seconds),
                    [&] { return !q_->done.empty(); });
    while (!q_->done.empty()) {
      Completion c = std::move(q_->done.front());
      q_->done.pop_front();
      --in_flight_;
      std::erase_if(live_, [&](const Live& l) { return l.sink.get() == c.sink; });
      lock.unlock();
      c.done(std::move(c.record));  // may Start() the next request
      lock.lock();
    }
  }

  int in_flight() const override { return in_flight_; }

  TargetCounters Counters() override {
    TargetCounters c;
    if (!engine_) return c;
    const EngineStats s = SettledStats();
    c.has = c.has_steps = c.has_step_seqs = true;
    c.steps = double(s.steps);
    c.step_seqs = double(s.step_seqs_total);
    c.step_tokens = double(s.step_tokens_total);
    c.preemptions = double(s.preemptions);
    c.prefix_queried = double(s.prefix_queried_tokens);
    c.prefix_hits = double(s.prefix_hit_tokens);
    c.generation_tokens = double(s.generation_tokens);
    c.prompt_tokens = double(s.prompt_tokens);
    return c;
  }

  double KvUsage() override { return engine_ ? engine_->Stats().kv_usage : -1; }
  int rss_pid() const override { return 0; }

  std::vector<size_t> TokensSoFar() override {
    std::vector<size_t> n;
    for (const Live& l : live_) n.push_back(l.sink->num_tokens());
    return n;
  }

  void CancelAll() override {
    for (const Live& l : live_) engine_->Cancel(l.id);
  }

 private:
  struct Live {
    uint64_t id;
    std::shared_ptr<CollectingSink> sink;
  };

  static bool Same(const EngineConfig& a, const EngineConfig& b) {
    return a.max_num_seqs == b.max_num_seqs &&
           a.max_num_batched_tokens == b.max_num_batched_tokens &&
           a.max_prefill_chunk == b.max_prefill_chunk && a.batch_policy == b.batch_policy &&
           a.tpot_target_ms == b.tpot_target_ms;
  }

  // The token ids to submit: the request's own, or its chat turn through the template.
  Result<std::vector<int32_t>> PromptOf(const BenchRequest& r) const {
    if (!r.prompt_ids.empty()) return r.prompt_ids;
    if (!template_) return Status::Error("the model has no tokenizer or chat template");
    nlohmann::ordered_json messages = nlohmann::ordered_json::array();
    if (!r.system.empty()) messages.push_back({{"role", "system"}, {"content", r.system}});
    messages.push_back({{"role", "user"}, {"content", r.user}});
    BRISK_ASSIGN_OR_RETURN(std::string text, jinja::RenderChat(*template_, messages, nullptr, true,
                                                               nlohmann::ordered_json::object()));
    return tokenizer_->Encode(text);
  }

  void Refuse(double start, const Status& s, std::function<void(RequestRecord)> done) {
    RequestRecord rec;
    rec.start_s = start;
    rec.end_s = NowSeconds();
    rec.error = s.message();
    std::lock_guard<std::mutex> lock(q_->mu);
    q_->done.push_back({std::move(rec), std::move(done), nullptr});
  }

  // Stats are published after a step's sink calls: once every request of a point has been
  // delivered, wait (bounded) until the engine shows the step that finished the last one.
  EngineStats SettledStats() {
    EngineStats s = engine_->Stats();
    for (int i = 0; i < kSettlePolls && in_flight_ == 0 && (s.running > 0 || s.waiting > 0); ++i) {
      std::this_thread::sleep_for(kSettlePollDelay);
      s = engine_->Stats();
    }
    return s;
  }

  EngineTargetOptions o_;
  TargetInfo info_;
  std::unique_ptr<Model> owned_model_;
  std::unique_ptr<Tokenizer> owned_tokenizer_;
  const Model* model_ = nullptr;
  const Tokenizer* tokenizer_ = nullptr;
  std::unique_ptr<jinja::ChatTemplate> template_;
  std::unique_ptr<Engine> engine_;  // after the model: destroyed first
  std::shared_ptr<Completions> q_ = std::make_shared<Completions>();
  std::vector<Live> live_;  // submitted and not yet delivered, in start order
  int in_flight_ = 0;
};

}  // namespace

Result<std::unique_ptr<LoadTarget>> CreateEngineTarget(const EngineTargetOptions& options) {
  auto t = std::make_unique<EngineTarget>(options);
  BRISK_RETURN_IF_ERROR(t->Load());
  return std::unique_ptr<LoadTarget>(std::move(t));
}

Result<std::unique_ptr<LoadTarget>> CreateEngineTarget(const Model& model,
                                                       const Tokenizer* tokenizer,
                                                       const EngineTargetOptions& options) {
  auto t = std::make_unique<EngineTarget>(options);
  BRISK_RETURN_IF_ERROR(t->Init(model, tokenizer));
  return std::unique_ptr<LoadTarget>(std::move(t));
}

}  // namespace brisk
