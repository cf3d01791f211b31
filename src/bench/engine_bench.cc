#include "bench/engine_bench.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "engine/engine.h"
#include "formats/file_type.h"
#include "model/model_tokenizer.h"
#include "model/synth.h"
#include "runtime/cpu_features.h"
#include "util/splitmix64.h"
#include "util/clock.h"

namespace brisk {
namespace {

// Ids are drawn below this: the top of Qwen's vocabulary holds the special tokens.
constexpr int kMaxPromptId = 150000;
// A wait this much longer than the engine deadline means the engine itself is stuck.
constexpr double kWaitSlackS = 60;
// Tokens each stream must have produced before the long prompt arrives ("already decoding").
constexpr size_t kStreamTokensBeforeLong = 4;
constexpr size_t kMaxFailureMessages = 5;

// Collects one request's events. Called on the engine thread, so it only stamps the time, stores
// and wakes the waiting client.
class BenchSink : public RequestSink {
 public:
  explicit BenchSink(int expected_tokens) {
    token_s_.reserve(size_t(std::max(expected_tokens, 1)));
  }

  void OnToken(const TokenEvent&) override {
    const double t = NowSeconds();
    std::lock_guard<std::mutex> lock(mu_);
    token_s_.push_back(t);
    cv_.notify_all();
  }
  void OnFinish(const FinishInfo& f) override {
    const double t = NowSeconds();
    std::lock_guard<std::mutex> lock(mu_);
    info_ = f;
    finish_s_ = t;
    done_ = true;
    cv_.notify_all();
  }

  bool WaitDone(double timeout_s) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::duration<double>(timeout_s), [&] { return done_; });
  }
  // Until the request has at least n tokens (or finished); false on timeout.
  bool WaitTokens(size_t n, double timeout_s) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::duration<double>(timeout_s),
                        [&] { return token_s_.size() >= n || done_; });
  }
  size_t num_tokens() {
    std::lock_guard<std::mutex> lock(mu_);
    return token_s_.size();
  }
  bool done() {
    std::lock_guard<std::mutex> lock(mu_);
    return done_;
  }
  std::vector<double> token_times() {
    std::lock_guard<std::mutex> lock(mu_);
    return token_s_;
  }
  FinishInfo info() {
    std::lock_guard<std::mutex> lock(mu_);
    return info_;
  }
  double finish_s() {
    std::lock_guard<std::mutex> lock(mu_);
    return finish_s_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<double> token_s_;
  FinishInfo info_;
  double finish_s_ = 0;
  bool done_ = false;
};

// What a client keeps of one request.
struct RequestRecord {
  bool ok = false;
  std::string error;  // why it failed
  double submit_s = 0, finish_s = 0;
  std::vector<double> token_s;
  int prompt_tokens = 0, cached_tokens = 0;
};

// A submitted request still in flight.
struct InFlight {
  std::shared_ptr<BenchSink> sink;
  uint64_t id = 0;
  double submit_s = 0;
  Status submit_status;
};

// Expected finishes: the request ran to max_tokens (or a stop it was given).
bool Succeeded(FinishReason r) { return r == FinishReason::kLength || r == FinishReason::kStop; }

class Bench {
 public:
  Bench(Engine& engine, const EngineBenchOptions& o, int n_vocab)
      : engine_(engine), o_(o), id_limit_(std::min(n_vocab, kMaxPromptId)) {
    uint64_t s = o.seed ^ 0x5a5a5a5a5a5a5a5aull;
    shared_prefix_.resize(size_t(o.shared_prefix));
    for (int32_t& t : shared_prefix_) t = int32_t(SplitMix64(s) % uint64_t(id_limit_));
  }

  // The next distinct prompt: the shared prefix (when `with_prefix`), then n random ids. Every
  // call draws from a new stream, so no two prompts share more than the prefix.
  std::vector<int32_t> NextPrompt(int n, bool with_prefix) {
    uint64_t s = o_.seed + 0x1000003ull * ++prompt_counter_;
    std::vector<int32_t> p;
    if (with_prefix) p = shared_prefix_;
    for (int i = 0; i < n; ++i) p.push_back(int32_t(SplitMix64(s) % uint64_t(id_limit_)));
    return p;
  }
  std::vector<int32_t> NextBenchPrompt() { return NextPrompt(o_.prompt_len, true); }

