#include "server/metrics.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace brisk::server {
namespace {

// ---- A small Prometheus text-format (0.0.4) parser, strict about what brisk promises ----------

struct PromSample {
  std::string name;
  std::map<std::string, std::string> labels;  // unescaped
  double value = 0;
};

struct PromFamily {
  std::string help, type;
  std::vector<PromSample> samples;
};

struct Parsed {
  std::map<std::string, PromFamily> families;
  std::vector<std::string> order;  // family names as they appeared
  std::string error;               // first problem found, "" when valid
};

// [a-zA-Z_:][a-zA-Z0-9_:]*
bool ValidName(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ':';
  });
}

std::optional<double> ParseValue(const std::string& s) {
  if (s == "+Inf") return INFINITY;
  if (s == "-Inf") return -INFINITY;
  if (s == "NaN") return NAN;
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) return std::nullopt;
  return v;
}

// The family a sample belongs to: histograms own name_bucket/_sum/_count.
std::string FamilyOf(const std::string& sample, const std::map<std::string, PromFamily>& fams) {
  for (const char* suffix : {"_bucket", "_sum", "_count"}) {
    const std::string s(suffix);
    if (sample.size() > s.size() && sample.compare(sample.size() - s.size(), s.size(), s) == 0) {
      const std::string base = sample.substr(0, sample.size() - s.size());
      auto it = fams.find(base);
      if (it != fams.end() && it->second.type == "histogram") return base;
    }
  }
  return sample;
}

// Parses `name{k="v",...} value` into `s`: "" when fine, else the problem.
std::string ParseSample(const std::string& line, PromSample& s) {
  const size_t brace = line.find('{');
  if (brace == std::string::npos) return "sample without labels (model_name is required)";
  s.name = line.substr(0, brace);
  if (!ValidName(s.name)) return "bad metric name";
  size_t i = brace + 1;
  while (i < line.size() && line[i] != '}') {
    const size_t eq = line.find('=', i);
    if (eq == std::string::npos || eq + 1 >= line.size() || line[eq + 1] != '"') return "bad label";
    const std::string key = line.substr(i, eq - i);
    if (!ValidName(key) || key.find(':') != std::string::npos) return "bad label name";
    std::string value;
    for (i = eq + 2; i < line.size() && line[i] != '"'; ++i) {
      if (line[i] != '\\') {
        value += line[i];
        continue;
      }
      const char e = ++i < line.size() ? line[i] : '?';
      if (e != '\\' && e != '"' && e != 'n') return "bad escape in label value";
      value += e == 'n' ? '\n' : e;
    }
    if (i >= line.size()) return "unterminated label value";
    if (!s.labels.emplace(key, value).second) return "repeated label";
    if (++i < line.size() && line[i] == ',') ++i;
  }
  if (i + 2 > line.size() || line[i + 1] != ' ') return "bad label set";
  const auto v = ParseValue(line.substr(i + 2));
  if (!v) return "bad value";
  s.value = *v;
  return "";
}

Parsed Parse(const std::string& text) {
  Parsed p;
  if (text.empty() || text.back() != '\n') p.error = "exposition must end with a newline";
  std::set<std::string> with_samples;
  static const std::set<std::string> kTypes = {"counter", "gauge", "histogram", "summary",
                                               "untyped"};
  // One line: "" when it is fine, else the problem.
  auto line_error = [&](const std::string& line) -> std::string {
    if (line.empty()) return "empty line";
    if (line[0] == '#') {
      std::istringstream ls(line);
      std::string hash, kind, name, rest;
      ls >> hash >> kind >> name;
      std::getline(ls, rest);
      if (!rest.empty() && rest[0] == ' ') rest.erase(0, 1);
      if (hash != "#" || (kind != "HELP" && kind != "TYPE") || !ValidName(name)) return "comment";
      if (with_samples.count(name)) return "HELP/TYPE after samples";
      PromFamily& f = p.families[name];
      if (f.help.empty() && f.type.empty()) p.order.push_back(name);
      if (kind == "HELP" && (!f.help.empty() || !f.type.empty() || rest.empty())) return "HELP";
      if (kind == "TYPE" && (!f.type.empty() || !kTypes.count(rest))) return "TYPE";
      (kind == "HELP" ? f.help : f.type) = rest;
      return "";
    }
    PromSample s;
    if (std::string e = ParseSample(line, s); !e.empty()) return e;
    const std::string fam = FamilyOf(s.name, p.families);
    auto it = p.families.find(fam);
    if (it == p.families.end() || it->second.help.empty() || it->second.type.empty()) {
      return "sample before its HELP and TYPE";
    }
    if (p.order.back() != fam) return "family samples not contiguous";
    with_samples.insert(fam);
    it->second.samples.push_back(std::move(s));
    return "";
  };
  std::istringstream in(text);
  size_t no = 0;
  for (std::string line; std::getline(in, line);) {
    const std::string e = line_error(line);
    ++no;
    if (!e.empty() && p.error.empty())
      p.error = "line " + std::to_string(no) + ": " + e + ": " + line;
  }
  return p;
}

