// `brisk bench http` against a scripted server with known delays: the measured TTFT / ITL / TPOT
// reflect the script, token counts are exact, concurrency is real, failures are counted with
// their message (HTTP 500, refused, truncated, no [DONE], hung), duration mode ends on time, and
// the /metrics check compares the right numbers.
#include "bench/http_bench.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <nlohmann/json.hpp>
#include <set>

#include "bench/http_client.h"
#include "script_server.h"

namespace brisk {
namespace {

using test::Event;
using test::Script;
using test::ScriptRequest;
using test::ScriptServer;

std::string Content(const std::string& text) {
  return Event(R"({"choices":[{"index":0,"delta":{"content":")" + text +
               R"("},"finish_reason":null}]})");
}
std::string Finish(const char* reason = "length") {
  return Event(std::string(R"({"choices":[{"index":0,"delta":{},"finish_reason":")") + reason +
               "\"}]}");
}
std::string Usage(int completion) {
  return Event(R"({"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":)" +
               std::to_string(completion) + "}}");
}

// A well-formed chat stream: role chunk, `tokens` content events (ttft_ms before the first,
// itl_ms between the others), finish, usage, [DONE].
Script GoodStream(int tokens, int ttft_ms, int itl_ms) {
  Script s{
      test::Write(test::SseHeader()), test::Sleep(ttft_ms),
      test::Write(Event(R"({"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]})") +
                  Content("t0"))};
  for (int i = 1; i < tokens; ++i) {
    s.push_back(test::Sleep(itl_ms));
    s.push_back(test::Write(Content("t" + std::to_string(i))));
  }
  s.push_back(test::Write(Finish() + Usage(tokens) + Event("[DONE]") + test::LastChunk()));
  return s;
}

Script Models() {
  return {test::Write(test::WholeResponse(200, "application/json",
                                          R"({"object":"list","data":[{"id":"scripted"}]})"))};
}

Script Health(bool loading) {
  return {
      test::Write(test::WholeResponse(loading ? 503 : 200, "application/json",
                                      loading ? R"({"status":"loading"})" : R"({"status":"ok"})"))};
}

HttpBenchOptions Options(const ScriptServer& s) {
  HttpBenchOptions o;
  o.url = s.url();
  o.concurrency = {1};
  o.num_prompts = 3;
  o.output_len = 5;
  o.warmup = 0;
  o.request_timeout_s = 20;
  return o;
}

