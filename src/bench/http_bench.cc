#include "bench/http_bench.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <fstream>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "bench/http_client.h"
#include "bench/http_target.h"
#include "bench/load_driver.h"
#include "bench/prometheus_text.h"
#include "bench/rss_sampler.h"
#include "runtime/cpu_features.h"
#include "util/splitmix64.h"

namespace brisk {
namespace {

constexpr size_t kMaxFailureMessages = 5;
constexpr int kWarmupMaxTokens = 16;
// A server may count a request as finished just after its last byte went out, so a scrape
// right after the level can miss the last few; it is repeated this often, this far apart.
constexpr int kScrapeRetries = 10;
constexpr auto kScrapeRetryDelay = std::chrono::milliseconds(100);
constexpr double kScrapeTimeoutS = 30;
// The target ends a request at request_timeout_s; the driver gives up this much later.
constexpr double kGiveUpSlackS = 60;

std::string Shorten(std::string_view s, size_t n = 200) {
  std::string out(s.substr(0, n));
  for (char& c : out)
    if (c == '\n' || c == '\r') c = ' ';
  if (s.size() > n) out += "...";
  return out;
}

bool NonEmptyString(const nlohmann::json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() && !it->get_ref<const std::string&>().empty();
}

}  // namespace

Result<ServerCounters> ParseServerCounters(std::string_view text) {
  BRISK_ASSIGN_OR_RETURN(auto sums, SumPrometheusSamples(text));
  ServerCounters c;
  auto take = [&](std::string_view name, double* v, bool* seen) {
    auto it = sums.find(name);
    if (it == sums.end()) return;
    *v = it->second;
    *seen = true;
  };
  take("vllm:generation_tokens_total", &c.generation_tokens, &c.has_generation_tokens);
  take("vllm:request_success_total", &c.request_success, &c.has_request_success);
  take("vllm:e2e_request_latency_seconds_count", &c.e2e_count, &c.has_e2e_count);
  take("vllm:time_to_first_token_seconds_count", &c.ttft_count, &c.has_ttft_count);
  if (!c.has_generation_tokens && !c.has_request_success && !c.has_e2e_count && !c.has_ttft_count)
    return Status::Error(
        "no vllm:generation_tokens_total, vllm:request_success_total or "
        "latency histograms in /metrics");
  return c;
}

std::string FirstModelId(std::string_view models_json) {
  auto j = nlohmann::json::parse(models_json, nullptr, false);
  if (j.is_object() && j.contains("data") && j["data"].is_array() && !j["data"].empty() &&
      j["data"][0].is_object() && NonEmptyString(j["data"][0], "id"))
    return j["data"][0]["id"].get<std::string>();
  return "";
}

RequestOutcome AnalyzeStream(const HttpCallResult& r) {
  RequestOutcome o;
  o.start_s = r.start_s;
  o.end_s = r.end_s;
  if (r.status != 0 && (r.status < 200 || r.status > 299)) {
    o.error = DescribeHttpFailure(r);
    return o;
  }
  if (r.status != 0 && !r.event_stream) {
    o.error = "HTTP " + std::to_string(r.status) + " with Content-Type '" + r.content_type +
              "', not text/event-stream";
    return o;
  }
  bool done = false;
  std::string stream_error;
  for (const SseEvent& ev : r.events) {
    if (ev.data == "[DONE]") {
      done = true;
      o.end_s = ev.t_s;  // the client knows the request is over here
      continue;
    }
    if (done) {
      stream_error = "events after data: [DONE]";
      break;
    }
    auto j = nlohmann::json::parse(ev.data, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object()) {
      stream_error = "malformed SSE event (not a JSON object): " + Shorten(ev.data);
      break;
    }
    if (auto e = j.find("error"); e != j.end() && !e->is_null()) {
      std::string m = e->is_object() && NonEmptyString(*e, "message")
                          ? (*e)["message"].get<std::string>()
                          : e->dump();
      stream_error = "error event in the stream: " + Shorten(m);
      break;
    }
    if (auto u = j.find("usage"); u != j.end() && u->is_object()) {
      if (auto p = u->find("prompt_tokens"); p != u->end() && p->is_number_integer())
        o.prompt_tokens = p->get<int>();
      if (auto p = u->find("completion_tokens"); p != u->end() && p->is_number_integer())
        o.completion_tokens = p->get<int>();
    }
    auto ch = j.find("choices");
    if (ch == j.end() || !ch->is_array() || ch->empty() || !(*ch)[0].is_object()) continue;
    const nlohmann::json& c = (*ch)[0];
    bool content = NonEmptyString(c, "text");  // /v1/completions
    if (auto d = c.find("delta"); d != c.end() && d->is_object())
      content = content || NonEmptyString(*d, "content") ||
                NonEmptyString(*d, "reasoning_content") || NonEmptyString(*d, "reasoning");
    if (content) o.content_s.push_back(ev.t_s);
    if (NonEmptyString(c, "finish_reason")) o.finish_reason = c["finish_reason"].get<std::string>();
  }
  if (!stream_error.empty())
    o.error = stream_error;
  else if (!r.error.ok())
    o.error = r.error.message();
  else if (!done)
    o.error = "the stream ended without data: [DONE]";
  else if (o.finish_reason.empty())
    o.error = "no finish_reason in the stream";
  else
    o.ok = true;
  return o;
}

std::string BenchPrompt(int index, int prompt_len_words, uint64_t seed) {
  static constexpr const char* kAsks[] = {"Tell me about",
                                          "Write a short poem about",
                                          "Explain in simple words",
                                          "Give three facts about",
                                          "Describe",
                                          "What is the history of",
                                          "Summarize what is known about",
                                          "Write a haiku about"};
  static constexpr const char* kTopics[] = {
      "the ocean",   "volcanoes",    "honey bees",     "the moon",
      "jazz music",  "bread baking", "glaciers",       "the printing press",
      "octopuses",   "rainbows",     "chess",          "the Silk Road",
      "coffee",      "lighthouses",  "deserts",        "owls",
      "bicycles",    "Roman roads",  "tea ceremonies", "thunderstorms",
      "coral reefs", "paper making", "the violin",     "comets",
      "maple trees", "windmills",    "penguins",       "the compass",
      "clouds",      "salt",         "origami",        "trains"};
  static constexpr const char* kFiller[] = {
      "river",  "stone",  "garden", "window",  "silver", "morning", "paper",  "harbor",
      "forest", "candle", "market", "bridge",  "winter", "lantern", "meadow", "copper",
      "signal", "valley", "thread", "orchard", "engine", "feather", "island", "mirror",
      "pocket", "ribbon", "shadow", "timber",  "velvet", "wander",  "yellow", "zephyr"};
  constexpr int kAsksN = int(std::size(kAsks)), kTopicsN = int(std::size(kTopics));
  const int round = index / (kAsksN * kTopicsN);
  std::string s = std::string(kAsks[index % kAsksN]) + " " + kTopics[(index / kAsksN) % kTopicsN];
  if (round > 0) s += " (part " + std::to_string(round + 1) + ")";
  s += ".";
  int words = 1 + int(std::count(s.begin(), s.end(), ' '));
  if (words < prompt_len_words) {
    s += " Context:";
    ++words;
    uint64_t state = seed + 0x9e37ull * uint64_t(index + 1);
    for (; words < prompt_len_words; ++words)
      s += std::string(" ") + kFiller[SplitMix64(state) % std::size(kFiller)];
  }
  return s;
}

namespace {

// The measured request number `index`: a distinct user message, fixed output length, greedy.
BenchRequest PromptRequest(const HttpBenchOptions& o, int index, int max_tokens) {
  BenchRequest r;
  r.user = BenchPrompt(index, o.prompt_len, o.seed);
  r.max_tokens = max_tokens;
  r.ignore_eos = true;  // fixed output lengths, as in bench engine
  r.temperature = 0;
  return r;
}

HttpTargetOptions TargetOptions(const HttpBenchOptions& o) {
  HttpTargetOptions t;
  t.url = o.url;
  t.api_key = o.api_key;
  t.model = o.model;
  t.completions = o.completions;
  t.scrape_metrics = false;  // --metrics scrapes around each level itself (CheckMetrics)
  t.connect_timeout_s = o.connect_timeout_s;
  t.request_timeout_s = o.request_timeout_s;
  return t;
}

// bench http's levels, as driver points on the HTTP target.
class HttpBench {
 public:
  HttpBench(LoadTarget& target, const HttpBenchOptions& o, HttpUrl url)
      : target_(target), o_(o), url_(std::move(url)) {}

