// `brisk bench engine` as a preset over the one load driver (load_driver.h) and the in-process
// target (engine_target.h): it builds token-id prompts of exact lengths, runs each scenario as
// one or more driver points and turns the driver's statistics into EngineBenchReport.
#include "bench/engine_bench.h"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <set>

#include "bench/engine_target.h"
#include "bench/load_driver.h"
#include "model/model_tokenizer.h"
#include "runtime/cpu_features.h"
#include "util/splitmix64.h"

namespace brisk {
namespace {

// Ids are drawn below this: the top of Qwen's vocabulary holds the special tokens.
constexpr int kMaxPromptId = 150000;
// A wait this much longer than the engine deadline means the engine itself is stuck.
constexpr double kWaitSlackS = 60;
// Tokens each stream must have produced before the long prompt arrives ("already decoding").
constexpr size_t kStreamTokensBeforeLong = 4;
constexpr size_t kMaxFailureMessages = 5;
// The long-prompt point acts on token arrivals: it looks at the streams this often.
constexpr double kLongPromptPollS = 0.001;

// Distinct random prompts, optionally after one shared prefix.
class PromptMaker {
 public:
  PromptMaker(const EngineBenchOptions& o, int n_vocab)
      : o_(o), id_limit_(std::min(n_vocab, kMaxPromptId)) {
    uint64_t s = o.seed ^ 0x5a5a5a5a5a5a5a5aull;
    shared_prefix_.resize(size_t(o.shared_prefix));
    for (int32_t& t : shared_prefix_) t = int32_t(SplitMix64(s) % uint64_t(id_limit_));
  }

  // The shared prefix (when `with_prefix`), then n random ids. Every call draws from a new
  // stream, so no two prompts share more than the prefix.
  BenchRequest Next(int n, bool with_prefix, int max_tokens) {
    uint64_t s = o_.seed + 0x1000003ull * ++counter_;
    BenchRequest r;
    if (with_prefix) r.prompt_ids = shared_prefix_;
    for (int i = 0; i < n; ++i)
      r.prompt_ids.push_back(int32_t(SplitMix64(s) % uint64_t(id_limit_)));
    r.max_tokens = max_tokens;
    r.ignore_eos = true;  // fixed output lengths
    return r;
  }
  BenchRequest NextMeasured(int max_tokens) { return Next(o_.prompt_len, true, max_tokens); }

 private:
  const EngineBenchOptions& o_;
  const int id_limit_;
  std::vector<int32_t> shared_prefix_;
  uint64_t counter_ = 0;
};

// Counts failures and keeps their distinct messages, the first few.
class FailureList {
 public:
  explicit FailureList(std::vector<std::string>* out) : out_(out) {}
  void Add(const std::string& why) {
    ++count_;
    if (seen_.size() < kMaxFailureMessages && seen_.insert(why).second) out_->push_back(why);
  }
  int count() const { return count_; }

 private:
  std::vector<std::string>* out_;
  std::set<std::string> seen_;
  int count_ = 0;
};

// Sends the long prompt of the loaded phase once every stream decodes, and cancels the streams
// once it has its first token and every stream one more (so the gap spanning its last prefill
// chunk is complete).
class LongPromptHook {
 public:
  LongPromptHook(BenchRequest long_request, double wait_s, FailureList* fail)
      : long_(std::move(long_request)), wait_s_(wait_s), fail_(fail) {}

  void operator()(PointView& v) {
    const bool late = v.elapsed_s - phase_start_s_ > wait_s_;
    if (phase_ == Phase::kStreamsStarting) {
      const std::vector<size_t> n = v.target.TokensSoFar();
      const bool decoding =
          std::all_of(n.begin(), n.end(), [](size_t k) { return k >= kStreamTokensBeforeLong; });
      if (!decoding && !late) return;
      if (!decoding)
        fail_->Add("stream produced no tokens within " + std::to_string(int(wait_s_)) + " s");
      long_index_ = v.started;
      v.start_extra(long_);
      Enter(Phase::kLongPrefilling, v);
    } else if (phase_ == Phase::kLongPrefilling) {
      for (const RequestRecord& r : v.finished)
        if (r.index == long_index_) {
          snapshot_ = v.target.TokensSoFar();
          Enter(r.ok ? Phase::kLastGaps : Phase::kDone, v);
          if (!r.ok) v.target.CancelAll();
        }
    } else if (phase_ == Phase::kLastGaps) {
      const std::vector<size_t> n = v.target.TokensSoFar();
      bool all_moved = n.size() == snapshot_.size();
      for (size_t i = 0; all_moved && i < n.size(); ++i) all_moved = n[i] > snapshot_[i];
      if (!all_moved && !late) return;
      if (!all_moved && n.size() == snapshot_.size())
        fail_->Add("stream stalled after the long prefill");
      v.target.CancelAll();
      Enter(Phase::kDone, v);
    }
  }
  int long_index() const { return long_index_; }

