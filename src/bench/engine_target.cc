#include "bench/engine_target.h"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "bench/http_client.h"
#include "formats/file_type.h"
#include "model/model.h"
#include "model/model_tokenizer.h"
#include "model/synth.h"
#include "runtime/cpu_features.h"
#include "tokenizer/jinja/chat_template.h"

namespace brisk {
namespace {

double MsSince(double t0) { return (BenchNowS() - t0) * 1e3; }

// Finished requests travel from the engine thread to the driver through this queue.
struct Completions {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::pair<RequestRecord, std::function<void(RequestRecord)>>> done;
};

// Stamps tokens on the engine thread and hands the record over when the request ends.
class RecordSink : public RequestSink {
 public:
  RecordSink(std::shared_ptr<Completions> q, std::function<void(RequestRecord)> done,
             double start_s, int max_tokens)
      : q_(std::move(q)), done_(std::move(done)) {
    rec_.start_s = start_s;
    rec_.token_s.reserve(size_t(max_tokens));
  }
  void OnToken(const TokenEvent&) override { rec_.token_s.push_back(BenchNowS()); }
  void OnFinish(const FinishInfo& f) override {
    rec_.end_s = BenchNowS();
    rec_.ok = f.reason == FinishReason::kStop || f.reason == FinishReason::kLength;
    if (!rec_.ok)
      rec_.error = std::string("finished with ") + FinishReasonName(f.reason) +
                   (f.message.empty() ? "" : ": " + f.message);
    rec_.prompt_tokens = f.usage.prompt_tokens;
    rec_.output_tokens = f.usage.completion_tokens;
    std::lock_guard<std::mutex> lock(q_->mu);
    q_->done.emplace_back(std::move(rec_), std::move(done_));
    q_->cv.notify_all();
  }

 private:
  std::shared_ptr<Completions> q_;
  std::function<void(RequestRecord)> done_;
  RequestRecord rec_;
};

class EngineTarget : public LoadTarget {
 public:
  explicit EngineTarget(const EngineTargetOptions& o) : o_(o) {}

  Status Init() {
    double t0 = BenchNowS();
    BRISK_ASSIGN_OR_RETURN(model_, Model::Load(o_.model));
    info_.model_load_ms = MsSince(t0);
    t0 = BenchNowS();
    auto tok = TokenizerForModel(*model_);
    if (!tok.ok())
      return tok.status().WithContext("brisk bench sends chat prompts and needs the tokenizer");
    tokenizer_ = std::make_unique<Tokenizer>(std::move(tok).value());
    info_.tokenizer_load_ms = MsSince(t0);
    if (model_->chat_template().empty())
      return Status::Error("the model has no chat template; brisk bench sends chat turns");
    auto tmpl = jinja::ChatTemplate::Parse(model_->chat_template());
    if (!tmpl.ok()) return tmpl.status().WithContext("chat template");
    template_ = std::make_unique<jinja::ChatTemplate>(std::move(tmpl).value());
    info_.mode = "in-process";
    info_.model = o_.model;
    if (model_->gguf())
      if (auto ft = model_->gguf()->GetUInt("general.file_type"); ft.ok())
        info_.file_type = FileTypeName(uint32_t(*ft));
    info_.synthetic = IsSynthetic(*model_);
    info_.isa = std::string(IsaName(ActiveIsa()));
    info_.threads =
        o_.threads > 0 ? o_.threads : int(std::max(1u, std::thread::hardware_concurrency()));
    return Status::Ok();
  }

  TargetInfo Info() const override {
    TargetInfo i = info_;
    if (engine_) {
      const EngineConfig& c = engine_->config();
      char buf[256];
      std::snprintf(buf, sizeof buf,
                    "max_model_len %d, KV cache %.0f MiB %s, prefix caching %s, threads %d",
                    c.max_model_len, double(c.kv_cache_bytes) / double(1 << 20),
                    KvTypeName(c.kv_type), c.prefix_caching ? "on" : "off", i.threads);
      i.engine_settings = buf;
    }
    return i;
  }

  Status Configure(const TargetLimits& l) override {
    EngineConfig c;
    c.threads = o_.threads;
    c.max_model_len = o_.max_model_len;
    c.kv_cache_bytes = o_.kv_cache_bytes;
    c.kv_type = o_.kv_type;
    c.prefix_caching = o_.prefix_caching;
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
    BRISK_ASSIGN_OR_RETURN(engine_, Engine::Create(*model_, tokenizer_.get(), c));
    return Status::Ok();
  }

