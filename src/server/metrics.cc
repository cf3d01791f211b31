#include "server/metrics.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <limits>

#include "util/check.h"

namespace brisk::server {
namespace {

constexpr std::string_view kReasons[] = {"stop", "length", "abort", "error"};

double SteadySeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Length of the valid UTF-8 sequence at s[i], or 0 when it is invalid (overlong forms,
// surrogates and code points above U+10FFFF included).
size_t Utf8SequenceLength(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  if (c < 0x80) return 1;
  size_t n;
  uint32_t cp;
  if ((c & 0xE0) == 0xC0) {
    n = 2, cp = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    n = 3, cp = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    n = 4, cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b(i + k) & 0x3F);
  }
  static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

// Builds the exposition text: one family at a time, HELP and TYPE before its samples, and the
// model_name label first on every sample.
class Exposition {
 public:
  explicit Exposition(std::string_view model_name)
      : model_label_("model_name=\"" + EscapeLabelValue(model_name) + "\"") {
    out_.reserve(16 << 10);
  }

  void Family(std::string_view name, std::string_view type, std::string_view help) {
    // HELP text escapes only backslash and newline; ours are constants without either.
    out_.append("# HELP ").append(name).append(" ").append(help).append("\n");
    out_.append("# TYPE ").append(name).append(" ").append(type).append("\n");
  }

  // `extra`: further labels, already escaped (`le="0.5"`), or "".
  void Sample(std::string_view name, double v, std::string_view extra = {}) {
    out_.append(name).append("{").append(model_label_);
    if (!extra.empty()) out_.append(",").append(extra);
    out_.append("} ").append(FormatPromValue(v)).append("\n");
  }

  void Scalar(std::string_view name, std::string_view type, std::string_view help, double v) {
    Family(name, type, help);
    Sample(name, v);
  }

  void Hist(std::string_view name, std::string_view help, const Histogram& h) {
    Family(name, "histogram", help);
    const std::string bucket = std::string(name) + "_bucket";
    uint64_t cumulative = 0;
    for (size_t i = 0; i < h.bounds().size(); ++i) {
      cumulative += h.counts()[i];
      Sample(bucket, static_cast<double>(cumulative),
             "le=\"" + FormatPromValue(h.bounds()[i]) + "\"");
    }
    Sample(bucket, static_cast<double>(h.count()), "le=\"+Inf\"");
    Sample(std::string(name) + "_sum", h.sum());
    Sample(std::string(name) + "_count", static_cast<double>(h.count()));
  }

  std::string Take() { return std::move(out_); }

 private:
  std::string model_label_;
  std::string out_;
};

void Quantiles(Exposition& ex, std::string_view name, std::string_view help,
               std::vector<double> values) {
  std::sort(values.begin(), values.end());
  ex.Family(name, "gauge", help);
  static constexpr std::pair<double, std::string_view> kQuantiles[] = {
      {0.5, "0.5"}, {0.9, "0.9"}, {0.99, "0.99"}};
  for (const auto& [q, label] : kQuantiles) {
    ex.Sample(name, PercentileOfSorted(values, q), "quantile=\"" + std::string(label) + "\"");
  }
}

}  // namespace

std::string_view FinishedReasonLabel(FinishReason reason) {
  switch (reason) {
    case FinishReason::kStop:
      return "stop";
    case FinishReason::kLength:
      return "length";
    case FinishReason::kCancelled:
    case FinishReason::kDeadline:
      return "abort";
    case FinishReason::kError:
      return "error";
  }
  return "error";
}

Histogram::Histogram(std::vector<double> bounds) : bounds_(std::move(bounds)) {
  for (size_t i = 0; i < bounds_.size(); ++i) {
    BRISK_CHECK(std::isfinite(bounds_[i]));
    BRISK_CHECK(i == 0 || bounds_[i] > bounds_[i - 1]);
  }
  counts_.assign(bounds_.size() + 1, 0);
}

void Histogram::Observe(double v, uint64_t times) {
  if (!std::isfinite(v) || times == 0) return;
  v = std::max(v, 0.0);
  // le is inclusive: the first bound >= v.
  const size_t i = std::lower_bound(bounds_.begin(), bounds_.end(), v) - bounds_.begin();
  counts_[i] += times;
  sum_ += v * static_cast<double>(times);
  count_ += times;
}

std::vector<double> TtftBuckets() {
  return {0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1,  0.25,  0.5,   0.75,
          1.0,   2.5,   5.0,  7.5,  10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0};
}

std::vector<double> InterTokenBuckets() {
  return {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2,  0.3,  0.4, 0.5,
          0.75, 1.0,   2.5,  5.0,   7.5, 10.0, 20.0, 40.0, 80.0};
}

std::vector<double> RequestLatencyBuckets() {
  return {0.3,  0.5,  0.8,  1.0,  1.5,   2.0,   2.5,   5.0,   10.0,   15.0,  20.0,
          30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0};
}

std::vector<double> Buckets125(int64_t max_value) {
  std::vector<double> out;
  for (int64_t scale = 1; scale <= max_value && scale <= (int64_t{1} << 52); scale *= 10) {
    for (int64_t m : {1, 2, 5}) {
      if (m * scale > max_value) return out;
      out.push_back(static_cast<double>(m * scale));
    }
  }
  return out;
}

double PercentileOfSorted(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return std::numeric_limits<double>::quiet_NaN();
  const double rank = std::clamp(q, 0.0, 1.0) * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(rank));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - static_cast<double>(lo));
}

