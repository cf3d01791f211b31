#include "bench/load_driver.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <thread>

#include "bench/progress_line.h"
#include "bench/rss_sampler.h"
#include "util/check.h"
#include "util/clock.h"

namespace brisk {
namespace {

constexpr size_t kMaxFailureMessages = 5;
constexpr double kPollS = 0.05;

// Numbers the requests of the whole process (PointPlan::unique_prompts). Only driver threads
// touch it; atomic so two benchmarks in one process stay unique too.
std::atomic<uint64_t> g_request_number{0};

// What a point's callbacks share. Held by shared_ptr so a callback that arrives after the
// point gave up (a target that answered very late) writes into a live object.
struct PointState {
  std::vector<RequestRecord> records;
  int started = 0;
  int failed = 0;
  long long output_tokens = 0;
  // Closed loop: starts the next request (null once the point is over, so a late answer
  // starts nothing).
  std::function<void()> refill;
};

}  // namespace

std::vector<double> ArrivalOffsets(int n, double rate, double burstiness, uint64_t seed) {
  std::vector<double> t(size_t(std::max(n, 0)), 0.0);
  if (n <= 1 || std::isinf(rate)) return t;
  BRISK_CHECK(rate > 0 && burstiness > 0);
  std::mt19937_64 rng(seed);
  // Gamma(k, theta) has mean k * theta: theta = 1 / (rate * k) keeps the mean gap at 1 / rate.
  std::gamma_distribution<double> gap(burstiness, 1.0 / (rate * burstiness));
  for (size_t i = 1; i < t.size(); ++i) t[i] = t[i - 1] + gap(rng);
  return t;
}

void SummarizeRecords(const std::vector<RequestRecord>& records, const Slo& slo, BenchPoint* p) {
  std::vector<double> ttft, tpot, itl, e2e;
  std::map<std::string, int> messages;
  double t0 = std::numeric_limits<double>::infinity(), t1 = -t0;
  int good = 0;
  p->requests = int(records.size());
  p->successes = p->failures = 0;
  p->prompt_tokens = p->output_tokens = 0;
  for (const RequestRecord& r : records) {
    t0 = std::min(t0, r.start_s);
    t1 = std::max(t1, r.end_s);
    if (!r.ok) {
      ++p->failures;
      ++messages[r.error.empty() ? "failed (no message)" : r.error];
      continue;
    }
    ++p->successes;
    const int64_t out = r.output_tokens >= 0 ? r.output_tokens : int64_t(r.token_s.size());
    p->output_tokens += out;
    if (r.prompt_tokens > 0) p->prompt_tokens += r.prompt_tokens;
    const double e = (r.end_s - r.start_s) * 1e3;
    e2e.push_back(e);
    // Without a token (an empty answer) the request's first output is its end.
    const double first = r.token_s.empty() ? e : (r.token_s.front() - r.start_s) * 1e3;
    if (!r.token_s.empty()) ttft.push_back(first);
    double per_token = -1;
    if (out >= 2 && r.token_s.size() >= 2) {
      per_token = (r.token_s.back() - r.token_s.front()) * 1e3 / double(out - 1);
      tpot.push_back(per_token);
    }
    for (size_t i = 1; i < r.token_s.size(); ++i)
      itl.push_back((r.token_s[i] - r.token_s[i - 1]) * 1e3);
    const bool ttft_ok = slo.ttft_ms <= 0 || first <= slo.ttft_ms;
    const bool tpot_ok = slo.tpot_ms <= 0 || per_token < 0 || per_token <= slo.tpot_ms;
    if (ttft_ok && tpot_ok) ++good;
  }
  p->failure_messages.clear();
  for (const auto& [m, n] : messages) {
    if (p->failure_messages.size() >= kMaxFailureMessages) break;
    p->failure_messages.push_back(n > 1 ? m + " (x" + std::to_string(n) + ")" : m);
  }
  p->wall_s = records.empty() ? 0 : std::max(0.0, t1 - t0);
  const double w = p->wall_s;
  p->output_tok_s = w > 0 ? double(p->output_tokens) / w : 0;
  p->total_tok_s = w > 0 ? double(p->prompt_tokens + p->output_tokens) / w : 0;
  p->request_s = w > 0 ? double(p->successes) / w : 0;
  p->goodput_s = w > 0 ? double(good) / w : 0;
  p->slo_attainment = records.empty() ? 0 : double(good) / double(records.size());
  p->ttft_ms = Summarize(std::move(ttft));
  p->tpot_ms = Summarize(std::move(tpot));
  p->itl_ms = Summarize(std::move(itl));
  p->e2e_ms = Summarize(std::move(e2e));
}

ServerSide CounterDelta(const TargetCounters& a, const TargetCounters& b) {
  ServerSide s;
  if (!a.has || !b.has) return s;
  s.has = true;
  s.steps = int64_t(b.steps - a.steps);
  if (a.has_steps && b.has_steps && b.steps > a.steps) {
    if (a.has_step_seqs && b.has_step_seqs)
      s.mean_batch_seqs = (b.step_seqs - a.step_seqs) / (b.steps - a.steps);
    s.mean_batch_tokens = (b.step_tokens - a.step_tokens) / (b.steps - a.steps);
  }
  s.preemptions = int64_t(b.preemptions - a.preemptions);
  s.prefix_queried_tokens = int64_t(b.prefix_queried - a.prefix_queried);
  s.prefix_hit_tokens = int64_t(b.prefix_hits - a.prefix_hits);
  s.generation_tokens = int64_t(b.generation_tokens - a.generation_tokens);
  s.prompt_tokens = int64_t(b.prompt_tokens - a.prompt_tokens);
  return s;
}

namespace {

// One point from its first request to its last record.
class PointRun {
 public:
  PointRun(LoadTarget& target, const PointPlan& plan)
      : target_(target),
        plan_(plan),
        n_(std::max(plan.num_prompts, 0)),
        st_(std::make_shared<PointState>()),
        progress_(plan.label, n_, plan.progress) {
    BRISK_CHECK(plan.make_request || (plan.requests != nullptr && !plan.requests->empty()));
    BRISK_CHECK(plan.concurrency > 0 || plan.request_rate > 0);
    BRISK_CHECK(plan.duration_s <= 0 || plan.concurrency > 0);
    st_->records.reserve(size_t(n_));
  }

