#include "bench/bench_sweep.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <memory>
#include <thread>

#include "bench/load_driver.h"
#include "bench/rss_sampler.h"
#include "bench/workloads.h"
#include "runtime/cpu_features.h"

namespace brisk {
namespace {

// Common short English words: each is one token (with its leading space) in Qwen's vocabulary
// and in most BPE vocabularies, so N of them add about N tokens to a prompt.
constexpr const char* kFiller[] = {
    "time",    "year",    "people",   "way",    "day",    "man",    "thing",   "woman",
    "life",    "child",   "world",    "school", "state",  "family", "student", "group",
    "country", "problem", "hand",     "part",   "place",  "case",   "week",    "company",
    "system",  "program", "question", "work",   "number", "night",  "point",   "home",
    "water",   "room",    "mother",   "area",   "money",  "story",  "fact",    "month",
    "lot",     "right",   "study",    "book",   "eye",    "job",    "word",    "business"};

std::string Filler(int words, uint64_t seed) {
  std::string s = "\n\nBackground notes (ignore them):";
  uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
  for (int i = 0; i < words; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    s += ' ';
    s += kFiller[x % std::size(kFiller)];
  }
  return s;
}

std::string NowIso() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

Status Validate(const BenchSweepOptions& o) {
  if (!o.concurrency.empty() && !o.request_rates.empty())
    return Status::Error("give --concurrency or --request-rate, not both");
  for (int c : o.concurrency)
    if (c < 1 || c > 4096) return Status::Error("concurrency must be in 1..4096");
  for (double r : o.request_rates)
    if (!(r > 0)) return Status::Error("request rates must be > 0 (inf = all at once)");
  for (int s : o.max_num_seqs)
    if (s < 1 || s > 4096) return Status::Error("max_num_seqs must be in 1..4096");
  if (!(o.burstiness > 0) || std::isinf(o.burstiness))
    return Status::Error("burstiness must be a positive number");
  if (o.num_prompts < 0 || o.output_len < 0 || o.prompt_len < 0 || o.warmup < 0)
    return Status::Error("counts and lengths must not be negative");
  if (o.temperature < 0 || !(o.top_p > 0 && o.top_p <= 1))
    return Status::Error("temperature must be >= 0 and top-p in (0, 1]");
  for (int n : o.prompt_lens)
    if (n < 0 || n > (1 << 20)) return Status::Error("prompt lengths must be in 0..1048576");
  for (float t : o.temperatures)
    if (!(t >= 0) || t > 100) return Status::Error("temperatures must be in 0..100");
  return Status::Ok();
}

}  // namespace

Result<std::vector<BenchRequest>> BuildBenchRequests(const BenchSweepOptions& o) {
  BRISK_ASSIGN_OR_RETURN(std::vector<WorkloadPrompt> prompts, WorkloadPrompts(o.workload));
  std::vector<BenchRequest> out;
  for (size_t i = 0; i < prompts.size(); ++i) {
    const WorkloadPrompt& p = prompts[i];
    BenchRequest r;
    r.system = p.system;
    r.user = p.user;
    if (o.prompt_len > 0) r.user += Filler(o.prompt_len, o.seed + i);
    r.max_tokens = o.output_len > 0 ? o.output_len : (o.natural ? 2 : 1) * p.output_len;
    r.ignore_eos = !o.natural;
    r.temperature = o.temperature;
    r.top_p = o.top_p;
    r.seed = o.seed + i;
    out.push_back(std::move(r));
  }
  return out;
}

namespace {

// The swept values of one run, each list at least one long ("" / 0 = the target's own).
struct SweepAxes {
  std::vector<std::string> policies;
  std::vector<int> seqs;
  std::vector<int> pads;
  std::vector<float> temps;
  size_t levels = 0;  // concurrency or request-rate values
};

SweepAxes ResolveAxes(const BenchSweepOptions& o, bool in_process) {
  SweepAxes a;
  a.seqs = o.max_num_seqs;
  if (a.seqs.empty())  // in-process: every client gets a slot; HTTP: the server's setting
    a.seqs = {in_process && !o.concurrency.empty()
                  ? *std::max_element(o.concurrency.begin(), o.concurrency.end())
                  : 0};
  a.policies = o.batch_policies;
  if (a.policies.empty()) a.policies = {""};
  a.pads = o.prompt_lens;
  if (a.pads.empty()) a.pads = {o.prompt_len};
  a.temps = o.temperatures;
  if (a.temps.empty()) a.temps = {o.temperature};
  a.levels = o.concurrency.empty() ? o.request_rates.size() : o.concurrency.size();
  return a;
}

// The header lines that follow from the options alone: output length, sampling, swept axes.
void DescribeSweep(const BenchSweepOptions& o, const SweepAxes& a, BenchReport* rep) {
  std::string len = o.output_len > 0              ? std::to_string(o.output_len)
                    : o.workload == "qa"          ? "64"
                    : o.workload == "copywriting" ? "256"
                    : o.workload == "code"        ? "192"
                                                  : "qa 64 / copywriting 256 / code 192";
  rep->output_len = o.natural
                        ? "natural (max_tokens " + len + (o.output_len > 0 ? "" : " x 2") + ")"
                        : len + ", fixed (ignore_eos)";
  const std::string top_p = o.top_p < 1 ? ", top-p " + Num(o.top_p) : "";
  if (a.temps.size() > 1)
    rep->sampling = "temperature swept" + top_p + " (0 = greedy)";
  else
    rep->sampling = a.temps[0] == 0 ? "greedy" : "temperature " + Num(a.temps[0]) + top_p;
  std::vector<std::string> swept;
  if (a.policies.size() > 1) swept.push_back("batch_policy");
  if (a.seqs.size() > 1) swept.push_back("max_num_seqs");
  if (a.pads.size() > 1) swept.push_back("prompt_len");
  if (a.temps.size() > 1) swept.push_back("temperature");
  if (a.levels > 1 || swept.empty())
    swept.push_back(o.concurrency.empty() ? "request_rate" : "concurrency");
  for (size_t i = 0; i < swept.size(); ++i) rep->sweep += (i ? " x " : "") + swept[i];
}

// Where one point sits on the sweep's axes.
struct PointCoords {
  std::string policy;
  int seqs = 0, pad = 0;
  float temp = 0;
  size_t level = 0;
};

// The plan of one measured point (its `requests` are the caller's to set).
PointPlan PlanPoint(const BenchSweepOptions& o, const SweepAxes& a, const PointCoords& c) {
  PointPlan plan;
  plan.slo = o.slo;
  plan.seed = o.seed + c.level;
  plan.progress = o.progress;
  plan.burstiness = o.burstiness;
  std::string label;
  if (!c.policy.empty() && a.policies.size() > 1) label += c.policy + " ";
  if (c.seqs > 0 && a.seqs.size() > 1) label += "seqs=" + std::to_string(c.seqs) + " ";
  if (a.pads.size() > 1) label += "ctx+" + std::to_string(c.pad) + " ";
  if (a.temps.size() > 1) label += "temp=" + Num(c.temp) + " ";
  if (!o.concurrency.empty()) {
    plan.concurrency = o.concurrency[c.level];
    plan.num_prompts = o.num_prompts > 0 ? o.num_prompts : std::max(4 * plan.concurrency, 8);
    label += "c=" + std::to_string(plan.concurrency);
  } else {
    plan.request_rate = o.request_rates[c.level];
    plan.num_prompts = o.num_prompts > 0 ? o.num_prompts : 32;
    label +=
        "rate=" + (std::isinf(plan.request_rate) ? std::string("inf") : Num(plan.request_rate));
  }
  plan.label = label;
  return plan;
}

// Unmeasured requests, one at a time, so a new engine setting starts warm.
void Warmup(LoadTarget& target, int n, const std::vector<BenchRequest>& requests) {
  if (n <= 0) return;
  PointPlan w;
  w.label = "warmup";
  w.concurrency = 1;
  w.num_prompts = n;
  w.requests = &requests;
  w.progress = false;
  RunPoint(target, w, nullptr);
}

// Every point of one engine setting (policy x max_num_seqs): prompt padding x temperature x
// levels.
Status RunSetting(LoadTarget& target, const BenchSweepOptions& o, const SweepAxes& a, PointCoords c,
                  RssSampler* rss, BenchReport* rep) {
  for (int pad : a.pads)
    for (float temp : a.temps) {
      BenchSweepOptions variant = o;
      variant.prompt_len = c.pad = pad;
      variant.temperature = c.temp = temp;
      BRISK_ASSIGN_OR_RETURN(std::vector<BenchRequest> vreqs, BuildBenchRequests(variant));
      for (c.level = 0; c.level < a.levels; ++c.level) {
        PointPlan plan = PlanPoint(o, a, c);
        plan.requests = &vreqs;
        for (PointSampler* s : o.samplers) s->BeginPoint();
        BenchPoint p = RunPoint(target, plan, rss);
        for (PointSampler* s : o.samplers) s->EndPoint(&p);
        p.max_num_seqs = c.seqs;
        p.max_num_batched_tokens = o.max_num_batched_tokens;
        p.max_prefill_chunk = o.max_prefill_chunk;
        p.batch_policy = c.policy;
        rep->points.push_back(std::move(p));
      }
    }
  return Status::Ok();
}

// The header facts the target knows (model, mode, engine settings) and the settings line.
void DescribeTarget(const TargetInfo& info, const BenchSweepOptions& o, BenchReport* rep) {
  rep->mode = info.mode;
  rep->url = info.url;
  rep->server = info.server;
  rep->model = info.model;
  rep->file_type = info.file_type;
  rep->synthetic = info.synthetic;
  rep->isa = info.isa;
  rep->threads = info.threads;
  rep->model_load_ms = info.model_load_ms;
  rep->tokenizer_load_ms = info.tokenizer_load_ms;
  char buf[512];
  std::snprintf(buf, sizeof buf, "%s requests per point%s, warmup %d%s%s",
                o.num_prompts > 0       ? std::to_string(o.num_prompts).c_str()
                : o.concurrency.empty() ? "32"
                                        : "max(4 x concurrency, 8)",
                o.concurrency.empty()
                    ? (", " + std::string(o.burstiness == 1 ? "Poisson" : "gamma") + " arrivals" +
                       (o.burstiness == 1 ? "" : " (burstiness " + Num(o.burstiness) + ")"))
                          .c_str()
                    : ", closed loop",
                o.warmup,
                o.prompt_len > 0
                    ? (", prompts padded by ~" + std::to_string(o.prompt_len) + " tokens").c_str()
                    : "",
                info.engine_settings.empty() ? "" : ("; " + info.engine_settings).c_str());
  rep->settings = buf;
  if (o.max_num_batched_tokens > 0)
    rep->settings += "; max_num_batched_tokens " + std::to_string(o.max_num_batched_tokens);
  if (o.max_prefill_chunk > 0)
    rep->settings += "; max_prefill_chunk " + std::to_string(o.max_prefill_chunk);
}

}  // namespace

Result<BenchReport> RunBenchSweep(LoadTarget& target, const BenchSweepOptions& options) {
  BenchSweepOptions o = options;
  BRISK_RETURN_IF_ERROR(Validate(o));
  if (o.concurrency.empty() && o.request_rates.empty()) o.concurrency = {1, 2, 4, 8};
  BRISK_ASSIGN_OR_RETURN(std::vector<BenchRequest> requests, BuildBenchRequests(o));
  const SweepAxes axes = ResolveAxes(o, target.Info().mode == "in-process");
  std::unique_ptr<RssSampler> rss;
  if (target.rss_pid() >= 0) rss = std::make_unique<RssSampler>(target.rss_pid(), 0.2);

  BenchReport rep;
  rep.brisk_version = BRISK_VERSION;
  rep.started_at = NowIso();
  rep.command = o.command;
  rep.cpu = DescribeCpu();
  rep.cores = int(std::max(1u, std::thread::hardware_concurrency()));
  rep.workload = o.workload;
  rep.slo = o.slo;
  DescribeSweep(o, axes, &rep);

  int warm = o.warmup;  // the first setting gets all of it, each later one a single request
  for (const std::string& policy : axes.policies)
    for (int s : axes.seqs) {
      TargetLimits lim;
      lim.max_num_seqs = s;
      lim.max_num_batched_tokens = o.max_num_batched_tokens;
      lim.max_prefill_chunk = o.max_prefill_chunk;
      lim.batch_policy = policy;
      lim.tpot_target_ms = o.tpot_target_ms;
      BRISK_RETURN_IF_ERROR(target.Configure(lim));
      Warmup(target, warm, requests);
      warm = std::min(o.warmup, 1);
      PointCoords c;
      c.policy = policy;
      c.seqs = s;
      BRISK_RETURN_IF_ERROR(RunSetting(target, o, axes, c, rss.get(), &rep));
    }
  DescribeTarget(target.Info(), o, &rep);
  return rep;
}

}  // namespace brisk