  InFlight Submit(std::vector<int32_t> prompt, int max_tokens) {
    GenerationRequest r;
    r.prompt = std::move(prompt);
    r.sampling.temperature = 0;
    r.max_tokens = max_tokens;
    r.ignore_eos = true;  // fixed output lengths
    r.timeout_s = o_.request_timeout_s;
    InFlight f;
    f.sink = std::make_shared<BenchSink>(max_tokens);
    r.sink = f.sink;
    // Stamped before Submit: the engine may emit events before Submit returns.
    f.submit_s = NowSeconds();
    auto id = engine_.Submit(std::move(r));
    if (id.ok())
      f.id = *id;
    else
      f.submit_status = id.status();
    return f;
  }

  // Waits for the finish (or gives up, cancelling the request) and keeps what was measured.
  RequestRecord Collect(InFlight& f, bool cancelled_is_ok = false) {
    RequestRecord rec;
    rec.submit_s = f.submit_s;
    if (!f.submit_status.ok()) {
      rec.error = "submit: " + f.submit_status.message();
      return rec;
    }
    if (!f.sink->WaitDone(o_.request_timeout_s + kWaitSlackS)) {
      engine_.Cancel(f.id);
      rec.error =
          "no finish within " + std::to_string(int(o_.request_timeout_s + kWaitSlackS)) + " s";
      rec.token_s = f.sink->token_times();
      return rec;
    }
    const FinishInfo info = f.sink->info();
    rec.token_s = f.sink->token_times();
    rec.finish_s = f.sink->finish_s();
    rec.prompt_tokens = info.usage.prompt_tokens;
    rec.cached_tokens = info.usage.cached_tokens;
    rec.ok = Succeeded(info.reason) || (cancelled_is_ok && info.reason == FinishReason::kCancelled);
    if (!rec.ok) {
      rec.error = FinishReasonName(info.reason);
      if (!info.message.empty()) rec.error += ": " + info.message;
    }
    return rec;
  }

  RequestRecord RunOne(std::vector<int32_t> prompt, int max_tokens) {
    InFlight f = Submit(std::move(prompt), max_tokens);
    return Collect(f);
  }

  // Waits until the engine has published the step that emitted `tokens` more tokens than
  // `before` (stats are published after a step's sink calls) and nothing runs; bounded.
  EngineCounters CountersSince(const EngineStats& before, int64_t tokens) {
    EngineStats s = engine_.Stats();
    for (int i = 0; i < 200; ++i) {
      if (s.generation_tokens - before.generation_tokens >= tokens && s.running == 0 &&
          s.waiting == 0)
        break;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      s = engine_.Stats();
    }
    EngineCounters c;
    c.steps = s.steps - before.steps;
    c.prompt_tokens = s.prompt_tokens - before.prompt_tokens;
    c.generation_tokens = s.generation_tokens - before.generation_tokens;
    c.prefix_queried_tokens = s.prefix_queried_tokens - before.prefix_queried_tokens;
    c.prefix_hit_tokens = s.prefix_hit_tokens - before.prefix_hit_tokens;
    c.preemptions = s.preemptions - before.preemptions;
    if (c.steps > 0) c.tokens_per_step = double(c.prompt_tokens + c.generation_tokens) / c.steps;
    return c;
  }

  int Warmup() {
    int failures = 0;
    for (int i = 0; i < o_.warmup; ++i) {
      // No shared prefix: the prefix-cache probe that follows must start cold.
      RequestRecord r =
          RunOne(NextPrompt(o_.shared_prefix + o_.prompt_len, false), std::min(o_.output_len, 16));
      if (!r.ok) {
        ++failures;
        std::fprintf(stderr, "warmup request failed: %s\n", r.error.c_str());
      }
    }
    return failures;
  }