  void Start(const BenchRequest& r, std::function<void(RequestRecord)> done) override {
    BRISK_CHECK(engine_ != nullptr);
    const double start = BenchNowS();
    ++in_flight_;
    auto fail = [&](const Status& s) {
      RequestRecord rec;
      rec.start_s = start;
      rec.end_s = BenchNowS();
      rec.error = s.message();
      std::lock_guard<std::mutex> lock(q_->mu);
      q_->done.emplace_back(std::move(rec), std::move(done));
    };
    nlohmann::ordered_json messages = nlohmann::ordered_json::array();
    if (!r.system.empty()) messages.push_back({{"role", "system"}, {"content", r.system}});
    messages.push_back({{"role", "user"}, {"content", r.user}});
    auto text =
        jinja::RenderChat(*template_, messages, nullptr, true, nlohmann::ordered_json::object());
    if (!text.ok()) return fail(text.status());
    GenerationRequest g;
    g.prompt = tokenizer_->Encode(*text);
    g.max_tokens = r.max_tokens;
    g.ignore_eos = r.ignore_eos;
    g.sampling.temperature = r.temperature;
    g.sampling.top_p = r.top_p;
    g.sampling.seed = r.seed;
    g.timeout_s = o_.request_timeout_s;
    g.sink = std::make_shared<RecordSink>(q_, std::move(done), start, r.max_tokens);
    auto sink = g.sink;
    auto id = engine_->Submit(std::move(g));
    if (!id.ok()) {
      // Submit refused it and will never call the sink: finish the record here.
      FinishInfo f;
      f.reason = FinishReason::kError;
      f.message = id.message();
      sink->OnFinish(f);
    }
  }

  void Poll(double seconds) override {
    std::unique_lock<std::mutex> lock(q_->mu);
    if (in_flight_ == 0 && q_->done.empty()) return;
    q_->cv.wait_for(lock, std::chrono::duration<double>(seconds),
                    [&] { return !q_->done.empty(); });
    while (!q_->done.empty()) {
      auto [rec, done] = std::move(q_->done.front());
      q_->done.pop_front();
      --in_flight_;
      lock.unlock();
      done(std::move(rec));  // may Start() the next request
      lock.lock();
    }
  }

  int in_flight() const override { return in_flight_; }

  TargetCounters Counters() override {
    TargetCounters c;
    if (!engine_) return c;
    const EngineStats s = engine_->Stats();
    c.has = c.has_steps = c.has_step_seqs = true;
    c.steps = double(s.steps);
    c.step_seqs = double(s.step_seqs_total);
    c.step_tokens = double(s.step_tokens_total);
    c.preemptions = double(s.preemptions);
    c.prefix_queried = double(s.prefix_queried_tokens);
    c.prefix_hits = double(s.prefix_hit_tokens);
    c.generation_tokens = double(s.generation_tokens);
    return c;
  }

  double KvUsage() override { return engine_ ? engine_->Stats().kv_usage : -1; }
  int rss_pid() const override { return 0; }

 private:
  static bool Same(const EngineConfig& a, const EngineConfig& b) {
    return a.max_num_seqs == b.max_num_seqs &&
           a.max_num_batched_tokens == b.max_num_batched_tokens &&
           a.max_prefill_chunk == b.max_prefill_chunk && a.batch_policy == b.batch_policy &&
           a.tpot_target_ms == b.tpot_target_ms;
  }

  EngineTargetOptions o_;
  TargetInfo info_;
  std::unique_ptr<Model> model_;
  std::unique_ptr<Tokenizer> tokenizer_;
  std::unique_ptr<jinja::ChatTemplate> template_;
  std::unique_ptr<Engine> engine_;  // after the model: destroyed first
  std::shared_ptr<Completions> q_ = std::make_shared<Completions>();
  int in_flight_ = 0;
};

}  // namespace

Result<std::unique_ptr<LoadTarget>> CreateEngineTarget(const EngineTargetOptions& options) {
  auto t = std::make_unique<EngineTarget>(options);
  BRISK_RETURN_IF_ERROR(t->Init());
  return std::unique_ptr<LoadTarget>(std::move(t));
}

}  // namespace brisk