TEST(HttpBench, MeasuresTheScriptedTiming) {
  ScriptServer server([](const ScriptRequest& r) {
    if (r.target == "/health") return Health(false);
    if (r.target == "/v1/models") return Models();
    return GoodStream(5, 80, 50);
  });
  HttpBenchOptions o = Options(server);
  o.concurrency = {1, 3};
  o.warmup = 1;
  auto rep = RunHttpBench(o);
  ASSERT_TRUE(rep.ok()) << rep.message();
  EXPECT_EQ(rep->model, "scripted");
  EXPECT_EQ(rep->warmup_failures, 0);
  ASSERT_EQ(rep->runs.size(), 2u);
  for (const HttpBenchRun& run : rep->runs) {
    SCOPED_TRACE(run.concurrency);
    EXPECT_EQ(run.requests, 3);
    EXPECT_EQ(run.failures, 0) << (run.failure_messages.empty() ? "" : run.failure_messages[0]);
    EXPECT_EQ(run.output_tokens, 15);
    EXPECT_EQ(run.prompt_tokens, 21);
    EXPECT_EQ(run.usage_missing, 0);
    EXPECT_EQ(run.ttft_ms.count, 3);
    EXPECT_GE(run.ttft_ms.min, 75);
    EXPECT_EQ(run.itl_ms.count, 12);  // 4 gaps per request
    // The median, not the minimum: a client thread descheduled past one 50 ms gap (a loaded CI
    // machine) reads two events at once, and that one gap is then ~0 ms. TTFT and E2E cannot
    // come early, so their minimums stay exact lower bounds.
    EXPECT_GE(run.itl_ms.p50, 45);
    EXPECT_EQ(run.tpot_ms.count, 3);
    EXPECT_GE(run.tpot_ms.p50, 45);  // (last - first) / 4: a late first read shortens one
    EXPECT_GE(run.e2e_ms.min, 275);  // 80 + 4 x 50
    EXPECT_LE(run.ttft_ms.max, run.e2e_ms.max);
    EXPECT_GT(run.output_tok_s, 0);
    EXPECT_GT(run.wall_s, 0.27);
  }
  // All three clients of the second level were in flight together.
  EXPECT_EQ(server.max_active(), 3);

  // Requests: readiness, discovery, then warmup (16 tokens capped to output_len) and 6 measured
  // streams.
  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 2u + 1 + 6);
  EXPECT_EQ(reqs[0].target, "/health");
  EXPECT_EQ(reqs[1].target, "/v1/models");
  EXPECT_FALSE(rep->waited_for_ready);
  std::set<std::string> prompts;
  for (size_t i = 2; i < reqs.size(); ++i) {
    EXPECT_EQ(reqs[i].target, "/v1/chat/completions");
    auto j = nlohmann::json::parse(reqs[i].body);
    EXPECT_EQ(j["model"], "scripted");
    EXPECT_EQ(j["stream"], true);
    EXPECT_EQ(j["stream_options"]["include_usage"], true);
    EXPECT_EQ(j["ignore_eos"], true);
    EXPECT_EQ(j["temperature"], 0);
    EXPECT_EQ(j["max_tokens"], 5);
    prompts.insert(j["messages"][0]["content"].get<std::string>());
  }
  EXPECT_EQ(prompts.size(), reqs.size() - 2);  // every prompt different

  const std::string table = rep->ToTable();
  EXPECT_NE(table.find("| conc | metric |  p50 ms |"), std::string::npos) << table;
  auto j = nlohmann::json::parse(rep->ToJson());
  EXPECT_EQ(j["runs"][1]["output_tokens"], 15);
}

TEST(HttpBench, CompletionsEndpointAndApiKey) {
  ScriptServer server([](const ScriptRequest&) {
    return Script{
        test::Write(test::SseHeader()),
        test::Write(Event(R"({"choices":[{"index":0,"text":"a","finish_reason":null}]})") +
                    Event(R"({"choices":[{"index":0,"text":"b","finish_reason":"length"}],)"
                          R"("usage":{"prompt_tokens":3,"completion_tokens":2}})") +
                    Event("[DONE]") + test::LastChunk())};
  });
  HttpBenchOptions o = Options(server);
  o.completions = true;
  o.model = "m";
  o.api_key = "sekrit";
  o.output_len = 2;
  auto rep = RunHttpBench(o);
  ASSERT_TRUE(rep.ok()) << rep.message();
  EXPECT_EQ(rep->runs[0].failures, 0);
  EXPECT_EQ(rep->runs[0].output_tokens, 6);
  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 4u);  // readiness, then no discovery: the model was given
  EXPECT_EQ(reqs[0].target, "/health");
  auto j = nlohmann::json::parse(reqs[1].body);
  EXPECT_EQ(reqs[1].target, "/v1/completions");
  EXPECT_TRUE(j["prompt"].is_string());
  EXPECT_EQ(j["model"], "m");
  EXPECT_NE(reqs[1].head.find("\r\nAuthorization: Bearer sekrit\r\n"), std::string::npos)
      << reqs[1].head;
}

// A server still loading its model answers 503 on /health (and on generation requests): the
// bench waits until it is ready instead of counting every request as failed.
TEST(HttpBench, WaitsForAServerThatIsStillLoading) {
  std::atomic<int> health_calls{0};
  ScriptServer server([&health_calls](const ScriptRequest& r) {
    const bool loading = health_calls.load() < 3;
    if (r.target == "/health") {
      ++health_calls;
      return Health(loading);
    }
    if (loading)
      return Script{test::Write(test::WholeResponse(
          503, "application/json",
          R"({"error":{"message":"the model is still loading","type":"unavailable_error"}})"))};
    return GoodStream(5, 1, 1);
  });
  HttpBenchOptions o = Options(server);
  o.model = "m";
  o.warmup = 1;
  auto rep = RunHttpBench(o);
  ASSERT_TRUE(rep.ok()) << rep.message();
  EXPECT_TRUE(rep->waited_for_ready);
  EXPECT_EQ(health_calls.load(), 4);  // 503 three times, then 200
  EXPECT_EQ(rep->warmup_failures, 0);
  EXPECT_EQ(rep->runs[0].failures, 0)
      << (rep->runs[0].failure_messages.empty() ? "" : rep->runs[0].failure_messages[0]);
  EXPECT_EQ(rep->runs[0].output_tokens, 15);
}