std::string FormatPromValue(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof(buf), v);  // shortest round-trip form
  std::string s(buf, r.ptr);
  // Whole numbers as "1.0", like the Python client vLLM uses, so le labels read the same.
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::string EscapeLabelValue(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const size_t n = Utf8SequenceLength(s, i);
    if (n == 0) {  // the format is UTF-8: a stray byte would make the whole scrape unparsable
      out += "\xEF\xBF\xBD";
      ++i;
      continue;
    }
    const char c = s[i];
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out.append(s.substr(i, n));
    }
    i += n;
  }
  return out;
}

ServerMetrics::ServerMetrics(MetricsOptions options)
    : options_(std::move(options)),
      ttft_(TtftBuckets()),
      itl_(InterTokenBuckets()),
      e2e_(RequestLatencyBuckets()),
      queue_(RequestLatencyBuckets()),
      prompt_len_(Buckets125(std::max(options_.max_model_len, 1))),
      gen_len_(Buckets125(std::max(options_.max_model_len, 1))) {
  if (!options_.clock) options_.clock = SteadySeconds;
  for (std::string_view r : kReasons) success_.emplace(std::string(r), 0);
}

void ServerMetrics::OnRequestFinished(const FinishInfo& f, std::string_view finished_reason) {
  const Usage& u = f.usage;
  const RequestTimings& t = f.timings;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // Window entries are finite and >= 0 or NaN (absent), so percentiles never see Inf - Inf.
  const auto clean = [nan](double v) { return std::isfinite(v) ? std::max(v, 0.0) : nan; };
  const double ttft = u.completion_tokens > 0 ? clean(t.ttft_s) : nan;
  const double tpot = u.completion_tokens > 1
                          ? clean(t.decode_s / static_cast<double>(u.completion_tokens - 1))
                          : nan;
  auto known = std::find(std::begin(kReasons), std::end(kReasons), finished_reason);
  const std::string_view reason = known != std::end(kReasons) ? *known : "error";

  std::lock_guard<std::mutex> lock(mu_);
  prompt_tokens_ += std::max(u.prompt_tokens, 0);
  generation_tokens_ += std::max(u.completion_tokens, 0);
  ++finished_;
  ++success_.find(reason)->second;
  if (u.completion_tokens > 0) ttft_.Observe(t.ttft_s);
  e2e_.Observe(t.e2e_s);
  queue_.Observe(t.queued_s);
  prompt_len_.Observe(std::max(u.prompt_tokens, 0));
  gen_len_.Observe(std::max(u.completion_tokens, 0));

  const double now = options_.clock();
  window_.push_back({now, ttft, tpot});
  PruneLocked(now);
}

void ServerMetrics::OnTokens(int n, double itl_s) {
  if (n <= 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  itl_.Observe(itl_s, static_cast<uint64_t>(n));
}

void ServerMetrics::OnRequestRejected() {
  std::lock_guard<std::mutex> lock(mu_);
  ++rejected_;
}

void ServerMetrics::PruneLocked(double now) const {
  const double cutoff = now - options_.window_s;
  while (!window_.empty() && (window_.front().t <= cutoff ||
                              window_.size() > std::max<size_t>(options_.max_window_samples, 1))) {
    window_.pop_front();
  }
}

int64_t ServerMetrics::generation_tokens() const {
  std::lock_guard<std::mutex> lock(mu_);
  return generation_tokens_;
}

int64_t ServerMetrics::finished_requests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return finished_;
}

struct ServerMetrics::Snapshot {
  int64_t prompt_tokens = 0, generation_tokens = 0, rejected = 0;
  std::map<std::string, int64_t, std::less<>> success;
  Histogram ttft, itl, e2e, queue, prompt_len, gen_len;
  std::vector<double> recent_ttfts, recent_tpots;
  size_t recent = 0;
};