// Checks every histogram family: le ascending and ending at +Inf, counts cumulative, +Inf bucket
// == _count, one _sum and one _count. Returns "" or the problem.
std::string CheckHistograms(const Parsed& p) {
  for (const auto& [name, f] : p.families) {
    if (f.type != "histogram") continue;
    std::vector<std::pair<double, double>> buckets;
    std::optional<double> sum, count;
    for (const PromSample& s : f.samples) {
      if (s.name == name + "_bucket") {
        if (!s.labels.count("le")) return name + ": bucket without le";
        const auto le = ParseValue(s.labels.at("le"));
        if (!le) return name + ": bad le " + s.labels.at("le");
        buckets.emplace_back(*le, s.value);
      } else if (s.name == name + "_sum") {
        if (sum) return name + ": two _sum";
        sum = s.value;
      } else if (s.name == name + "_count") {
        if (count) return name + ": two _count";
        count = s.value;
      } else {
        return name + ": stray sample " + s.name;
      }
    }
    if (buckets.empty() || !sum || !count) return name + ": incomplete";
    if (!std::isinf(buckets.back().first)) return name + ": last bucket is not +Inf";
    for (size_t i = 1; i < buckets.size(); ++i) {
      if (!(buckets[i].first > buckets[i - 1].first)) return name + ": le not ascending";
      if (buckets[i].second < buckets[i - 1].second) return name + ": buckets not cumulative";
    }
    if (buckets.back().second != *count) return name + ": +Inf bucket != _count";
  }
  return "";
}

// The value of `sample` with (at least) these labels; NaN and a test failure when there is none.
double Value(const Parsed& p, const std::string& sample,
             const std::map<std::string, std::string>& labels = {}) {
  const auto fam = p.families.find(FamilyOf(sample, p.families));
  if (fam != p.families.end()) {
    for (const PromSample& s : fam->second.samples) {
      bool match = s.name == sample;
      for (const auto& [k, v] : labels) match = match && s.labels.count(k) && s.labels.at(k) == v;
      if (match) return s.value;
    }
  }
  ADD_FAILURE() << "no sample " << sample;
  return NAN;
}

std::vector<std::string> LeLabels(const Parsed& p, const std::string& hist) {
  std::vector<std::string> out;
  for (const PromSample& s : p.families.at(hist).samples) {
    if (s.name == hist + "_bucket") out.push_back(s.labels.at("le"));
  }
  return out;
}

FinishInfo Finished(int prompt, int completion, double queued, double ttft, double decode,
                    double e2e) {
  FinishInfo f;
  f.usage = {.prompt_tokens = prompt, .completion_tokens = completion};
  f.timings = {.queued_s = queued, .ttft_s = ttft, .e2e_s = e2e, .decode_s = decode};
  return f;
}

// Tests move `now` by hand: the window needs no sleeps.
struct FakeClock {
  double now = 1000;
  std::function<double()> fn() {
    return [this] { return now; };
  }
};

// ---- The parser itself must reject what it should, or the checks below prove nothing ---------

TEST(PromParser, RejectsMalformedExpositions) {
  const std::string head = "# HELP m h\n# TYPE m gauge\n";
  EXPECT_EQ(Parse(head + "m{model_name=\"x\"} 1\n").error, "");
  EXPECT_NE(Parse("m{model_name=\"x\"} 1\n").error, "");                     // no HELP/TYPE
  EXPECT_NE(Parse(head + "m{model_name=\"x\"} one\n").error, "");            // bad value
  EXPECT_NE(Parse(head + "m{model_name=\"x} 1\n").error, "");                // unclosed quote
  EXPECT_NE(Parse(head + "m{model_name=\"a\\tb\"} 1\n").error, "");          // bad escape
  EXPECT_NE(Parse(head + "m 1\n").error, "");                                // no labels
  EXPECT_NE(Parse(head + "m{model_name=\"x\"} 1").error, "");                // no final newline
  EXPECT_NE(Parse(head + "m{model_name=\"x\"} 1\n# HELP m h\n").error, "");  // HELP after
  const Parsed bad_hist = Parse(
      "# HELP h h\n# TYPE h histogram\nh_bucket{model_name=\"x\",le=\"1.0\"} 2\n"
      "h_bucket{model_name=\"x\",le=\"+Inf\"} 1\nh_sum{model_name=\"x\"} 1\n"
      "h_count{model_name=\"x\"} 1\n");
  EXPECT_EQ(bad_hist.error, "");
  EXPECT_NE(CheckHistograms(bad_hist), "");  // not cumulative
}