// Runs three requests against a server answering every stream with `script`; returns the run.
HttpBenchRun RunAgainst(Script script, double timeout_s = 20) {
  ScriptServer server([&script](const ScriptRequest&) { return script; });
  HttpBenchOptions o = Options(server);
  o.model = "m";
  o.request_timeout_s = timeout_s;
  auto rep = RunHttpBench(o);
  EXPECT_TRUE(rep.ok()) << rep.message();
  return rep.ok() ? rep->runs.at(0) : HttpBenchRun{};
}

void ExpectFailed(const HttpBenchRun& run, const std::string& message_part) {
  EXPECT_EQ(run.requests, 3);
  EXPECT_EQ(run.failures, 3);
  ASSERT_EQ(run.failure_messages.size(), 1u);
  EXPECT_NE(run.failure_messages[0].find(message_part), std::string::npos)
      << run.failure_messages[0];
  EXPECT_EQ(run.output_tokens, 0);
  EXPECT_EQ(run.ttft_ms.count, 0);
}

TEST(HttpBench, Http500IsCountedWithItsMessage) {
  ExpectFailed(RunAgainst({test::Write(test::WholeResponse(
                   500, "application/json", R"({"error":{"message":"engine exploded"}})"))}),
               "HTTP 500: engine exploded");
}

TEST(HttpBench, TruncatedStreamFails) {
  ExpectFailed(
      RunAgainst({test::Write(test::SseHeader() + Content("a") + Content("b")), test::Close()}),
      "truncated");
}

TEST(HttpBench, MissingDoneFails) {
  ExpectFailed(RunAgainst({test::Write(test::SseHeader() + Content("a") + Finish() + Usage(1) +
                                       test::LastChunk())}),
               "without data: [DONE]");
}

TEST(HttpBench, MissingFinishReasonFails) {
  ExpectFailed(RunAgainst({test::Write(test::SseHeader() + Content("a") + Usage(1) +
                                       Event("[DONE]") + test::LastChunk())}),
               "no finish_reason");
}

TEST(HttpBench, ErrorEventFails) {
  ExpectFailed(RunAgainst({test::Write(test::SseHeader() + Content("a") +
                                       Event(R"({"error":{"message":"kv cache full"}})")),
                           test::Close()}),
               "error event in the stream: kv cache full");
}

TEST(HttpBench, NotAStreamFails) {
  ExpectFailed(RunAgainst({test::Write(test::WholeResponse(200, "application/json", "{}"))}),
               "not text/event-stream");
}

TEST(HttpBench, HungServerFailsOnTimeout) {
  const double t0 = NowSeconds();
  ExpectFailed(RunAgainst({test::Write(test::SseHeader() + Content("a")), test::Sleep(60000)},
                          /*timeout_s=*/0.3),
               "timeout");
  EXPECT_LT(NowSeconds() - t0, 15.0);
}

TEST(HttpBench, ConnectionRefusedIsCounted) {
  int port;
  {
    ScriptServer gone([](const ScriptRequest&) { return Script{}; });
    port = gone.port();
  }
  HttpBenchOptions o;
  o.url = "http://127.0.0.1:" + std::to_string(port);
  o.concurrency = {2};
  o.num_prompts = 4;
  o.warmup = 1;
  auto rep = RunHttpBench(o);
  ASSERT_TRUE(rep.ok()) << rep.message();
  EXPECT_EQ(rep->warmup_failures, 1);
  EXPECT_EQ(rep->runs[0].requests, 4);
  EXPECT_EQ(rep->runs[0].failures, 4);
  ASSERT_FALSE(rep->runs[0].failure_messages.empty());
  EXPECT_NE(rep->runs[0].failure_messages[0].find("refused"), std::string::npos);
}