// Copied under the lock, formatted outside it: recording threads never wait on a scrape's
// string building or sorting.
ServerMetrics::Snapshot ServerMetrics::TakeSnapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  Snapshot s{prompt_tokens_, generation_tokens_, rejected_, success_, ttft_, itl_, e2e_,
             queue_,         prompt_len_,        gen_len_,  {},       {},    0};
  PruneLocked(options_.clock());
  s.recent = window_.size();
  s.recent_ttfts.reserve(window_.size());
  s.recent_tpots.reserve(window_.size());
  for (const WindowSample& w : window_) {
    if (!std::isnan(w.ttft)) s.recent_ttfts.push_back(w.ttft);
    if (!std::isnan(w.tpot)) s.recent_tpots.push_back(w.tpot);
  }
  return s;
}

namespace {

// vLLM's engine gauges and counters, from the engine's stats.
void RenderEngineFamilies(Exposition& ex, const EngineStats& stats) {
  const double kv = std::isfinite(stats.kv_usage) ? std::clamp(stats.kv_usage, 0.0, 1.0) : 0.0;
  ex.Scalar("vllm:num_requests_running", "gauge", "Number of requests in model execution batches.",
            stats.running);
  ex.Scalar("vllm:num_requests_waiting", "gauge", "Number of requests waiting to be processed.",
            stats.waiting);
  ex.Scalar("vllm:kv_cache_usage_perc", "gauge", "KV-cache usage. 1 means 100 percent usage.", kv);
  ex.Scalar("vllm:prefix_cache_queries_total", "counter",
            "Prefix cache queries, in terms of number of queried tokens.",
            static_cast<double>(stats.prefix_queried_tokens));
  ex.Scalar("vllm:prefix_cache_hits_total", "counter",
            "Prefix cache hits, in terms of number of cached tokens.",
            static_cast<double>(stats.prefix_hit_tokens));
  ex.Scalar("vllm:num_preemptions_total", "counter",
            "Cumulative number of preemption from the engine.",
            static_cast<double>(stats.preemptions));
}

// vLLM's info metric for its CacheConfig: a gauge fixed at 1 whose labels carry the settings
// (vLLM adds engine="0" for its first engine core). Absent until the model is loaded, so no
// reader takes a block count of 0 for the real one.
void RenderCacheConfigInfo(Exposition& ex, const KvCacheInfo& cache) {
  if (cache.block_size <= 0) return;
  ex.Family("vllm:cache_config_info", "gauge", "Information of the LLMEngine CacheConfig");
  // Python's str() of the values, as vLLM renders them: booleans are True / False.
  ex.Sample("vllm:cache_config_info", 1,
            "block_size=\"" + std::to_string(cache.block_size) + "\",cache_dtype=\"" +
                EscapeLabelValue(cache.cache_dtype) + "\",enable_prefix_caching=\"" +
                (cache.prefix_caching ? "True" : "False") + "\",engine=\"0\",num_gpu_blocks=\"" +
                std::to_string(cache.num_blocks) + "\"");
}

// vLLM's request families, from finished requests.
void RenderRequestFamilies(Exposition& ex, const ServerMetrics::Snapshot& s) {
  ex.Scalar("vllm:prompt_tokens_total", "counter",
            "Number of prefill tokens processed (finished requests, cached tokens included).",
            static_cast<double>(s.prompt_tokens));
  ex.Scalar("vllm:generation_tokens_total", "counter",
            "Number of generation tokens processed (finished requests).",
            static_cast<double>(s.generation_tokens));
  ex.Family("vllm:request_success_total", "counter", "Count of successfully processed requests.");
  for (const auto& [reason, n] : s.success) {
    ex.Sample("vllm:request_success_total", static_cast<double>(n),
              "finished_reason=\"" + EscapeLabelValue(reason) + "\"");
  }
  ex.Hist("vllm:request_prompt_tokens", "Number of prefill tokens processed.", s.prompt_len);
  ex.Hist("vllm:request_generation_tokens", "Number of generation tokens processed.", s.gen_len);
  ex.Hist("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.",
          s.ttft);
  ex.Hist("vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.",
          s.itl);
  // vLLM still exports the old name beside the new one, with the same observations.
  ex.Hist("vllm:time_per_output_token_seconds",
          "Histogram of time per output token in seconds. "
          "DEPRECATED: Use vllm:inter_token_latency_seconds instead.",
          s.itl);
  ex.Hist("vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.",
          s.e2e);
  ex.Hist("vllm:request_queue_time_seconds",
          "Histogram of time spent in WAITING phase for request.", s.queue);
}

// brisk's own engine-step families.
void RenderStepFamilies(Exposition& ex, const EngineStats& stats) {
  ex.Scalar("brisk:max_num_seqs", "gauge", "Current cap on sequences per engine step.",
            stats.max_num_seqs);
  ex.Scalar("brisk:max_num_batched_tokens", "gauge", "Current token budget per engine step.",
            stats.max_num_batched_tokens);
  ex.Scalar("brisk:batch_size", "gauge", "Sequences in the last engine step (0 while idle).",
            stats.last_step_seqs);
  ex.Scalar("brisk:step_tokens", "gauge", "Tokens in the last engine step (0 while idle).",
            stats.last_step_tokens);
  ex.Scalar("brisk:step_seconds", "gauge", "Duration of the last engine step in seconds.",
            stats.last_step_s);
  ex.Scalar("brisk:engine_steps_total", "counter", "Engine steps run.",
            static_cast<double>(stats.steps));
  ex.Scalar("brisk:engine_step_seqs_total", "counter",
            "Sequences summed over engine steps (divided by the steps: the mean batch size).",
            static_cast<double>(stats.step_seqs_total));
  ex.Scalar("brisk:engine_step_tokens_total", "counter",
            "Tokens (prefill and decode) summed over engine steps.",
            static_cast<double>(stats.step_tokens_total));
  ex.Scalar("brisk:engine_generation_tokens_total", "counter",
            "Tokens sampled by the engine, counted per step (requests still running included).",
            static_cast<double>(stats.generation_tokens));
  ex.Scalar("brisk:engine_prompt_tokens_computed_total", "counter",
            "Prompt tokens the engine computed (prefix-cache hits and shared prefills excluded).",
            static_cast<double>(stats.prompt_tokens));
  ex.Scalar("brisk:kv_events_dropped_total", "counter",
            "KV-cache event batches dropped because the publisher's queue was full (--kv-events).",
            static_cast<double>(stats.kv_events_dropped));
}

// brisk's own request families: refusals and the recent window's exact quantiles.
void RenderRecentFamilies(Exposition& ex, ServerMetrics::Snapshot& s) {
  ex.Scalar("brisk:requests_rejected_total", "counter",
            "Requests refused before running (waiting queue full).",
            static_cast<double>(s.rejected));
  ex.Scalar("brisk:recent_requests", "gauge", "Requests finished in the recent window.",
            static_cast<double>(s.recent));
  Quantiles(ex, "brisk:recent_ttft_seconds",
            "Time to first token over the requests finished in the recent window (exact).",
            std::move(s.recent_ttfts));
  Quantiles(ex, "brisk:recent_tpot_seconds",
            "Time per output token (decode time / (tokens - 1)) over the requests finished in the "
            "recent window (exact).",
            std::move(s.recent_tpots));
}

// The transport's connection admission and the request log (SideCounters).
void RenderSideFamilies(Exposition& ex, const SideCounters& side) {
  if (const auto& c = side.connections) {
    ex.Scalar("brisk:http_connections_open", "gauge",
              "HTTP connections open (admitted, not yet closed or evicted).",
              static_cast<double>(c->open));
    ex.Scalar("brisk:http_connections_refused_total", "counter",
              "HTTP connections answered 503 and closed: over --max-connections or "
              "--max-connections-per-client with every slot busy.",
              static_cast<double>(c->refused_total));
    ex.Scalar("brisk:http_connections_evicted_total", "counter",
              "Idle HTTP connections (no request header yet, or keep-alive) closed to make room "
              "for new ones at a connection limit.",
              static_cast<double>(c->evicted_total));
  }
  if (const auto& l = side.request_log) {
    ex.Scalar("brisk:request_log_lines_written_total", "counter", "Lines written to --request-log.",
              static_cast<double>(l->lines_written));
    ex.Scalar("brisk:request_log_lines_dropped_total", "counter",
              "Request-log lines dropped because the file did not keep up (its queue was full).",
              static_cast<double>(l->lines_dropped));
    ex.Scalar("brisk:request_log_write_errors_total", "counter",
              "Request-log lines lost to failed writes (disk full, I/O error).",
              static_cast<double>(l->write_errors));
  }
}

}  // namespace

std::string ServerMetrics::Render(const EngineStats& stats, std::string_view model_name,
                                  const KvCacheInfo& cache, const SideCounters& side) const {
  Snapshot s = TakeSnapshot();
  Exposition ex(model_name);
  RenderEngineFamilies(ex, stats);
  RenderCacheConfigInfo(ex, cache);
  RenderRequestFamilies(ex, s);
  RenderStepFamilies(ex, stats);
  RenderRecentFamilies(ex, s);
  RenderSideFamilies(ex, side);
  return ex.Take();
}

}  // namespace brisk::server