  SharedPrefixProbe ProbeSharedPrefix() {
    SharedPrefixProbe p;
    p.prefix_tokens = o_.shared_prefix;
    RequestRecord a = RunOne(NextBenchPrompt(), o_.output_len);
    RequestRecord b = RunOne(NextBenchPrompt(), o_.output_len);
    for (const RequestRecord* r : {&a, &b}) {
      if (!r->ok || r->token_s.empty()) {
        ++p.failures;
        std::fprintf(stderr, "shared-prefix probe request failed: %s\n", r->error.c_str());
      }
    }
    if (!a.token_s.empty()) p.first_ttft_ms = 1e3 * (a.token_s[0] - a.submit_s);
    if (!b.token_s.empty()) p.second_ttft_ms = 1e3 * (b.token_s[0] - b.submit_s);
    p.first_cached_tokens = a.cached_tokens;
    p.second_cached_tokens = b.cached_tokens;
    return p;
  }

  EngineBenchRun ClosedLoop(int C, int n) {
    EngineBenchRun run;
    run.concurrency = C;
    run.requests = n;
    std::vector<std::vector<int32_t>> prompts(static_cast<size_t>(n));
    for (auto& p : prompts) p = NextBenchPrompt();
    std::vector<RequestRecord> recs(static_cast<size_t>(n));
    std::atomic<int> next{0};
    const EngineStats before = engine_.Stats();
    const double t0 = NowSeconds();
    {
      std::vector<std::thread> clients;
      for (int c = 0; c < C; ++c)
        clients.emplace_back([&] {
          for (int i; (i = next.fetch_add(1)) < n;)
            recs[size_t(i)] = RunOne(std::move(prompts[size_t(i)]), o_.output_len);
        });
      for (std::thread& t : clients) t.join();
    }
    const double t_joined = NowSeconds();
    double t_end = t0;
    int64_t all_tokens = 0;
    std::vector<double> ttft, tpot, itl, e2e;
    std::set<std::string> messages;
    for (const RequestRecord& r : recs) {
      all_tokens += int64_t(r.token_s.size());
      t_end = std::max(t_end, r.finish_s > 0 ? r.finish_s : t_joined);  // unfinished: gave up
      if (!r.ok) {
        ++run.failures;
        if (messages.size() < kMaxFailureMessages && messages.insert(r.error).second)
          run.failure_messages.push_back(r.error);
        continue;
      }
      run.prompt_tokens += r.prompt_tokens;
      run.cached_tokens += r.cached_tokens;
      run.generated_tokens += int64_t(r.token_s.size());
      e2e.push_back(1e3 * (r.finish_s - r.submit_s));
      if (r.token_s.empty()) continue;
      ttft.push_back(1e3 * (r.token_s.front() - r.submit_s));
      if (r.token_s.size() >= 2)
        tpot.push_back(1e3 * (r.token_s.back() - r.token_s.front()) / double(r.token_s.size() - 1));
      for (size_t k = 1; k < r.token_s.size(); ++k)
        itl.push_back(1e3 * (r.token_s[k] - r.token_s[k - 1]));
    }
    run.wall_s = t_end - t0;
    if (run.wall_s > 0) {
      run.output_tok_s = double(run.generated_tokens) / run.wall_s;
      run.total_tok_s = double(run.prompt_tokens + run.generated_tokens) / run.wall_s;
    }
    run.ttft_ms = Summarize(std::move(ttft));
    run.tpot_ms = Summarize(std::move(tpot));
    run.itl_ms = Summarize(std::move(itl));
    run.e2e_ms = Summarize(std::move(e2e));
    run.engine = CountersSince(before, all_tokens);
    return run;
  }