  // C clients sending n requests (or for duration_s) of max_tokens; what each measured.
  std::vector<RequestRecord> Run(int C, int n, double duration_s, int max_tokens,
                                 BenchPoint* point = nullptr) {
    PointPlan plan;
    plan.label = "c=" + std::to_string(C);
    plan.concurrency = C;
    plan.num_prompts = n;
    plan.duration_s = duration_s;
    plan.make_request = [this, max_tokens](int i) { return PromptRequest(o_, i, max_tokens); };
    plan.first_request = next_prompt_;
    plan.unique_prompts = false;  // BenchPrompt numbers them already
    plan.give_up_s = o_.request_timeout_s + kGiveUpSlackS;
    std::vector<RequestRecord> records;
    BenchPoint p = RunPoint(target_, plan, nullptr, &records);
    next_prompt_ += int(records.size());
    if (point) *point = std::move(p);
    return records;
  }

  HttpBenchRun Level(int C) {
    const int n = o_.duration_s > 0 ? 0 : o_.num_prompts > 0 ? o_.num_prompts : std::max(4 * C, 8);
    Result<ServerCounters> before = Status::Error("not scraped");
    if (o_.metrics) before = Scrape();
    BenchPoint p;
    const std::vector<RequestRecord> recs = Run(C, n, o_.duration_s, o_.output_len, &p);
    HttpBenchRun run;
    static_cast<BenchPoint&>(run) = p;
    run.concurrency = C;
    for (const RequestRecord& r : recs)  // their content events were counted as tokens
      if (r.ok && r.output_tokens < 0) ++run.usage_missing;
    if (o_.metrics) run.metrics = CheckMetrics(before, run.output_tokens, p.successes);
    return run;
  }