 private:
  enum class Phase { kStreamsStarting, kLongPrefilling, kLastGaps, kDone };
  void Enter(Phase p, const PointView& v) {
    phase_ = p;
    phase_start_s_ = v.elapsed_s;
  }

  BenchRequest long_;
  double wait_s_;
  FailureList* fail_;
  Phase phase_ = Phase::kStreamsStarting;
  double phase_start_s_ = 0;
  int long_index_ = -1;
  std::vector<size_t> snapshot_;
};

// The scenarios of one run, each as driver points on one target.
class EngineBench {
 public:
  EngineBench(LoadTarget& target, const EngineBenchOptions& o, int n_vocab)
      : target_(target), o_(o), prompts_(o, n_vocab) {}

  // n requests from `make`, C at a time; what each measured.
  std::vector<RequestRecord> Run(int C, int n, const std::function<BenchRequest()>& make,
                                 BenchPoint* point = nullptr, PointHook hook = {},
                                 double poll_s = 0.05) {
    PointPlan plan;
    plan.label = "c=" + std::to_string(C);
    plan.concurrency = C;
    plan.num_prompts = n;
    plan.make_request = [&make](int) { return make(); };
    plan.unique_prompts = false;  // random ids are distinct already
    plan.give_up_s = o_.request_timeout_s + kWaitSlackS;
    plan.hook = std::move(hook);
    plan.poll_s = poll_s;
    std::vector<RequestRecord> records;
    BenchPoint p = RunPoint(target_, plan, nullptr, &records);
    if (point) *point = std::move(p);
    std::sort(records.begin(), records.end(),
              [](const RequestRecord& a, const RequestRecord& b) { return a.index < b.index; });
    return records;
  }

  int Warmup() {
    // No shared prefix: the prefix-cache probe that follows must start cold.
    auto make = [&] {
      return prompts_.Next(o_.shared_prefix + o_.prompt_len, false, std::min(o_.output_len, 16));
    };
    int failures = 0;
    for (const RequestRecord& r : Run(1, o_.warmup, make)) {
      if (r.ok) continue;
      ++failures;
      std::fprintf(stderr, "warmup request failed: %s\n", r.error.c_str());
    }
    return failures;
  }

  SharedPrefixProbe ProbeSharedPrefix() {
    SharedPrefixProbe p;
    p.prefix_tokens = o_.shared_prefix;
    const std::vector<RequestRecord> r =
        Run(1, 2, [&] { return prompts_.NextMeasured(o_.output_len); });
    for (const RequestRecord& x : r)
      if (!x.ok || x.token_s.empty()) {
        ++p.failures;
        std::fprintf(stderr, "shared-prefix probe request failed: %s\n", x.error.c_str());
      }
    auto ttft = [](const RequestRecord& x) {
      return x.token_s.empty() ? 0.0 : 1e3 * (x.token_s[0] - x.start_s);
    };
    p.first_ttft_ms = ttft(r[0]);
    p.second_ttft_ms = ttft(r[1]);
    p.first_cached_tokens = std::max(r[0].cached_tokens, 0);
    p.second_cached_tokens = std::max(r[1].cached_tokens, 0);
    return p;
  }

  EngineBenchRun ClosedLoop(int C, int n) {
    BenchPoint p;
    const std::vector<RequestRecord> recs = Run(
        C, n, [&] { return prompts_.NextMeasured(o_.output_len); }, &p);
    EngineBenchRun run;
    static_cast<BenchPoint&>(run) = p;
    run.concurrency = C;
    for (const RequestRecord& r : recs)
      if (r.ok) run.cached_tokens += std::max(r.cached_tokens, 0);
    const ServerSide& s = p.server;
    run.engine.steps = s.steps;
    run.engine.prompt_tokens = s.prompt_tokens;
    run.engine.generation_tokens = s.generation_tokens;
    run.engine.prefix_queried_tokens = s.prefix_queried_tokens;
    run.engine.prefix_hit_tokens = s.prefix_hit_tokens;
    run.engine.preemptions = s.preemptions;
    if (s.steps > 0)
      run.engine.tokens_per_step = double(s.prompt_tokens + s.generation_tokens) / double(s.steps);
    return run;
  }