TEST(Metrics, FormatsValuesLikeThePythonClient) {
  EXPECT_EQ(FormatPromValue(1), "1.0");
  EXPECT_EQ(FormatPromValue(0.25), "0.25");
  EXPECT_EQ(FormatPromValue(0.001), "0.001");
  EXPECT_EQ(FormatPromValue(2560), "2560.0");
  EXPECT_EQ(FormatPromValue(0), "0.0");
  EXPECT_EQ(FormatPromValue(NAN), "NaN");
  EXPECT_EQ(FormatPromValue(INFINITY), "+Inf");
  EXPECT_EQ(FormatPromValue(-INFINITY), "-Inf");
  EXPECT_EQ(std::strtod(FormatPromValue(0.1 + 0.2).c_str(), nullptr), 0.1 + 0.2);  // round trip
}

TEST(Metrics, Buckets125) {
  EXPECT_EQ(Buckets125(100), (std::vector<double>{1, 2, 5, 10, 20, 50, 100}));
  EXPECT_EQ(Buckets125(4096),
            (std::vector<double>{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000}));
  EXPECT_EQ(Buckets125(1), (std::vector<double>{1}));
}

TEST(Metrics, PercentileInterpolatesLikeNumpy) {
  const std::vector<double> v = {1, 2, 3, 4};
  EXPECT_DOUBLE_EQ(PercentileOfSorted(v, 0.5), 2.5);  // numpy.percentile([1,2,3,4], 50)
  EXPECT_DOUBLE_EQ(PercentileOfSorted(v, 0.9), 3.7);  // 90 -> 3.7
  EXPECT_DOUBLE_EQ(PercentileOfSorted(v, 0.99), 3.97);
  EXPECT_DOUBLE_EQ(PercentileOfSorted({7}, 0.99), 7);
  EXPECT_TRUE(std::isnan(PercentileOfSorted({}, 0.5)));
}

TEST(Metrics, FinishedReasonLabelsAreVllms) {
  EXPECT_EQ(FinishedReasonLabel(FinishReason::kStop), "stop");
  EXPECT_EQ(FinishedReasonLabel(FinishReason::kLength), "length");
  EXPECT_EQ(FinishedReasonLabel(FinishReason::kCancelled), "abort");
  EXPECT_EQ(FinishedReasonLabel(FinishReason::kDeadline), "abort");
  EXPECT_EQ(FinishedReasonLabel(FinishReason::kError), "error");
}

TEST(Metrics, HistogramBucketsAreInclusive) {
  Histogram h({1, 2});
  h.Observe(1);  // le="1" includes 1
  h.Observe(1.5);
  h.Observe(3);    // overflow
  h.Observe(-1);   // counts as 0
  h.Observe(NAN);  // dropped
  h.Observe(INFINITY);
  EXPECT_EQ(h.counts(), (std::vector<uint64_t>{2, 1, 1}));
  EXPECT_EQ(h.count(), 4u);
  EXPECT_DOUBLE_EQ(h.sum(), 5.5);
}

