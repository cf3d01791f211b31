#include "bench/server_gauges.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "bench/prometheus_text.h"

namespace brisk {
namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
// A scrape answers at once; one that does not is skipped rather than waited for.
constexpr double kScrapeConnectTimeoutS = 2;
constexpr double kScrapeTimeoutS = 5;

}  // namespace

void GaugeAccumulator::Series::Add(double v) {
  if (!std::isfinite(v)) return;  // untrusted text: a NaN gauge must not poison the mean
  sum += v;
  max = n == 0 ? v : std::max(max, v);
  ++n;
}

double GaugeAccumulator::Series::Mean() const { return n > 0 ? sum / n : kNan; }
double GaugeAccumulator::Series::Max() const { return n > 0 ? max : kNan; }

bool GaugeAccumulator::Add(const std::map<std::string, double, std::less<>>& sums) {
  bool any = false;
  auto take = [&](std::string_view name, Series& s) {
    auto it = sums.find(name);
    if (it == sums.end()) return;
    s.Add(it->second);
    any = true;
  };
  take("vllm:kv_cache_usage_perc", kv_);
  take("vllm:num_requests_running", running_);
  take("vllm:num_requests_waiting", waiting_);
  if (any) ++samples_;
  return any;
}

ServerGauges GaugeAccumulator::Summary() const {
  ServerGauges g;
  g.has = samples_ > 0;
  g.samples = samples_;
  g.kv_usage_mean = kv_.Mean();
  g.kv_usage_max = kv_.Max();
  g.running_mean = running_.Mean();
  g.running_max = running_.Max();
  g.waiting_mean = waiting_.Mean();
  g.waiting_max = waiting_.Max();
  return g;
}

ServerGaugeSampler::ServerGaugeSampler(HttpUrl url, std::string api_key, double period_s)
    : url_(std::move(url)), api_key_(std::move(api_key)), thread_(period_s, [this] { Sample(); }) {}

bool ServerGaugeSampler::Sample() {
  const uint64_t point = readings_.Current();
  HttpClientOptions o;
  o.connect_timeout_s = kScrapeConnectTimeoutS;
  o.total_timeout_s = kScrapeTimeoutS;
  if (!api_key_.empty()) o.headers.push_back({"Authorization", "Bearer " + api_key_});
  HttpCallRequest req;
  req.method = "GET";
  req.target = url_.base_path + "/metrics";
  const HttpCallResult r = HttpCall(url_, o, std::move(req));
  if (!DescribeHttpFailure(r).empty()) return false;
  auto sums = SumPrometheusSamples(r.body);
  return sums.ok() && readings_.Add(point, *sums);
}

void ServerGaugeSampler::BeginPoint() {
  readings_.Begin();
  thread_.Wake();  // a first scrape while the load starts, however short the point
}

void ServerGaugeSampler::EndPoint(BenchPoint* p) {
  // A point that ended before any scrape finished still gets one, taken now.
  if (readings_.Empty()) Sample();
  p->gauges = readings_.End();
}

}  // namespace brisk