  Result<ServerCounters> Scrape() {
    HttpClientOptions opts;
    opts.connect_timeout_s = o_.connect_timeout_s;
    opts.total_timeout_s = std::min(o_.request_timeout_s, kScrapeTimeoutS);
    if (!o_.api_key.empty()) opts.headers.push_back({"Authorization", "Bearer " + o_.api_key});
    HttpCallRequest req;
    req.method = "GET";
    req.target = url_.base_path + "/metrics";
    HttpCallResult r = HttpCall(url_, opts, std::move(req));
    if (std::string f = DescribeHttpFailure(r); !f.empty())
      return Status::Error("GET /metrics: " + f);
    return ParseServerCounters(r.body);
  }

  MetricsCheck CheckMetrics(const Result<ServerCounters>& before, int64_t tokens,
                            int64_t finished) {
    MetricsCheck m;
    m.client_tokens = tokens;
    m.client_finished = finished;
    if (!before.ok()) {
      m.error = before.message();
      return m;
    }
    for (int attempt = 0;; ++attempt) {
      Result<ServerCounters> after = Scrape();
      if (!after.ok()) {
        m.error = after.message();
        return m;
      }
      CompareCounters(*before, *after, &m);
      if ((m.tokens_match && m.count_match) || attempt >= kScrapeRetries) return m;
      std::this_thread::sleep_for(kScrapeRetryDelay);
    }
  }

 private:
  // after - before into m.delta, and whether it matches what the clients saw.
  static void CompareCounters(const ServerCounters& before, const ServerCounters& after,
                              MetricsCheck* m) {
    ServerCounters& d = m->delta;
    d = after;
    d.generation_tokens -= before.generation_tokens;
    d.request_success -= before.request_success;
    d.e2e_count -= before.e2e_count;
    d.ttft_count -= before.ttft_count;
    m->ok = true;
    m->tokens_match = d.has_generation_tokens && d.generation_tokens == double(m->client_tokens);
    const std::pair<bool, double> counts[] = {{d.has_request_success, d.request_success},
                                              {d.has_e2e_count, d.e2e_count},
                                              {d.has_ttft_count, d.ttft_count}};
    bool any = false, all = true;
    for (const auto& [has, v] : counts) {
      any = any || has;
      all = all && (!has || v == double(m->client_finished));
    }
    m->count_match = any && all;
  }