  LongPromptRun LongPrompt(int C) {
    LongPromptRun run;
    run.concurrency = C;
    run.long_prompt_tokens = o_.long_prompt;
    std::set<std::string> messages;
    auto fail = [&](const std::string& why) {
      ++run.failures;
      if (messages.size() < kMaxFailureMessages && messages.insert(why).second)
        run.failure_messages.push_back(why);
    };
    const double wait_s = o_.request_timeout_s + kWaitSlackS;

    // Unloaded: C streams of output_len tokens; gaps count once every stream is decoding.
    {
      std::vector<InFlight> streams;
      for (int c = 0; c < C; ++c) streams.push_back(Submit(NextBenchPrompt(), o_.output_len));
      std::vector<RequestRecord> recs;
      for (InFlight& f : streams) recs.push_back(Collect(f));
      double all_decoding = 0;
      for (const RequestRecord& r : recs) {
        if (!r.ok || r.token_s.empty()) {
          fail("unloaded stream: " + r.error);
          continue;
        }
        all_decoding = std::max(all_decoding, r.token_s.front());
      }
      std::vector<double> gaps;
      for (const RequestRecord& r : recs)
        for (size_t k = 1; k < r.token_s.size(); ++k)
          if (r.ok && r.token_s[k - 1] >= all_decoding)
            gaps.push_back(1e3 * (r.token_s[k] - r.token_s[k - 1]));
      run.unloaded_tpot_ms = Summarize(std::move(gaps));
    }

    // Loaded: C streams long enough to outlast the long prefill, cancelled once it is over.
    const int stream_tokens = engine_.config().max_model_len - o_.shared_prefix - o_.prompt_len - 1;
    std::vector<InFlight> streams;
    for (int c = 0; c < C; ++c) streams.push_back(Submit(NextBenchPrompt(), stream_tokens));
    for (InFlight& f : streams)
      if (f.submit_status.ok() && !f.sink->WaitTokens(kStreamTokensBeforeLong, wait_s))
        fail("stream produced no tokens within " + std::to_string(int(wait_s)) + " s");
    InFlight lf = Submit(NextPrompt(o_.long_prompt, false), 1);
    RequestRecord lr = Collect(lf);
    double window_end = 0;
    if (!lr.ok || lr.token_s.empty()) {
      fail("long request: " + lr.error);
    } else {
      run.long_ttft_ms = 1e3 * (lr.token_s.front() - lr.submit_s);
      window_end = lr.token_s.front();
      // One more token per stream, so the gap spanning the last prefill chunk is complete.
      for (InFlight& f : streams) {
        if (!f.submit_status.ok()) continue;
        const size_t have = f.sink->num_tokens();
        if (!f.sink->WaitTokens(have + 1, wait_s)) fail("stream stalled after the long prefill");
      }
    }
    for (InFlight& f : streams)
      if (f.submit_status.ok()) engine_.Cancel(f.id);
    std::vector<double> gaps;
    for (InFlight& f : streams) {
      RequestRecord r = Collect(f, /*cancelled_is_ok=*/true);
      if (!r.ok) {
        fail("loaded stream: " + r.error);
        continue;
      }
      if (window_end == 0) continue;
      // Gaps that overlap [long submit, long first token]: every step the prefill slowed.
      for (size_t k = 1; k < r.token_s.size(); ++k)
        if (r.token_s[k] > lr.submit_s && r.token_s[k - 1] < window_end)
          gaps.push_back(1e3 * (r.token_s[k] - r.token_s[k - 1]));
    }
    run.loaded_tpot_ms = Summarize(std::move(gaps));
    return run;
  }