TEST(Metrics, EmptyExpositionIsValidAndComplete) {
  FakeClock clock;
  ServerMetrics m({.max_model_len = 1000, .clock = clock.fn()});
  EngineStats st;
  st.running = 3;
  st.waiting = 2;
  st.kv_usage = 0.375;
  st.max_num_seqs = 12;
  st.last_step_seqs = 7;
  st.last_step_tokens = 130;
  st.last_step_s = 0.042;
  st.steps = 40;
  st.step_seqs_total = 250;
  st.step_tokens_total = 3100;
  st.prefix_queried_tokens = 500;
  st.prefix_hit_tokens = 320;
  st.preemptions = 4;
  st.kv_events_dropped = 6;
  const Parsed p = Parse(m.Render(st, "qwen"));
  ASSERT_EQ(p.error, "");
  EXPECT_EQ(CheckHistograms(p), "");

  const std::map<std::string, std::string> types = {
      {"vllm:num_requests_running", "gauge"},
      {"vllm:num_requests_waiting", "gauge"},
      {"vllm:kv_cache_usage_perc", "gauge"},
      {"vllm:prompt_tokens_total", "counter"},
      {"vllm:generation_tokens_total", "counter"},
      {"vllm:request_success_total", "counter"},
      {"vllm:num_preemptions_total", "counter"},
      {"vllm:prefix_cache_queries_total", "counter"},
      {"vllm:prefix_cache_hits_total", "counter"},
      {"vllm:time_to_first_token_seconds", "histogram"},
      {"vllm:inter_token_latency_seconds", "histogram"},
      {"vllm:time_per_output_token_seconds", "histogram"},
      {"vllm:e2e_request_latency_seconds", "histogram"},
      {"vllm:request_queue_time_seconds", "histogram"},
      {"vllm:request_prompt_tokens", "histogram"},
      {"vllm:request_generation_tokens", "histogram"},
      {"brisk:max_num_seqs", "gauge"},
      {"brisk:batch_size", "gauge"},
      {"brisk:step_tokens", "gauge"},
      {"brisk:step_seconds", "gauge"},
      {"brisk:engine_steps_total", "counter"},
      {"brisk:engine_step_seqs_total", "counter"},
      {"brisk:engine_step_tokens_total", "counter"},
      {"brisk:kv_events_dropped_total", "counter"},
      {"brisk:requests_rejected_total", "counter"},
      {"brisk:recent_ttft_seconds", "gauge"},
      {"brisk:recent_tpot_seconds", "gauge"}};
  for (const auto& [name, type] : types) {
    ASSERT_TRUE(p.families.count(name)) << name;
    EXPECT_EQ(p.families.at(name).type, type) << name;
  }
  for (const auto& [name, f] : p.families) {
    EXPECT_FALSE(f.samples.empty()) << name;
    for (const PromSample& s : f.samples) EXPECT_EQ(s.labels.at("model_name"), "qwen") << s.name;
  }
  EXPECT_EQ(Value(p, "vllm:num_requests_running"), 3);
  EXPECT_EQ(Value(p, "vllm:num_requests_waiting"), 2);
  EXPECT_EQ(Value(p, "vllm:kv_cache_usage_perc"), 0.375);
  EXPECT_EQ(Value(p, "vllm:prefix_cache_queries_total"), 500);
  EXPECT_EQ(Value(p, "vllm:prefix_cache_hits_total"), 320);
  EXPECT_EQ(Value(p, "vllm:num_preemptions_total"), 4);
  EXPECT_EQ(Value(p, "brisk:max_num_seqs"), 12);
  EXPECT_EQ(Value(p, "brisk:batch_size"), 7);
  EXPECT_EQ(Value(p, "brisk:step_tokens"), 130);
  EXPECT_EQ(Value(p, "brisk:step_seconds"), 0.042);
  EXPECT_EQ(Value(p, "brisk:engine_steps_total"), 40);
  EXPECT_EQ(Value(p, "brisk:engine_step_seqs_total"), 250);
  EXPECT_EQ(Value(p, "brisk:engine_step_tokens_total"), 3100);
  EXPECT_EQ(Value(p, "brisk:kv_events_dropped_total"), 6);
  // All four finished_reason series exist from the start, as vLLM pre-creates them.
  for (const char* r : {"stop", "length", "abort", "error"}) {
    EXPECT_EQ(Value(p, "vllm:request_success_total", {{"finished_reason", r}}), 0) << r;
  }
  EXPECT_EQ(p.families.at("vllm:request_success_total").samples.size(), 4u);
  for (const char* q : {"0.5", "0.9", "0.99"}) {
    EXPECT_TRUE(std::isnan(Value(p, "brisk:recent_ttft_seconds", {{"quantile", q}}))) << q;
    EXPECT_TRUE(std::isnan(Value(p, "brisk:recent_tpot_seconds", {{"quantile", q}}))) << q;
  }
}

// The Gateway API Inference Extension reads the block_size and num_gpu_blocks labels of
// vllm:cache_config_info (an info gauge fixed at 1, as vLLM renders its CacheConfig).
TEST(Metrics, CacheConfigInfoCarriesTheLabelsGaieReads) {
  ServerMetrics m({.max_model_len = 1000, .clock = {}});
  const KvCacheInfo cache{
      .block_size = 16, .num_blocks = 512, .cache_dtype = "f16", .prefix_caching = true};
  const Parsed p = Parse(m.Render({}, "qwen", cache));
  ASSERT_EQ(p.error, "");
  ASSERT_TRUE(p.families.count("vllm:cache_config_info"));
  const PromFamily& f = p.families.at("vllm:cache_config_info");
  EXPECT_EQ(f.type, "gauge");
  ASSERT_EQ(f.samples.size(), 1u);
  EXPECT_EQ(f.samples[0].value, 1);
  EXPECT_EQ(f.samples[0].labels,
            (std::map<std::string, std::string>{{"model_name", "qwen"},
                                                {"block_size", "16"},
                                                {"num_gpu_blocks", "512"},
                                                {"cache_dtype", "f16"},
                                                {"enable_prefix_caching", "True"},
                                                {"engine", "0"}}));
  // A label value from outside stays one valid label.
  const Parsed odd = Parse(m.Render({}, "qwen", {.block_size = 1, .cache_dtype = "a\"b\n"}));
  ASSERT_EQ(odd.error, "");
  EXPECT_EQ(odd.families.at("vllm:cache_config_info").samples[0].labels.at("cache_dtype"),
            "a\"b\n");
  EXPECT_EQ(odd.families.at("vllm:cache_config_info").samples[0].labels.at("enable_prefix_caching"),
            "False");
}