  // Returns what every request measured, in the order they ended.
  std::vector<RequestRecord> Run() {
    t0_ = NowSeconds();
    if (plan_.concurrency > 0) {
      st_->refill = [this] {
        if (PlannedLeft()) StartPlanned();
      };
      for (int i = 0; i < plan_.concurrency && PlannedLeft(); ++i) StartPlanned();
    } else {
      arrivals_ = ArrivalOffsets(n_, plan_.request_rate, plan_.burstiness, plan_.seed);
    }
    while (!Finished()) {
      Step();
      if (GaveUp()) break;
    }
    st_->refill = nullptr;  // late callbacks (after a give-up) start nothing
    progress_.Finish(int(st_->records.size()), st_->failed, st_->output_tokens, NowSeconds() - t0_);
    return std::move(st_->records);
  }

  double kv_max() const { return kv_max_; }

 private:
  bool PlannedLeft() const {
    return plan_.duration_s > 0 ? NowSeconds() < t0_ + plan_.duration_s : planned_ < n_;
  }
  bool Finished() const {
    return st_->records.size() == size_t(st_->started) &&
           (plan_.concurrency > 0 || planned_ >= n_) && !PlannedLeft();
  }

  BenchRequest PlannedRequest(int i) const {
    if (plan_.make_request) return plan_.make_request(plan_.first_request + i);
    const std::vector<BenchRequest>& reqs = *plan_.requests;
    BenchRequest r = reqs[size_t(plan_.first_request + i) % reqs.size()];
    if (plan_.unique_prompts) r.user = "[" + std::to_string(++g_request_number) + "] " + r.user;
    return r;
  }
  void StartPlanned() { Start(PlannedRequest(planned_++)); }