  LoadTarget& target_;
  const HttpBenchOptions& o_;
  const HttpUrl url_;
  int next_prompt_ = 0;
};

Status Validate(const HttpBenchOptions& o) {
  if (o.concurrency.empty()) return Status::Error("no concurrency given");
  for (int c : o.concurrency)
    if (c < 1 || c > 4096) return Status::Error("concurrency must be in 1..4096");
  if (o.num_prompts < 0) return Status::Error("num_prompts must be >= 0");
  if (o.duration_s < 0) return Status::Error("duration must be >= 0");
  if (o.duration_s > 0 && o.num_prompts > 0)
    return Status::Error("give either a number of prompts or a duration, not both");
  if (o.output_len < 1) return Status::Error("output_len must be >= 1");
  if (o.prompt_len < 0 || o.warmup < 0) return Status::Error("prompt_len and warmup must be >= 0");
  if (!(o.request_timeout_s > 0) || !(o.connect_timeout_s > 0))
    return Status::Error("timeouts must be > 0");
  if (o.server_pid < 0) return Status::Error("server_pid must be > 0");
  return Status::Ok();
}

// Unmeasured requests, one at a time; their failures are reported apart.
void Warmup(HttpBench& bench, const HttpBenchOptions& o, HttpBenchReport* rep) {
  std::set<std::string> seen;
  for (const RequestRecord& r :
       bench.Run(1, o.warmup, 0, std::min(o.output_len, kWarmupMaxTokens))) {
    if (r.ok) continue;
    ++rep->warmup_failures;
    if (seen.insert(r.error).second && seen.size() <= kMaxFailureMessages) {
      rep->warmup_messages.push_back(r.error);
      if (o.progress) std::fprintf(stderr, "warmup request failed: %s\n", r.error.c_str());
    }
  }
}

}  // namespace

Result<HttpBenchReport> RunHttpBench(const HttpBenchOptions& options) {
  BRISK_RETURN_IF_ERROR(Validate(options));
  BRISK_ASSIGN_OR_RETURN(HttpUrl url, ParseHttpUrl(options.url));
  std::unique_ptr<RssSampler> rss;
  if (options.server_pid > 0) {
    BRISK_RETURN_IF_ERROR(ReadRssMib(options.server_pid).status().WithContext("--server-pid"));
    rss = std::make_unique<RssSampler>(options.server_pid);
  }
  BRISK_ASSIGN_OR_RETURN(std::unique_ptr<LoadTarget> target,
                         CreateHttpTarget(TargetOptions(options)));
  const TargetInfo info = target->Info();
  HttpBenchReport rep;
  rep.brisk_version = BRISK_VERSION;
  rep.cpu = DescribeCpu();
  rep.url = url.ToString();
  rep.endpoint = options.completions ? "/v1/completions" : "/v1/chat/completions";
  rep.options = options;
  rep.waited_for_ready = info.waited_for_ready;
  rep.model = info.model;
  auto say = [&](const char* fmt, auto... args) {
    if (!options.progress) return;
    std::fprintf(stderr, fmt, args...);
    std::fflush(stderr);
  };
  if (rep.model.empty()) say("note: no model from GET /v1/models; requests name none\n");

  HttpBench bench(*target, options, url);
  if (options.warmup > 0) {
    say("warmup: %d requests\n", options.warmup);
    Warmup(bench, options, &rep);
  }
  if (rss) {
    rep.has_rss = true;
    rep.rss_after_warmup_mib = rss->Sample();
  }
  for (int c : options.concurrency) {
    if (options.duration_s > 0)
      say("concurrency %d: requests for %.1f s, %d output tokens each\n", c, options.duration_s,
          options.output_len);
    else
      say("concurrency %d: %d requests of %d output tokens\n", c,
          options.num_prompts > 0 ? options.num_prompts : std::max(4 * c, 8), options.output_len);
    rep.runs.push_back(bench.Level(c));
  }
  rep.server = target->Info().server;
  if (rss) {
    rep.rss_end_mib = rss->Sample();
    rep.rss_max_mib = rss->max();
  }
  return rep;
}

}  // namespace brisk