  LongPromptRun LongPrompt(int C) {
    LongPromptRun run;
    run.concurrency = C;
    run.long_prompt_tokens = o_.long_prompt;
    FailureList fail(&run.failure_messages);
    run.unloaded_tpot_ms = UnloadedGaps(C, fail);
    LoadedGaps(C, fail, &run);
    run.failures = fail.count();
    return run;
  }

 private:
  // C streams of output_len tokens; gaps count once every stream is decoding.
  LatencySummary UnloadedGaps(int C, FailureList& fail) {
    const std::vector<RequestRecord> recs =
        Run(C, C, [&] { return prompts_.NextMeasured(o_.output_len); });
    double all_decoding = 0;
    for (const RequestRecord& r : recs) {
      if (!r.ok || r.token_s.empty()) {
        fail.Add("unloaded stream: " + r.error);
        continue;
      }
      all_decoding = std::max(all_decoding, r.token_s.front());
    }
    std::vector<double> gaps;
    for (const RequestRecord& r : recs)
      for (size_t k = 1; k < r.token_s.size(); ++k)
        if (r.ok && r.token_s[k - 1] >= all_decoding)
          gaps.push_back(1e3 * (r.token_s[k] - r.token_s[k - 1]));
    return Summarize(std::move(gaps));
  }

  // C streams long enough to outlast the long prefill, cancelled once it is over; the gaps that
  // overlap [long submit, long first token] are every step the prefill slowed.
  void LoadedGaps(int C, FailureList& fail, LongPromptRun* run) {
    const int stream_tokens = target_.Info().max_model_len - o_.shared_prefix - o_.prompt_len - 1;
    LongPromptHook hook(prompts_.Next(o_.long_prompt, false, 1), o_.request_timeout_s + kWaitSlackS,
                        &fail);
    std::vector<RequestRecord> recs = Run(
        C, C, [&] { return prompts_.NextMeasured(stream_tokens); }, nullptr,
        [&hook](PointView& v) { hook(v); }, kLongPromptPollS);
    const auto long_it = std::find_if(recs.begin(), recs.end(), [&](const RequestRecord& r) {
      return r.index == hook.long_index() && hook.long_index() >= 0;
    });
    double window_start = 0, window_end = 0;
    if (long_it == recs.end() || !long_it->ok || long_it->token_s.empty()) {
      fail.Add("long request: " + (long_it == recs.end() ? "not sent" : long_it->error));
    } else {
      window_start = long_it->start_s;
      window_end = long_it->token_s.front();
      run->long_ttft_ms = 1e3 * (window_end - window_start);
    }
    std::vector<double> gaps;
    for (const RequestRecord& r : recs) {
      if (r.index == hook.long_index()) continue;
      if (!r.ok && r.finish_reason != "cancelled") {
        fail.Add("loaded stream: " + r.error);
        continue;
      }
      if (window_end == 0) continue;
      for (size_t k = 1; k < r.token_s.size(); ++k)
        if (r.token_s[k] > window_start && r.token_s[k - 1] < window_end)
          gaps.push_back(1e3 * (r.token_s[k] - r.token_s[k - 1]));
    }
    run->loaded_tpot_ms = Summarize(std::move(gaps));
  }

