#include "bench/http_target.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "bench/http_bench.h"
#include "bench/http_client.h"
#include "bench/prometheus_text.h"
#include "bench/rss_sampler.h"

namespace brisk {
namespace {

constexpr double kSideCallTimeoutS = 30;  // /v1/models, /metrics, /admin/config answer at once

class HttpTarget : public LoadTarget {
 public:
  HttpTarget(const HttpTargetOptions& o, HttpUrl url)
      : o_(o), url_(std::move(url)), loop_(url_, ClientOptions(o)) {}

  static HttpClientOptions ClientOptions(const HttpTargetOptions& o) {
    HttpClientOptions c;
    c.connect_timeout_s = o.connect_timeout_s;
    c.total_timeout_s = o.request_timeout_s;
    if (!o.api_key.empty()) c.headers.push_back({"Authorization", "Bearer " + o.api_key});
    return c;
  }

  void Init() {
    info_.mode = "http";
    info_.url = url_.ToString();
    model_ = o_.model;
    // A server still loading its model would fail every request of the first point.
    info_.waited_for_ready =
        WaitWhileLoading(url_, ClientOptions(o_), o_.request_timeout_s, /*progress=*/true);
    if (model_.empty()) {  // a named model needs no discovery (Start notes the Server header)
      HttpCallResult r = Call("GET", "/v1/models", "");
      info_.server = r.server;
      if (DescribeHttpFailure(r).empty()) model_ = FirstModelId(r.body);
    }
    info_.model = model_;
  }

  HttpCallResult Call(const char* method, const std::string& path, std::string body) {
    HttpClientOptions opts = ClientOptions(o_);
    opts.total_timeout_s = std::min(o_.request_timeout_s, kSideCallTimeoutS);
    HttpCallRequest req;
    req.method = method;
    req.target = url_.base_path + path;
    req.body = std::move(body);
    return HttpCall(url_, opts, std::move(req));
  }

  TargetInfo Info() const override { return info_; }

  Status Configure(const TargetLimits& l) override {
    if (l.max_prefill_chunk > 0)
      return Status::Error(
          "max_prefill_chunk cannot be changed over HTTP: start the server with it "
          "(brisk serve --max-prefill-chunk)");
    nlohmann::ordered_json j = nlohmann::ordered_json::object();
    if (!l.batch_policy.empty()) j["batch_policy"] = l.batch_policy;
    if (l.max_num_seqs > 0) j["max_num_seqs"] = l.max_num_seqs;
    if (l.max_num_batched_tokens > 0) j["max_num_batched_tokens"] = l.max_num_batched_tokens;
    if (l.tpot_target_ms > 0) j["tpot_target_ms"] = l.tpot_target_ms;
    if (j.empty()) return Status::Ok();
    HttpCallResult r = Call("PATCH", "/admin/config", j.dump());
    if (std::string f = DescribeHttpFailure(r); !f.empty())
      return Status::Error("PATCH /admin/config " + j.dump() + ": " + f +
                           " (sweeping engine limits over HTTP needs brisk serve)");
    return Status::Ok();
  }

  void Start(const BenchRequest& r, std::function<void(RequestRecord)> done) override {
    BRISK_CHECK(r.prompt_ids.empty());  // token-id prompts are an in-process workload
    int conn;
    if (free_.empty()) {
      conn = loop_.AddConnection();
    } else {
      conn = free_.back();
      free_.pop_back();
    }
    HttpCallRequest req;
    req.target = url_.base_path + (o_.completions ? "/v1/completions" : "/v1/chat/completions");
    req.body = RequestBody(r).dump();
    ++in_flight_;
    loop_.Send(conn, std::move(req), [this, conn, done = std::move(done)](HttpCallResult res) {
      if (info_.server.empty()) info_.server = res.server;
      free_.push_back(conn);
      --in_flight_;
      const RequestOutcome o = AnalyzeStream(res);
      RequestRecord rec;
      rec.ok = o.ok;
      rec.error = o.error;
      rec.finish_reason = o.finish_reason;
      rec.start_s = o.start_s;
      rec.end_s = o.end_s;
      rec.token_s = o.content_s;
      rec.prompt_tokens = o.prompt_tokens;
      rec.output_tokens = o.completion_tokens;
      done(std::move(rec));
    });
  }

  void Poll(double seconds) override {
    if (in_flight_ == 0) return;
    loop_.RunFor(seconds);
  }
  int in_flight() const override { return in_flight_; }

  TargetCounters Counters() override {
    TargetCounters c;
    if (!o_.scrape_metrics) return c;
    HttpCallResult r = Call("GET", "/metrics", "");
    if (!DescribeHttpFailure(r).empty()) return c;
    auto sums = SumPrometheusSamples(r.body);
    if (!sums.ok()) return c;
    auto get = [&](const char* name, double* v) {
      auto it = sums->find(std::string_view(name));
      if (it == sums->end()) return false;
      *v = it->second;
      return true;
    };
    c.has = get("vllm:generation_tokens_total", &c.generation_tokens);
    get("vllm:num_preemptions_total", &c.preemptions);
    get("vllm:prefix_cache_queries_total", &c.prefix_queried);
    get("vllm:prefix_cache_hits_total", &c.prefix_hits);
    c.has_steps = get("brisk:engine_steps_total", &c.steps);
    c.has_step_seqs = get("brisk:engine_step_seqs_total", &c.step_seqs);
    get("brisk:engine_step_tokens_total", &c.step_tokens);
    // brisk counts generation tokens per step too (requests still running included), which
    // matches the clients' count of a point whose requests all finished either way.
    return c;
  }

  double KvUsage() override { return -1; }
  int rss_pid() const override { return o_.server_pid > 0 ? o_.server_pid : -1; }

 private:
  // A streamed chat turn (or completion) with usage in the last chunk.
  nlohmann::ordered_json RequestBody(const BenchRequest& r) const {
    nlohmann::ordered_json j;
    if (!model_.empty()) j["model"] = model_;
    if (o_.completions) {
      j["prompt"] = r.user;
    } else {
      j["messages"] = nlohmann::ordered_json::array();
      if (!r.system.empty()) j["messages"].push_back({{"role", "system"}, {"content", r.system}});
      j["messages"].push_back({{"role", "user"}, {"content", r.user}});
    }
    j["max_tokens"] = r.max_tokens;
    j["temperature"] = r.temperature;
    if (r.top_p < 1) j["top_p"] = r.top_p;
    j["seed"] = r.seed;
    if (r.ignore_eos) j["ignore_eos"] = true;
    j["stream"] = true;
    j["stream_options"] = {{"include_usage", true}};
    return j;
  }

  HttpTargetOptions o_;
  HttpUrl url_;
  HttpClientLoop loop_;
  TargetInfo info_;
  std::string model_;
  std::vector<int> free_;  // idle connections (keep-alive)
  int in_flight_ = 0;
};

}  // namespace

Result<std::unique_ptr<LoadTarget>> CreateHttpTarget(const HttpTargetOptions& options) {
  BRISK_ASSIGN_OR_RETURN(HttpUrl url, ParseHttpUrl(options.url));
  if (options.server_pid > 0)
    BRISK_RETURN_IF_ERROR(ReadRssMib(options.server_pid).status().WithContext("--server-pid"));
  auto t = std::make_unique<HttpTarget>(options, std::move(url));
  t->Init();
  return std::unique_ptr<LoadTarget>(std::move(t));
}

}  // namespace brisk