TEST(Metrics, NoCacheConfigInfoBeforeTheModelIsLoaded) {
  // A reader must not take 0 blocks for the real count while the model loads.
  ServerMetrics m({.max_model_len = 1000, .clock = {}});
  const Parsed p = Parse(m.Render({}, "qwen"));
  ASSERT_EQ(p.error, "");
  EXPECT_EQ(p.families.count("vllm:cache_config_info"), 0u);
}

TEST(Metrics, UsesVllmBucketBoundaries) {
  ServerMetrics m({.max_model_len = 4096, .clock = {}});
  const Parsed p = Parse(m.Render({}, "m"));
  ASSERT_EQ(p.error, "");
  EXPECT_EQ(LeLabels(p, "vllm:time_to_first_token_seconds"),
            (std::vector<std::string>{"0.001", "0.005", "0.01",  "0.02",   "0.04", "0.06",
                                      "0.08",  "0.1",   "0.25",  "0.5",    "0.75", "1.0",
                                      "2.5",   "5.0",   "7.5",   "10.0",   "20.0", "40.0",
                                      "80.0",  "160.0", "640.0", "2560.0", "+Inf"}));
  const std::vector<std::string> itl = {"0.01", "0.025", "0.05", "0.075", "0.1",  "0.15", "0.2",
                                        "0.3",  "0.4",   "0.5",  "0.75",  "1.0",  "2.5",  "5.0",
                                        "7.5",  "10.0",  "20.0", "40.0",  "80.0", "+Inf"};
  EXPECT_EQ(LeLabels(p, "vllm:inter_token_latency_seconds"), itl);
  EXPECT_EQ(LeLabels(p, "vllm:time_per_output_token_seconds"), itl);
  const std::vector<std::string> latency = {"0.3",   "0.5",    "0.8",    "1.0",   "1.5",   "2.0",
                                            "2.5",   "5.0",    "10.0",   "15.0",  "20.0",  "30.0",
                                            "40.0",  "50.0",   "60.0",   "120.0", "240.0", "480.0",
                                            "960.0", "1920.0", "7680.0", "+Inf"};
  EXPECT_EQ(LeLabels(p, "vllm:e2e_request_latency_seconds"), latency);
  EXPECT_EQ(LeLabels(p, "vllm:request_queue_time_seconds"), latency);
  EXPECT_EQ(LeLabels(p, "vllm:request_prompt_tokens"),
            (std::vector<std::string>{"1.0", "2.0", "5.0", "10.0", "20.0", "50.0", "100.0", "200.0",
                                      "500.0", "1000.0", "2000.0", "+Inf"}));
}