  void Start(const BenchRequest& r) {
    std::shared_ptr<PointState> st = st_;
    const int index = st->started++;
    target_.Start(r, [st, index](RequestRecord rec) {
      rec.index = index;
      if (!rec.ok) ++st->failed;
      st->output_tokens += rec.output_tokens >= 0 ? rec.output_tokens : int64_t(rec.token_s.size());
      st->records.push_back(std::move(rec));
      if (st->refill) st->refill();
    });
  }

  // Starts due arrivals, waits for the target, lets the hook act.
  void Step() {
    const double now = NowSeconds();
    double wait = plan_.poll_s;
    if (plan_.concurrency == 0) {
      while (planned_ < n_ && t0_ + arrivals_[size_t(planned_)] <= now) StartPlanned();
      if (planned_ < n_) wait = std::min(wait, t0_ + arrivals_[size_t(planned_)] - now);
    }
    if (target_.in_flight() > 0)
      target_.Poll(std::max(wait, 0.0));
    else if (wait > 0)
      std::this_thread::sleep_for(std::chrono::duration<double>(wait));
    if (const double kv = target_.KvUsage(); kv > kv_max_) kv_max_ = kv;
    if (plan_.hook) {
      PointView view{target_, st_->records, st_->started, NowSeconds() - t0_,
                     [this](const BenchRequest& r) { Start(r); }};
      plan_.hook(view);
    }
  }

  // Nothing ended for give_up_s: counts what is still out (and what was never sent) as failed.
  bool GaveUp() {
    const double t = NowSeconds();
    if (st_->records.size() != last_count_) {
      last_count_ = st_->records.size();
      last_progress_s_ = t;
    } else if (target_.in_flight() > 0 && t - std::max(last_progress_s_, t0_) > plan_.give_up_s) {
      const int unsent = plan_.duration_s > 0 ? 0 : std::max(n_ - planned_, 0);
      const int missing = st_->started - int(st_->records.size()) + unsent;
      for (int i = 0; i < missing; ++i) {
        RequestRecord r;
        r.start_s = t0_;
        r.end_s = t;
        r.error = "no answer within " + std::to_string(int(plan_.give_up_s)) + " s";
        st_->records.push_back(std::move(r));
      }
      planned_ = n_;
      st_->started = int(st_->records.size());
      st_->refill = nullptr;
      target_.CancelAll();  // the next point must not share the target with them
      return true;
    }
    progress_.Update(int(st_->records.size()), st_->failed, st_->output_tokens, t - t0_);
    return false;
  }

  LoadTarget& target_;
  const PointPlan& plan_;
  const int n_;
  std::shared_ptr<PointState> st_;
  ProgressLine progress_;
  std::vector<double> arrivals_;
  double t0_ = 0;
  int planned_ = 0;
  double kv_max_ = 0;
  size_t last_count_ = 0;
  double last_progress_s_ = 0;
};

}  // namespace

BenchPoint RunPoint(LoadTarget& target, const PointPlan& plan, RssSampler* rss,
                    std::vector<RequestRecord>* records) {
  const TargetCounters before = target.Counters();
  if (rss) rss->ResetMax();
  PointRun run(target, plan);
  std::vector<RequestRecord> measured = run.Run();
  BenchPoint p;
  p.label = plan.label;
  p.concurrency = plan.concurrency;
  p.request_rate = plan.request_rate;
  SummarizeRecords(measured, plan.slo, &p);
  p.server = CounterDelta(before, target.Counters());
  p.server.kv_usage_max = run.kv_max();
  if (rss) p.peak_rss_mib = std::max(rss->max(), rss->Sample());
  if (records) *records = std::move(measured);
  return p;
}

}  // namespace brisk