  LoadTarget& target_;
  const EngineBenchOptions& o_;
  PromptMaker prompts_;
};

Status Validate(const EngineBenchOptions& o) {
  if (o.concurrency.empty()) return Status::Error("no concurrency given");
  for (int c : o.concurrency)
    if (c < 1 || c > 1024) return Status::Error("concurrency must be in 1..1024");
  if (o.num_prompts < 0) return Status::Error("num_prompts must be >= 0");
  if (o.prompt_len < 1) return Status::Error("prompt_len must be >= 1");
  if (o.output_len < 1) return Status::Error("output_len must be >= 1");
  if (o.shared_prefix < 0 || o.long_prompt < 0 || o.warmup < 0)
    return Status::Error("shared_prefix, long_prompt and warmup must be >= 0");
  if (!(o.request_timeout_s > 0)) return Status::Error("request_timeout_s must be > 0");
  return Status::Ok();
}

// The in-process target with the run's engine settings in force.
Result<std::unique_ptr<LoadTarget>> MakeTarget(const Model& model, const Tokenizer* tokenizer,
                                               const EngineBenchOptions& o) {
  EngineTargetOptions t;
  t.model = o.model;
  t.engine = o.engine;
  t.request_timeout_s = o.request_timeout_s;
  // The engine's default length (8192 at most) unless a request needs more.
  const int64_t need =
      std::max<int64_t>(int64_t(o.shared_prefix) + o.prompt_len + o.output_len, o.long_prompt + 1) +
      1;
  if (t.engine.max_model_len == 0 && need > EngineLimits::kDefaultMaxModelLenCap)
    t.engine.max_model_len = int(std::min<int64_t>(need, INT32_MAX));
  BRISK_ASSIGN_OR_RETURN(std::unique_ptr<LoadTarget> target,
                         CreateEngineTarget(model, tokenizer, t));
  TargetLimits l;
  l.max_num_seqs = o.max_num_seqs;
  l.max_num_batched_tokens = o.max_num_batched_tokens;
  l.max_prefill_chunk = o.max_prefill_chunk;
  l.batch_policy = BatchPolicyName(o.batch_policy);
  l.tpot_target_ms = o.tpot_target_ms;
  BRISK_RETURN_IF_ERROR(target->Configure(l));
  return target;
}

// The report header: machine, model and the engine as it was created.
EngineBenchReport Describe(const TargetInfo& info, EngineBenchOptions o) {
  EngineBenchReport rep;
  rep.cpu = DescribeCpu();
  rep.isa = info.isa;
  rep.brisk_version = BRISK_VERSION;
  rep.model = o.model;
  rep.file_type = info.file_type;
  rep.synthetic = info.synthetic;
  rep.tokenizer = info.tokenizer;
  rep.threads = info.threads;
  rep.max_model_len = info.max_model_len;
  rep.kv_block_size = info.kv_block_size;
  rep.kv_blocks = info.kv_blocks;
  rep.kv_cache_mib = info.kv_cache_mib;
  o.engine.kv_cache_bytes = size_t(info.kv_cache_mib * double(1 << 20));
  rep.options = o;
  return rep;
}

}  // namespace

Result<EngineBenchReport> RunEngineBench(const Model& model, const Tokenizer* tokenizer,
                                         const EngineBenchOptions& options) {
  BRISK_RETURN_IF_ERROR(Validate(options));
  EngineBenchOptions o = options;
  const int max_c = *std::max_element(o.concurrency.begin(), o.concurrency.end());
  if (o.max_num_seqs == 0) o.max_num_seqs = max_c + (o.long_prompt > 0 ? 1 : 0);
  BRISK_ASSIGN_OR_RETURN(std::unique_ptr<LoadTarget> target, MakeTarget(model, tokenizer, o));
  EngineBenchReport rep = Describe(target->Info(), o);

  auto say = [&](const char* fmt, auto... args) {
    if (!o.progress) return;
    std::fprintf(stderr, fmt, args...);
    std::fflush(stderr);
  };
  EngineBench bench(*target, o, model.config().n_vocab);
  say("warmup: %d requests\n", o.warmup);
  rep.warmup_failures = bench.Warmup();
  if (o.shared_prefix > 0) {
    say("shared prefix: %d tokens, two requests one after the other\n", o.shared_prefix);
    rep.has_shared_prefix_probe = true;
    rep.shared = bench.ProbeSharedPrefix();
  }
  for (int c : o.concurrency) {
    const int n = o.num_prompts > 0 ? o.num_prompts : std::max(4 * c, 8);
    say("concurrency %d: %d requests of %d + %d prompt tokens, %d output tokens\n", c, n,
        o.shared_prefix, o.prompt_len, o.output_len);
    rep.runs.push_back(bench.ClosedLoop(c, n));
  }
  if (o.long_prompt > 0)
    for (int c : o.concurrency) {
      say("long prompt: %d streams, then a %d-token prompt among them\n", c, o.long_prompt);
      rep.long_runs.push_back(bench.LongPrompt(c));
    }
  return rep;
}

Result<EngineBenchReport> RunEngineBench(const EngineBenchOptions& options) {
  BRISK_ASSIGN_OR_RETURN(std::unique_ptr<Model> model, Model::Load(options.model));
  std::unique_ptr<Tokenizer> tokenizer;
  if (auto t = TokenizerForModel(*model); t.ok())
    tokenizer = std::make_unique<Tokenizer>(std::move(t).value());
  else  // The engine runs on ids alone; only per-token detokenisation is then not measured.
    std::fprintf(stderr, "note: no tokenizer (%s); token events carry no text\n",
                 t.message().c_str());
  return RunEngineBench(*model, tokenizer.get(), options);
}

}  // namespace brisk