TEST(Metrics, CountsAKnownSequenceOfEvents) {
  FakeClock clock;
  ServerMetrics m({.max_model_len = 100, .clock = clock.fn()});
  // A: 10 prompt, 5 tokens, stop.   B: 20 prompt, 50 tokens, length.
  // C: 7 prompt, aborted before its first token.   D: 3 prompt, 1 token, error.
  m.OnRequestFinished(Finished(10, 5, 0.2, 0.03, 0.4, 0.45), "stop");
  m.OnRequestFinished(Finished(20, 50, 0.6, 0.7, 4.9, 5.6), "length");
  m.OnRequestFinished(Finished(7, 0, 12.0, 0, 0, 12.0), "abort");
  m.OnRequestFinished(Finished(3, 1, 0.0, 0.002, 0, 0.002), "error");
  m.OnTokens(4, 0.1);    // A's tokens 2..5
  m.OnTokens(49, 0.02);  // B's tokens 2..50
  m.OnRequestRejected();
  m.OnRequestRejected();
  EXPECT_EQ(m.generation_tokens(), 56);
  EXPECT_EQ(m.finished_requests(), 4);

  const Parsed p = Parse(m.Render({}, "m"));
  ASSERT_EQ(p.error, "");
  ASSERT_EQ(CheckHistograms(p), "");
  EXPECT_EQ(Value(p, "vllm:prompt_tokens_total"), 40);
  EXPECT_EQ(Value(p, "vllm:generation_tokens_total"), 56);
  EXPECT_EQ(Value(p, "vllm:request_success_total", {{"finished_reason", "stop"}}), 1);
  EXPECT_EQ(Value(p, "vllm:request_success_total", {{"finished_reason", "length"}}), 1);
  EXPECT_EQ(Value(p, "vllm:request_success_total", {{"finished_reason", "abort"}}), 1);
  EXPECT_EQ(Value(p, "vllm:request_success_total", {{"finished_reason", "error"}}), 1);
  EXPECT_EQ(Value(p, "brisk:requests_rejected_total"), 2);

  // TTFT: three requests had a first token (0.03, 0.7, 0.002).
  EXPECT_EQ(Value(p, "vllm:time_to_first_token_seconds_count"), 3);
  EXPECT_NEAR(Value(p, "vllm:time_to_first_token_seconds_sum"), 0.732, 1e-12);
  EXPECT_EQ(Value(p, "vllm:time_to_first_token_seconds_bucket", {{"le", "0.001"}}), 0);
  EXPECT_EQ(Value(p, "vllm:time_to_first_token_seconds_bucket", {{"le", "0.005"}}), 1);
  EXPECT_EQ(Value(p, "vllm:time_to_first_token_seconds_bucket", {{"le", "0.04"}}), 2);
  EXPECT_EQ(Value(p, "vllm:time_to_first_token_seconds_bucket", {{"le", "0.5"}}), 2);
  EXPECT_EQ(Value(p, "vllm:time_to_first_token_seconds_bucket", {{"le", "0.75"}}), 3);

  // Per-request histograms count all four.
  EXPECT_EQ(Value(p, "vllm:e2e_request_latency_seconds_count"), 4);
  EXPECT_NEAR(Value(p, "vllm:e2e_request_latency_seconds_sum"), 18.052, 1e-12);
  EXPECT_EQ(Value(p, "vllm:e2e_request_latency_seconds_bucket", {{"le", "0.3"}}), 1);
  EXPECT_EQ(Value(p, "vllm:e2e_request_latency_seconds_bucket", {{"le", "0.5"}}), 2);
  EXPECT_EQ(Value(p, "vllm:e2e_request_latency_seconds_bucket", {{"le", "10.0"}}), 3);
  EXPECT_EQ(Value(p, "vllm:e2e_request_latency_seconds_bucket", {{"le", "15.0"}}), 4);
  EXPECT_EQ(Value(p, "vllm:request_queue_time_seconds_count"), 4);
  EXPECT_EQ(Value(p, "vllm:request_queue_time_seconds_bucket", {{"le", "0.3"}}), 2);
  EXPECT_EQ(Value(p, "vllm:request_queue_time_seconds_bucket", {{"le", "0.8"}}), 3);
  EXPECT_EQ(Value(p, "vllm:request_prompt_tokens_count"), 4);
  EXPECT_EQ(Value(p, "vllm:request_prompt_tokens_sum"), 40);
  EXPECT_EQ(Value(p, "vllm:request_prompt_tokens_bucket", {{"le", "5.0"}}), 1);
  EXPECT_EQ(Value(p, "vllm:request_prompt_tokens_bucket", {{"le", "10.0"}}), 3);
  EXPECT_EQ(Value(p, "vllm:request_prompt_tokens_bucket", {{"le", "20.0"}}), 4);
  EXPECT_EQ(Value(p, "vllm:request_generation_tokens_sum"), 56);
  EXPECT_EQ(Value(p, "vllm:request_generation_tokens_bucket", {{"le", "1.0"}}), 2);  // 0 and 1
  EXPECT_EQ(Value(p, "vllm:request_generation_tokens_bucket", {{"le", "20.0"}}), 3);
  EXPECT_EQ(Value(p, "vllm:request_generation_tokens_bucket", {{"le", "50.0"}}), 4);

  // Inter-token latency: one observation per OnTokens token; the old name mirrors it.
  for (const std::string h :
       {"vllm:inter_token_latency_seconds", "vllm:time_per_output_token_seconds"}) {
    EXPECT_EQ(Value(p, h + "_count"), 53) << h;
    EXPECT_NEAR(Value(p, h + "_sum"), 4 * 0.1 + 49 * 0.02, 1e-12) << h;
    EXPECT_EQ(Value(p, h + "_bucket", {{"le", "0.01"}}), 0) << h;
    EXPECT_EQ(Value(p, h + "_bucket", {{"le", "0.025"}}), 49) << h;
    EXPECT_EQ(Value(p, h + "_bucket", {{"le", "0.1"}}), 53) << h;
  }
}