 private:
  Engine& engine_;
  const EngineBenchOptions& o_;
  const int id_limit_;
  std::vector<int32_t> shared_prefix_;
  uint64_t prompt_counter_ = 0;
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

std::string Ms(const LatencySummary& s, double v) {
  if (s.count == 0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

nlohmann::ordered_json SummaryJson(const LatencySummary& s) {
  return {{"count", s.count}, {"mean", s.mean}, {"min", s.min}, {"p50", s.p50},
          {"p90", s.p90},     {"p99", s.p99},   {"max", s.max}};
}

}  // namespace

Result<EngineBenchReport> RunEngineBench(const Model& model, const Tokenizer* tokenizer,
                                         const EngineBenchOptions& options) {
  BRISK_RETURN_IF_ERROR(Validate(options));
  EngineBenchOptions o = options;
  const int max_c = *std::max_element(o.concurrency.begin(), o.concurrency.end());
  if (o.max_num_seqs == 0) o.max_num_seqs = max_c + (o.long_prompt > 0 ? 1 : 0);

  EngineConfig ec;
  ec.threads = o.threads;
  ec.max_num_seqs = o.max_num_seqs;
  ec.max_num_batched_tokens = o.max_num_batched_tokens;
  ec.max_prefill_chunk = o.max_prefill_chunk;
  ec.kv_cache_bytes = o.kv_cache_bytes;
  ec.batch_policy = o.batch_policy;
  ec.tpot_target_ms = o.tpot_target_ms;
  // The engine's default length (8192 at most) unless a request needs more.
  const int64_t need =
      std::max<int64_t>(int64_t(o.shared_prefix) + o.prompt_len + o.output_len, o.long_prompt + 1) +
      1;
  if (need > 8192) ec.max_model_len = int(std::min<int64_t>(need, INT32_MAX));
  BRISK_ASSIGN_OR_RETURN(std::unique_ptr<Engine> engine, Engine::Create(model, tokenizer, ec));

  EngineBenchReport rep;
  rep.cpu = DescribeCpu();
  rep.isa = std::string(IsaName(ActiveIsa()));
  rep.brisk_version = BRISK_VERSION;
  rep.model = o.model;
  if (model.gguf())
    if (auto ft = model.gguf()->GetUInt("general.file_type"); ft.ok())
      rep.file_type = FileTypeName(uint32_t(*ft));
  rep.synthetic = IsSynthetic(model);
  rep.tokenizer = tokenizer != nullptr;
  // The engine's pool follows the same rule (ThreadPool: 0 = one per core).
  rep.threads = o.threads > 0 ? o.threads : int(std::max(1u, std::thread::hardware_concurrency()));
  rep.max_model_len = engine->config().max_model_len;
  rep.kv_block_size = engine->config().kv_block_size;
  rep.kv_blocks = engine->Stats().kv_blocks_total;
  rep.kv_cache_mib = double(engine->config().kv_cache_bytes) / double(1 << 20);
  o.kv_cache_bytes = engine->config().kv_cache_bytes;
  rep.options = o;

  auto say = [&](const char* fmt, auto... args) {
    if (!o.progress) return;
    std::fprintf(stderr, fmt, args...);
    std::fflush(stderr);
  };
  Bench bench(*engine, o, model.config().n_vocab);
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

std::string EngineBenchReport::ToTable() const {
  const EngineBenchOptions& o = options;
  std::string s;
  char buf[1024];
  std::snprintf(
      buf, sizeof buf,
      "brisk %s | %s | ISA %s | %d threads\nmodel %s (%s)%s\n"
      "engine: max_num_seqs %d, max_batched_tokens %d, max_prefill_chunk %s, "
      "max_model_len %d, KV cache %.0f MiB (%d blocks of %d), prefix caching on, "
      "batch policy %s (TPOT target %.0f ms)\n"
      "workload: prompt %d tokens%s, output %d tokens (greedy, ignore_eos), "
      "warmup %d%s\n\n",
      brisk_version.c_str(), cpu.c_str(), isa.c_str(), threads, model.c_str(),
      file_type.empty() ? "?" : file_type.c_str(), tokenizer ? "" : ", no tokenizer",
      o.max_num_seqs, o.max_num_batched_tokens,
      o.max_prefill_chunk > 0 ? std::to_string(o.max_prefill_chunk).c_str() : "budget",
      max_model_len, kv_cache_mib, kv_blocks, kv_block_size, BatchPolicyName(o.batch_policy),
      o.tpot_target_ms, o.prompt_len,
      o.shared_prefix > 0 ? (" after a shared prefix of " + std::to_string(o.shared_prefix)).c_str()
                          : "",
      o.output_len, o.warmup,
      warmup_failures > 0 ? (" (" + std::to_string(warmup_failures) + " failed)").c_str() : "");
  s += buf;
  if (synthetic) s += std::string(kSyntheticNotice) + "\n\n";
  if (has_shared_prefix_probe) {
    const double ratio =
        shared.second_ttft_ms > 0 ? shared.first_ttft_ms / shared.second_ttft_ms : 0;
    std::snprintf(buf, sizeof buf,
                  "shared prefix: first request TTFT %.1f ms, second request TTFT %.1f ms "
                  "(%.1f x); cached prompt tokens %d then %d%s\n\n",
                  shared.first_ttft_ms, shared.second_ttft_ms, ratio, shared.first_cached_tokens,
                  shared.second_cached_tokens, shared.failures > 0 ? " (FAILED requests)" : "");
    s += buf;
  }

  s += "| conc | reqs | fail | wall s | out tok/s | total tok/s | steps | tok/step | preempt "
       "| prefix hit tok |\n";
  s += "|-----:|-----:|-----:|-------:|----------:|------------:|------:|---------:|--------:"
       "|---------------:|\n";
  for (const EngineBenchRun& r : runs) {
    std::snprintf(buf, sizeof buf,
                  "| %4d | %4d | %4d | %6.2f | %9.1f | %11.1f | %5lld | %8.1f | %7lld | %14lld |\n",
                  r.concurrency, r.requests, r.failures, r.wall_s, r.output_tok_s, r.total_tok_s,
                  (long long)r.engine.steps, r.engine.tokens_per_step,
                  (long long)r.engine.preemptions, (long long)r.engine.prefix_hit_tokens);
    s += buf;
  }
  s += "\n| conc | metric |  p50 ms |  p90 ms |  p99 ms | mean ms |\n";
  s += "|-----:|--------|--------:|--------:|--------:|--------:|\n";
  for (const EngineBenchRun& r : runs) {
    const std::pair<const char*, const LatencySummary*> rows[] = {
        {"TTFT", &r.ttft_ms}, {"TPOT", &r.tpot_ms}, {"ITL", &r.itl_ms}, {"E2E", &r.e2e_ms}};
    for (const auto& [name, m] : rows) {
      std::snprintf(buf, sizeof buf, "| %4d | %-6s | %7s | %7s | %7s | %7s |\n", r.concurrency,
                    name, Ms(*m, m->p50).c_str(), Ms(*m, m->p90).c_str(), Ms(*m, m->p99).c_str(),
                    Ms(*m, m->mean).c_str());
      s += buf;
    }
  }
  if (!long_runs.empty()) {
    s += "\nstream TPOT (per-token gaps) while a long prompt prefills, vs the same streams "
         "unloaded:\n\n";
    s += "| conc | long prompt | long TTFT ms | unloaded p50 | unloaded p99 | during p50 "
         "| during p99 | p99 x | fail |\n";
    s += "|-----:|------------:|-------------:|-------------:|-------------:|-----------:"
         "|-----------:|------:|-----:|\n";
    for (const LongPromptRun& r : long_runs) {
      char ratio[32] = "-";
      if (r.unloaded_tpot_ms.count > 0 && r.loaded_tpot_ms.count > 0 && r.unloaded_tpot_ms.p99 > 0)
        std::snprintf(ratio, sizeof ratio, "%.1f", r.loaded_tpot_ms.p99 / r.unloaded_tpot_ms.p99);
      std::snprintf(buf, sizeof buf,
                    "| %4d | %11d | %12.1f | %12s | %12s | %10s | %10s | %5s | %4d |\n",
                    r.concurrency, r.long_prompt_tokens, r.long_ttft_ms,
                    Ms(r.unloaded_tpot_ms, r.unloaded_tpot_ms.p50).c_str(),
                    Ms(r.unloaded_tpot_ms, r.unloaded_tpot_ms.p99).c_str(),
                    Ms(r.loaded_tpot_ms, r.loaded_tpot_ms.p50).c_str(),
                    Ms(r.loaded_tpot_ms, r.loaded_tpot_ms.p99).c_str(), ratio, r.failures);
      s += buf;
    }
  }
  bool any_failure = false;
  for (const EngineBenchRun& r : runs)
    for (const std::string& m : r.failure_messages) {
      if (!any_failure) s += "\nfailures:\n";
      any_failure = true;
      s += "  concurrency " + std::to_string(r.concurrency) + ": " + m + "\n";
    }
  for (const LongPromptRun& r : long_runs)
    for (const std::string& m : r.failure_messages) {
      if (!any_failure) s += "\nfailures:\n";
      any_failure = true;
      s += "  long prompt, concurrency " + std::to_string(r.concurrency) + ": " + m + "\n";
    }
  return s;
}

std::string EngineBenchReport::ToJson() const {
  const EngineBenchOptions& o = options;
  nlohmann::ordered_json j;
  j["brisk_version"] = brisk_version;
  j["cpu"] = cpu;
  j["isa"] = isa;
  j["threads"] = threads;
  j["model"] = model;
  j["file_type"] = file_type;
  j["synthetic_weights"] = synthetic;
  j["tokenizer"] = tokenizer;
  j["engine"] = {{"max_num_seqs", o.max_num_seqs},
                 {"max_num_batched_tokens", o.max_num_batched_tokens},
                 {"max_prefill_chunk", o.max_prefill_chunk},
                 {"max_model_len", max_model_len},
                 {"kv_cache_mib", kv_cache_mib},
                 {"kv_blocks", kv_blocks},
                 {"kv_block_size", kv_block_size}};
  j["workload"] = {{"prompt_len", o.prompt_len},
                   {"output_len", o.output_len},
                   {"shared_prefix", o.shared_prefix},
                   {"long_prompt", o.long_prompt},
                   {"warmup", o.warmup},
                   {"num_prompts", o.num_prompts},
                   {"seed", o.seed}};
  j["warmup_failures"] = warmup_failures;
  if (has_shared_prefix_probe)
    j["shared_prefix"] = {{"prefix_tokens", shared.prefix_tokens},
                          {"first_ttft_ms", shared.first_ttft_ms},
                          {"second_ttft_ms", shared.second_ttft_ms},
                          {"first_cached_tokens", shared.first_cached_tokens},
                          {"second_cached_tokens", shared.second_cached_tokens},
                          {"failures", shared.failures}};
  j["runs"] = nlohmann::ordered_json::array();
  for (const EngineBenchRun& r : runs) {
    nlohmann::ordered_json x;
    x["concurrency"] = r.concurrency;
    x["requests"] = r.requests;
    x["failures"] = r.failures;
    x["failure_messages"] = r.failure_messages;
    x["wall_s"] = r.wall_s;
    x["prompt_tokens"] = r.prompt_tokens;
    x["cached_tokens"] = r.cached_tokens;
    x["generated_tokens"] = r.generated_tokens;
    x["output_tok_s"] = r.output_tok_s;
    x["total_tok_s"] = r.total_tok_s;
    x["ttft_ms"] = SummaryJson(r.ttft_ms);
    x["tpot_ms"] = SummaryJson(r.tpot_ms);
    x["itl_ms"] = SummaryJson(r.itl_ms);
    x["e2e_ms"] = SummaryJson(r.e2e_ms);
    x["engine"] = {{"steps", r.engine.steps},
                   {"prompt_tokens", r.engine.prompt_tokens},
                   {"generation_tokens", r.engine.generation_tokens},
                   {"tokens_per_step", r.engine.tokens_per_step},
                   {"preemptions", r.engine.preemptions},
                   {"prefix_queried_tokens", r.engine.prefix_queried_tokens},
                   {"prefix_hit_tokens", r.engine.prefix_hit_tokens}};
    j["runs"].push_back(std::move(x));
  }
  if (!long_runs.empty()) {
    j["long_prompt"] = nlohmann::ordered_json::array();
    for (const LongPromptRun& r : long_runs)
      j["long_prompt"].push_back({{"concurrency", r.concurrency},
                                  {"long_prompt_tokens", r.long_prompt_tokens},
                                  {"long_ttft_ms", r.long_ttft_ms},
                                  {"unloaded_tpot_ms", SummaryJson(r.unloaded_tpot_ms)},
                                  {"loaded_tpot_ms", SummaryJson(r.loaded_tpot_ms)},
                                  {"failures", r.failures},
                                  {"failure_messages", r.failure_messages}});
  }
  return j.dump(2);
}

}  // namespace brisk