TEST(HttpBench, DurationModeEndsOnTime) {
  ScriptServer server([](const ScriptRequest&) { return GoodStream(3, 20, 20); });  // ~60 ms
  HttpBenchOptions o = Options(server);
  o.model = "m";
  o.num_prompts = 0;
  o.duration_s = 0.6;
  o.concurrency = {2};
  const double t0 = NowSeconds();
  auto rep = RunHttpBench(o);
  const double took = NowSeconds() - t0;
  ASSERT_TRUE(rep.ok()) << rep.message();
  const HttpBenchRun& run = rep->runs[0];
  EXPECT_GE(took, 0.6);
  EXPECT_LT(took, 3.0);
  EXPECT_GE(run.wall_s, 0.6);
  EXPECT_GE(run.requests, 4);  // two clients, ~60 ms each: far more than this in 0.6 s
  EXPECT_EQ(run.failures, 0);
  EXPECT_EQ(run.output_tokens, 3 * int64_t(run.requests));
}

TEST(HttpBench, RssOfAProcess) {
  ScriptServer server([](const ScriptRequest&) { return GoodStream(2, 1, 1); });
  HttpBenchOptions o = Options(server);
  o.model = "m";
  o.server_pid = int(getpid());
  auto rep = RunHttpBench(o);
  ASSERT_TRUE(rep.ok()) << rep.message();
  EXPECT_TRUE(rep->has_rss);
  EXPECT_GT(rep->rss_after_warmup_mib, 1);
  EXPECT_GT(rep->rss_end_mib, 1);
  EXPECT_GE(rep->rss_max_mib, rep->rss_end_mib);
  o.server_pid = INT_MAX / 2;  // above any pid_max
  auto bad = RunHttpBench(o);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("no such process"), std::string::npos) << bad.message();
}

const char* kMetrics = R"(# HELP vllm:generation_tokens_total Number of generation tokens processed.
# TYPE vllm:generation_tokens_total counter
vllm:generation_tokens_total{model_name="a b \"c\" {x}"} 120.0
vllm:generation_tokens_created{model_name="m"} 1.7e9
vllm:request_success_total{finished_reason="stop",model_name="m"} 3
vllm:request_success_total{finished_reason="length",model_name="m"} 9.0
vllm:e2e_request_latency_seconds_bucket{le="+Inf",model_name="m"} 12.0
vllm:e2e_request_latency_seconds_count{model_name="m"} 12.0
vllm:e2e_request_latency_seconds_sum{model_name="m"} 3.5
vllm:time_to_first_token_seconds_count{model_name="m",engine="0"} 7
vllm:time_to_first_token_seconds_count{model_name="m",engine="1"} 4 1712345678000
vllm:generation_tokens_total_other 99
)";

TEST(HttpBench, ParsesServerCounters) {
  auto c = ParseServerCounters(kMetrics);
  ASSERT_TRUE(c.ok()) << c.message();
  EXPECT_EQ(c->generation_tokens, 120);
  EXPECT_EQ(c->request_success, 12);
  EXPECT_EQ(c->e2e_count, 12);
  EXPECT_EQ(c->ttft_count, 11);
  EXPECT_TRUE(c->has_generation_tokens && c->has_request_success && c->has_e2e_count &&
              c->has_ttft_count);
  EXPECT_FALSE(ParseServerCounters("# nothing\nfoo 1\n").ok());
  EXPECT_FALSE(ParseServerCounters("vllm:generation_tokens_total{a=\"1\"} x\n").ok());
  auto partial = ParseServerCounters("vllm:generation_tokens_total 5\n");
  ASSERT_TRUE(partial.ok());
  EXPECT_FALSE(partial->has_e2e_count);
}