TEST(Metrics, UnknownFinishedReasonCountsAsError) {
  ServerMetrics m;
  m.OnRequestFinished(Finished(1, 1, 0, 0, 0, 0), "weird\"reason");
  const Parsed p = Parse(m.Render({}, "m"));
  ASSERT_EQ(p.error, "");
  EXPECT_EQ(Value(p, "vllm:request_success_total", {{"finished_reason", "error"}}), 1);
  EXPECT_EQ(p.families.at("vllm:request_success_total").samples.size(), 4u);
}

TEST(Metrics, GarbageTimingsDoNotPoisonTheExposition) {
  FakeClock clock;
  ServerMetrics m({.clock = clock.fn()});
  m.OnRequestFinished(Finished(5, 3, -1, NAN, INFINITY, NAN), "stop");
  m.OnTokens(2, NAN);
  m.OnTokens(-3, 0.5);  // no-op
  EngineStats st;
  st.kv_usage = 1.7;  // clamped to 1
  const Parsed p = Parse(m.Render(st, "m"));
  ASSERT_EQ(p.error, "");
  ASSERT_EQ(CheckHistograms(p), "");
  EXPECT_EQ(Value(p, "vllm:kv_cache_usage_perc"), 1);
  EXPECT_EQ(Value(p, "vllm:time_to_first_token_seconds_count"), 0);  // NaN dropped
  EXPECT_EQ(Value(p, "vllm:e2e_request_latency_seconds_count"), 0);
  EXPECT_EQ(Value(p, "vllm:request_queue_time_seconds_count"), 1);  // -1 counted as 0
  EXPECT_EQ(Value(p, "vllm:request_queue_time_seconds_sum"), 0);
  EXPECT_EQ(Value(p, "vllm:inter_token_latency_seconds_count"), 0);
  EXPECT_TRUE(std::isnan(Value(p, "brisk:recent_ttft_seconds", {{"quantile", "0.5"}})));
  EXPECT_TRUE(std::isnan(Value(p, "brisk:recent_tpot_seconds", {{"quantile", "0.5"}})));
}

TEST(Metrics, RecentPercentilesSlideWithTheClock) {
  FakeClock clock;
  ServerMetrics m({.window_s = 60, .clock = clock.fn()});
  // Four requests at t=1000: TTFT 0.1..0.4; TPOT = decode / (tokens - 1) = 0.01..0.04.
  for (int i = 1; i <= 4; ++i) {
    m.OnRequestFinished(Finished(10, 11, 0, 0.1 * i, 0.1 * i, 1), "stop");
  }
  clock.now = 1030;
  m.OnRequestFinished(Finished(10, 1, 0, 2.0, 0, 2), "stop");  // one token: TTFT only
  m.OnRequestFinished(Finished(10, 0, 0, 0, 0, 2), "abort");   // no token: neither

  Parsed p = Parse(m.Render({}, "m"));
  ASSERT_EQ(p.error, "");
  // TTFT sample {0.1, 0.2, 0.3, 0.4, 2.0}: p50 = 0.3, p90 = 0.4 + 0.6*1.6 = 1.36.
  EXPECT_NEAR(Value(p, "brisk:recent_ttft_seconds", {{"quantile", "0.5"}}), 0.3, 1e-12);
  EXPECT_NEAR(Value(p, "brisk:recent_ttft_seconds", {{"quantile", "0.9"}}), 1.36, 1e-12);
  EXPECT_NEAR(Value(p, "brisk:recent_ttft_seconds", {{"quantile", "0.99"}}), 1.936, 1e-12);
  // TPOT sample {0.01, 0.02, 0.03, 0.04}: p50 = 0.025, p90 = 0.037.
  EXPECT_NEAR(Value(p, "brisk:recent_tpot_seconds", {{"quantile", "0.5"}}), 0.025, 1e-12);
  EXPECT_NEAR(Value(p, "brisk:recent_tpot_seconds", {{"quantile", "0.9"}}), 0.037, 1e-12);
  EXPECT_EQ(Value(p, "brisk:recent_requests"), 6);

  clock.now = 1060.5;  // the first four are now older than 60 s
  p = Parse(m.Render({}, "m"));
  ASSERT_EQ(p.error, "");
  EXPECT_NEAR(Value(p, "brisk:recent_ttft_seconds", {{"quantile", "0.5"}}), 2.0, 1e-12);
  EXPECT_NEAR(Value(p, "brisk:recent_ttft_seconds", {{"quantile", "0.99"}}), 2.0, 1e-12);
  EXPECT_TRUE(std::isnan(Value(p, "brisk:recent_tpot_seconds", {{"quantile", "0.5"}})));
  EXPECT_EQ(Value(p, "brisk:recent_requests"), 2);
  // The cumulative histograms keep everything.
  EXPECT_EQ(Value(p, "vllm:time_to_first_token_seconds_count"), 5);

  clock.now = 1091;
  p = Parse(m.Render({}, "m"));
  EXPECT_TRUE(std::isnan(Value(p, "brisk:recent_ttft_seconds", {{"quantile", "0.9"}})));
  EXPECT_EQ(Value(p, "brisk:recent_requests"), 0);
}

TEST(Metrics, WindowMemoryIsBounded) {
  FakeClock clock;
  ServerMetrics m({.max_window_samples = 3, .clock = clock.fn()});
  for (int i = 1; i <= 5; ++i) m.OnRequestFinished(Finished(1, 1, 0, i, 0, i), "stop");
  const Parsed p = Parse(m.Render({}, "m"));
  EXPECT_EQ(Value(p, "brisk:recent_requests"), 3);
  EXPECT_NEAR(Value(p, "brisk:recent_ttft_seconds", {{"quantile", "0.5"}}), 4, 1e-12);  // {3,4,5}
}

TEST(Metrics, EscapesLabelValues) {
  EXPECT_EQ(EscapeLabelValue("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
  EXPECT_EQ(EscapeLabelValue("caf\xC3\xA9"), "caf\xC3\xA9");            // valid UTF-8 kept
  EXPECT_EQ(EscapeLabelValue("x\xFFy"), "x\xEF\xBF\xBDy");              // stray byte
  EXPECT_EQ(EscapeLabelValue("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD");  // overlong '/'
  EXPECT_EQ(EscapeLabelValue("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // surrogate
  EXPECT_EQ(EscapeLabelValue("\xE2\x82"), "\xEF\xBF\xBD\xEF\xBF\xBD");                  // truncated

  ServerMetrics m;
  const std::string name = "org/model \"v2\"\\\nq4";
  const std::string text = m.Render({}, name);
  EXPECT_NE(text.find("model_name=\"org/model \\\"v2\\\"\\\\\\nq4\""), std::string::npos);
  const Parsed p = Parse(text);
  ASSERT_EQ(p.error, "");
  for (const auto& [fam, f] : p.families) {
    for (const PromSample& s : f.samples) ASSERT_EQ(s.labels.at("model_name"), name) << s.name;
  }
}

TEST(Metrics, ConcurrentRecordingKeepsExactTotals) {
  ServerMetrics m({.max_model_len = 1000, .clock = {}});
  constexpr int kThreads = 8, kPerThread = 2000;
  std::vector<std::thread> threads;
  std::atomic<bool> stop_render{false};
  std::thread renderer([&] {  // scrapes while the others record
    while (!stop_render.load()) {
      const Parsed p = Parse(m.Render({}, "m"));
      ASSERT_EQ(p.error, "");
      ASSERT_EQ(CheckHistograms(p), "");
    }
  });
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&m, t] {
      for (int i = 0; i < kPerThread; ++i) {
        m.OnRequestFinished(Finished(2, 3, 0.001, 0.01, 0.02, 0.05), t % 2 ? "stop" : "length");
        m.OnTokens(2, 0.01);
        if (i % 10 == 0) m.OnRequestRejected();
      }
    });
  }
  for (auto& th : threads) th.join();
  stop_render = true;
  renderer.join();

  const Parsed p = Parse(m.Render({}, "m"));
  ASSERT_EQ(p.error, "");
  ASSERT_EQ(CheckHistograms(p), "");
  const double n = kThreads * kPerThread;
  EXPECT_EQ(Value(p, "vllm:prompt_tokens_total"), 2 * n);
  EXPECT_EQ(Value(p, "vllm:generation_tokens_total"), 3 * n);
  EXPECT_EQ(Value(p, "vllm:request_success_total", {{"finished_reason", "stop"}}), n / 2);
  EXPECT_EQ(Value(p, "vllm:request_success_total", {{"finished_reason", "length"}}), n / 2);
  EXPECT_EQ(Value(p, "vllm:e2e_request_latency_seconds_count"), n);
  EXPECT_EQ(Value(p, "vllm:time_to_first_token_seconds_count"), n);
  EXPECT_EQ(Value(p, "vllm:inter_token_latency_seconds_count"), 2 * n);
  EXPECT_EQ(Value(p, "brisk:requests_rejected_total"), kThreads * (kPerThread / 10));
  EXPECT_EQ(Value(p, "brisk:recent_requests"), n);
}

}  // namespace
}  // namespace brisk::server