// A server whose /metrics counts what it streamed; `extra_tokens` overcounts on purpose.
void MetricsRun(int extra_tokens, bool expect_match) {
  std::atomic<int> tokens{0}, finished{0};
  ScriptServer server([&](const ScriptRequest& r) {
    if (r.target == "/metrics") {
      const std::string text =
          "vllm:generation_tokens_total{model_name=\"m\"} " + std::to_string(tokens.load()) +
          "\nvllm:request_success_total{finished_reason=\"length\",model_name=\"m\"} " +
          std::to_string(finished.load()) + "\nvllm:e2e_request_latency_seconds_count " +
          std::to_string(finished.load()) + "\n";
      return Script{test::Write(test::WholeResponse(200, "text/plain", text))};
    }
    tokens += 4 + extra_tokens;
    ++finished;
    return GoodStream(4, 1, 1);
  });
  HttpBenchOptions o = Options(server);
  o.model = "m";
  o.metrics = true;
  o.concurrency = {1, 2};
  o.warmup = 1;  // before the first scrape: not part of any level's difference
  auto rep = RunHttpBench(o);
  ASSERT_TRUE(rep.ok()) << rep.message();
  for (const HttpBenchRun& run : rep->runs) {
    const MetricsCheck& m = run.metrics;
    ASSERT_TRUE(m.ok) << m.error;
    EXPECT_EQ(m.client_tokens, 12);
    EXPECT_EQ(m.client_finished, 3);
    EXPECT_EQ(m.delta.generation_tokens, 12 + 3 * extra_tokens);
    EXPECT_EQ(m.delta.e2e_count, 3);
    EXPECT_FALSE(m.delta.has_ttft_count);
    EXPECT_EQ(m.tokens_match, expect_match);
    EXPECT_TRUE(m.count_match);
  }
  const std::string table = rep->ToTable();
  EXPECT_NE(table.find(expect_match ? "| MATCH    |" : "| MISMATCH |"), std::string::npos) << table;
}

TEST(HttpBench, MetricsMatch) { MetricsRun(0, true); }
TEST(HttpBench, MetricsMismatch) { MetricsRun(1, false); }

TEST(HttpBench, AnalyzeStreamCountsReasoningAndUsage) {
  HttpCallResult r;
  r.status = 200;
  r.event_stream = true;
  r.start_s = 1.0;
  r.events = {{1.5, R"({"choices":[{"delta":{"role":"assistant"}}]})"},
              {2.0, R"({"choices":[{"delta":{"reasoning_content":"hm"}}]})"},
              {2.5, R"({"choices":[{"delta":{"content":"x"},"finish_reason":"stop"}]})"},
              {2.6, R"({"choices":[],"usage":{"prompt_tokens":4,"completion_tokens":2}})"},
              {2.7, "[DONE]"}};
  RequestOutcome o = AnalyzeStream(r);
  EXPECT_TRUE(o.ok) << o.error;
  ASSERT_EQ(o.content_s.size(), 2u);
  EXPECT_EQ(o.content_s[0], 2.0);
  EXPECT_EQ(o.completion_tokens, 2);
  EXPECT_EQ(o.prompt_tokens, 4);
  EXPECT_EQ(o.finish_reason, "stop");
  EXPECT_EQ(o.end_s, 2.7);
  r.events[1].data = "not json";
  o = AnalyzeStream(r);
  EXPECT_FALSE(o.ok);
  EXPECT_NE(o.error.find("not a JSON object"), std::string::npos) << o.error;
}

TEST(HttpBench, PromptsAreDistinctAndSized) {
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) EXPECT_TRUE(seen.insert(BenchPrompt(i, 0, 1)).second) << i;
  const std::string p = BenchPrompt(3, 100, 1);
  const int words = 1 + int(std::count(p.begin(), p.end(), ' '));
  EXPECT_EQ(words, 100);
  EXPECT_EQ(p, BenchPrompt(3, 100, 1));
  EXPECT_NE(p, BenchPrompt(3, 100, 2));
}

TEST(HttpBench, RejectsBadOptions) {
  HttpBenchOptions o;
  o.url = "https://x:1";
  EXPECT_FALSE(RunHttpBench(o).ok());
  o.url = "http://127.0.0.1:1";
  o.concurrency = {0};
  EXPECT_FALSE(RunHttpBench(o).ok());
  o.concurrency = {1};
  o.duration_s = 1;
  o.num_prompts = 3;
  EXPECT_FALSE(RunHttpBench(o).ok());
}

}  // namespace
}  // namespace brisk
