// The bench report's JSON (bench_report.h ToJson / BenchReportFromJson), the --slo parser and
// WriteBenchReport. Expected values are written out by hand or come from the hand-written
// tests/data/bench/sample_report.json.
#include "bench/bench_report.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "test_paths.h"

namespace brisk {
namespace {

std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string SampleText() { return ReadText(test::DataPath("bench/sample_report.json")); }

// Bit-identical, so 0.1 + 0.2 style drift and -0.0 vs 0.0 are caught.
bool SameDouble(double a, double b) {
  if (std::isnan(a) && std::isnan(b)) return true;
  return std::memcmp(&a, &b, sizeof a) == 0;
}
#define EXPECT_SAME(a, b) \
  EXPECT_TRUE(SameDouble((a), (b))) << #a << " = " << (a) << ", " << #b << " = " << (b)

TEST(ParseSloTest, Accepts) {
  auto a = ParseSlo("ttft:500,tpot:50");
  ASSERT_TRUE(a.ok()) << a.message();
  EXPECT_EQ(a->ttft_ms, 500);
  EXPECT_EQ(a->tpot_ms, 50);
  auto b = ParseSlo("tpot_p99:20");
  ASSERT_TRUE(b.ok()) << b.message();
  EXPECT_EQ(b->ttft_ms, 0);
  EXPECT_EQ(b->tpot_ms, 20);
  auto c = ParseSlo(" tpot : 12.5 , ttft_p99:0.75 ");
  ASSERT_TRUE(c.ok()) << c.message();
  EXPECT_EQ(c->ttft_ms, 0.75);
  EXPECT_EQ(c->tpot_ms, 12.5);
  EXPECT_FALSE(c->empty());
}

TEST(ParseSloTest, RejectsWithMessage) {
  const std::pair<const char*, const char*> cases[] = {
      {"", "empty SLO"},
      {"   ", "empty SLO"},
      {"ttft", "has no value"},
      {"ttft:", "not a positive number"},
      {"ttft:abc", "\"abc\" is not a positive number"},
      {"ttft:-1", "\"-1\" is not a positive number"},
      {"ttft:0", "not a positive number"},
      {"ttft:inf", "not a positive number"},
      {"ttft:nan", "not a positive number"},
      {"ttft:1e999", "not a positive number"},
      {"ttft:5ms", "not a positive number"},
      {"ttft:0x10", "not a positive number"},
      {"ttft:500;tpot:50", "not a positive number"},
      {"ttft:500,", "empty item"},
      {",ttft:500", "empty item"},
      {"ttft:500,,tpot:5", "empty item"},
      {"ttft:500,ttft:400", "sets ttft twice"},
      {"ttft:500,ttft_p99:400", "sets ttft twice"},
      {"tpot_p99:5,tpot:6", "sets tpot twice"},
      {"e2e:100", "unknown SLO key \"e2e\""},
      {"TTFT:500", "unknown SLO key \"TTFT\""},
      {":500", "unknown SLO key \"\""},
  };
  for (const auto& [text, want] : cases) {
    auto r = ParseSlo(text);
    ASSERT_FALSE(r.ok()) << "accepted \"" << text << "\"";
    EXPECT_NE(r.message().find(want), std::string::npos)
        << "\"" << text << "\" gave: " << r.message();
  }
}

// Every field set, each to its own value, with doubles that print badly in short formats.
BenchReport FullReport() {
  BenchReport r;
  r.brisk_version = "9.8.7";
  r.started_at = "2025-02-03T04:05:06Z";
  r.command = "brisk bench --slo \"ttft:1\"\n--x";
  r.cpu = "CPU \xc3\xa9 \\ \"q\"";
  r.isa = "avx2";
  r.cores = 3;
  r.threads = 5;
  r.mode = "http";
  r.url = "http://127.0.0.1:9";
  r.server = "llama.cpp";
  r.model = "<b>&\"x";
  r.file_type = "Q8_0";
  r.synthetic = true;
  r.model_load_ms = 0.1;
  r.tokenizer_load_ms = 1.0 / 3.0;
  r.workload = "mix";
  r.output_len = "natural (<= 256)";
  r.sampling = "temperature 0.8, top-p 0.95";
  r.sweep = "request_rate";
  r.settings = "a, b";
  r.slo = {123.456, 7.000000000000001};
  for (int i = 0; i < 2; ++i) {
    BenchPoint p;
    p.concurrency = 7 + i;
    p.request_rate = i == 0 ? std::numeric_limits<double>::infinity() : 2.5;
    p.max_num_seqs = 11;
    p.max_num_batched_tokens = 2047;
    p.max_prefill_chunk = 513;
    p.batch_policy = "prefill-first";
    p.label = i == 0 ? "rate=inf" : "rate=2.5";
    p.requests = 100;
    p.successes = 97;
    p.failures = 3;
    p.failure_messages = {"boom, \"quoted\"", "line\nbreak"};
    p.wall_s = 1e-300;
    p.prompt_tokens = (int64_t)1 << 40;
    p.output_tokens = 4444444444;
    p.output_tok_s = 123456789.123456789;
    p.total_tok_s = 2.0 / 3.0;
    p.request_s = 5e-324;  // the smallest denormal
    p.goodput_s = 1.7976931348623157e308;
    p.slo_attainment = 0.97;
    double base = 10 * (i + 1);
    for (LatencySummary* l : {&p.ttft_ms, &p.tpot_ms, &p.itl_ms, &p.e2e_ms}) {
      base += 1.1;
      *l = {(int64_t)base, base + 0.01, base + 0.02, base + 0.03,
            base + 0.04,   base + 0.05, base + 0.06};
    }
    p.peak_rss_mib = 1024.125;
    p.server = {true, 77, 3.3, 9.9, 2, 1000, 999, 12345, 0.875};
    r.points.push_back(p);
  }
  return r;
}

void ExpectSameSummary(const LatencySummary& a, const LatencySummary& b, const char* what) {
  SCOPED_TRACE(what);
  EXPECT_EQ(a.count, b.count);
  EXPECT_SAME(a.mean, b.mean);
  EXPECT_SAME(a.min, b.min);
  EXPECT_SAME(a.max, b.max);
  EXPECT_SAME(a.p50, b.p50);
  EXPECT_SAME(a.p90, b.p90);
  EXPECT_SAME(a.p99, b.p99);
}

TEST(BenchReportJsonTest, RoundTripsEveryFieldExactly) {
  const BenchReport a = FullReport();
  auto back = BenchReportFromJson(a.ToJson());
  ASSERT_TRUE(back.ok()) << back.message();
  const BenchReport& b = *back;
  EXPECT_EQ(a.brisk_version, b.brisk_version);
  EXPECT_EQ(a.started_at, b.started_at);
  EXPECT_EQ(a.command, b.command);
  EXPECT_EQ(a.cpu, b.cpu);
  EXPECT_EQ(a.isa, b.isa);
  EXPECT_EQ(a.cores, b.cores);
  EXPECT_EQ(a.threads, b.threads);
  EXPECT_EQ(a.mode, b.mode);
  EXPECT_EQ(a.url, b.url);
  EXPECT_EQ(a.server, b.server);
  EXPECT_EQ(a.model, b.model);
  EXPECT_EQ(a.file_type, b.file_type);
  EXPECT_EQ(a.synthetic, b.synthetic);
  EXPECT_SAME(a.model_load_ms, b.model_load_ms);
  EXPECT_SAME(a.tokenizer_load_ms, b.tokenizer_load_ms);
  EXPECT_EQ(a.workload, b.workload);
  EXPECT_EQ(a.output_len, b.output_len);
  EXPECT_EQ(a.sampling, b.sampling);
  EXPECT_EQ(a.sweep, b.sweep);
  EXPECT_EQ(a.settings, b.settings);
  EXPECT_SAME(a.slo.ttft_ms, b.slo.ttft_ms);
  EXPECT_SAME(a.slo.tpot_ms, b.slo.tpot_ms);
  ASSERT_EQ(b.points.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    SCOPED_TRACE("point " + std::to_string(i));
    const BenchPoint &p = a.points[i], &q = b.points[i];
    EXPECT_EQ(p.concurrency, q.concurrency);
    EXPECT_SAME(p.request_rate, q.request_rate);
    EXPECT_EQ(p.max_num_seqs, q.max_num_seqs);
    EXPECT_EQ(p.max_num_batched_tokens, q.max_num_batched_tokens);
    EXPECT_EQ(p.max_prefill_chunk, q.max_prefill_chunk);
    EXPECT_EQ(p.batch_policy, q.batch_policy);
    EXPECT_EQ(p.label, q.label);
    EXPECT_EQ(p.requests, q.requests);
    EXPECT_EQ(p.successes, q.successes);
    EXPECT_EQ(p.failures, q.failures);
    EXPECT_EQ(p.failure_messages, q.failure_messages);
    EXPECT_SAME(p.wall_s, q.wall_s);
    EXPECT_EQ(p.prompt_tokens, q.prompt_tokens);
    EXPECT_EQ(p.output_tokens, q.output_tokens);
    EXPECT_SAME(p.output_tok_s, q.output_tok_s);
    EXPECT_SAME(p.total_tok_s, q.total_tok_s);
    EXPECT_SAME(p.request_s, q.request_s);
    EXPECT_SAME(p.goodput_s, q.goodput_s);
    EXPECT_SAME(p.slo_attainment, q.slo_attainment);
    ExpectSameSummary(p.ttft_ms, q.ttft_ms, "ttft");
    ExpectSameSummary(p.tpot_ms, q.tpot_ms, "tpot");
    ExpectSameSummary(p.itl_ms, q.itl_ms, "itl");
    ExpectSameSummary(p.e2e_ms, q.e2e_ms, "e2e");
    EXPECT_SAME(p.peak_rss_mib, q.peak_rss_mib);
    EXPECT_EQ(p.server.has, q.server.has);
    EXPECT_EQ(p.server.steps, q.server.steps);
    EXPECT_SAME(p.server.mean_batch_seqs, q.server.mean_batch_seqs);
    EXPECT_SAME(p.server.mean_batch_tokens, q.server.mean_batch_tokens);
    EXPECT_EQ(p.server.preemptions, q.server.preemptions);
    EXPECT_EQ(p.server.prefix_queried_tokens, q.server.prefix_queried_tokens);
    EXPECT_EQ(p.server.prefix_hit_tokens, q.server.prefix_hit_tokens);
    EXPECT_EQ(p.server.generation_tokens, q.server.generation_tokens);
    EXPECT_SAME(p.server.kv_usage_max, q.server.kv_usage_max);
  }
  // And the document is stable: writing what was read gives the same text.
  EXPECT_EQ(b.ToJson(), a.ToJson());
}

TEST(BenchReportJsonTest, DocumentShape) {
  auto j = nlohmann::json::parse(FullReport().ToJson());
  EXPECT_EQ(j["format"], "brisk-bench-report");
  EXPECT_EQ(j["version"], 1);
  EXPECT_EQ(j["points"][0]["request_rate"], "inf");  // JSON has no infinity
  EXPECT_EQ(j["points"][1]["request_rate"], 2.5);
  const auto& ttft = j["points"][0]["ttft_ms"];
  ASSERT_TRUE(ttft.is_object());
  for (const char* k : {"count", "mean", "min", "p50", "p90", "p99", "max"})
    EXPECT_TRUE(ttft.contains(k)) << k;
  EXPECT_EQ(ttft["count"], 11);  // (int64_t)(10 + 1.1)
  EXPECT_EQ(j["slo"]["ttft_ms"], 123.456);
}

TEST(BenchReportJsonTest, ReadsTheHandWrittenSample) {
  auto r = BenchReportFromJson(SampleText());
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r->model, "qwen2.5-0.5b-synthetic-q4_k_m.gguf");
  EXPECT_TRUE(r->synthetic);
  EXPECT_EQ(r->cores, 2);
  EXPECT_EQ(r->sweep, "concurrency");
  EXPECT_EQ(r->slo.ttft_ms, 500);
  EXPECT_EQ(r->slo.tpot_ms, 50);
  ASSERT_EQ(r->points.size(), 5u);
  const int conc[] = {1, 2, 4, 8, 16};
  for (int i = 0; i < 5; ++i) EXPECT_EQ(r->points[i].concurrency, conc[i]);
  const BenchPoint& p8 = r->points[3];
  EXPECT_EQ(p8.label, "c=8");
  EXPECT_EQ(p8.successes, 30);
  EXPECT_EQ(p8.failures, 2);
  ASSERT_EQ(p8.failure_messages.size(), 2u);
  EXPECT_EQ(p8.failure_messages[1], "cancelled: client \"7\" went away, | mid-stream <eos>");
  EXPECT_EQ(r->points[4].tpot_ms.p99, 71.6);
  EXPECT_EQ(r->points[4].itl_ms.count, 4032);
  EXPECT_EQ(r->points[4].server.preemptions, 3);
  EXPECT_EQ(r->points[0].server.kv_usage_max, 0.012);
}

TEST(BenchReportJsonTest, MissingOptionalFieldsKeepDefaults) {
  auto r = BenchReportFromJson(
      R"({"format": "brisk-bench-report", "version": 1, "points": [{"label": "x"}], "new": 1})");
  ASSERT_TRUE(r.ok()) << r.message();
  ASSERT_EQ(r->points.size(), 1u);
  EXPECT_EQ(r->points[0].label, "x");
  EXPECT_EQ(r->points[0].requests, 0);
  EXPECT_FALSE(r->points[0].server.has);
  EXPECT_TRUE(r->slo.empty());
}

// Each case: a JSON pointer into a valid one-point document and the value put there (or the
// whole text replaced), and a piece of the expected message.
TEST(BenchReportJsonTest, RejectsMalformedDocuments) {
  BenchReport one = FullReport();
  one.points.resize(1);
  const std::string valid = one.ToJson();
  ASSERT_TRUE(BenchReportFromJson(valid).ok());
  using J = nlohmann::json;
  auto with = [&](const char* pointer, J value) {
    J j = J::parse(valid);
    j[J::json_pointer(pointer)] = std::move(value);
    return j.dump();
  };
  auto without = [&](const char* key) {
    J j = J::parse(valid);
    j.erase(key);
    return j.dump();
  };
  const std::pair<std::string, std::string> cases[] = {
      {"", "not valid JSON"},
      {"not json", "not valid JSON"},
      {valid.substr(0, valid.size() / 2), "not valid JSON"},
      {valid + " x", "not valid JSON"},
      {"[]", "expected a JSON object, found array"},
      {"42", "expected a JSON object, found number"},
      {"null", "expected a JSON object, found null"},
      {"\"report\"", "expected a JSON object, found string"},
      {without("format"), "\"format\" is not"},
      {with("/format", "brisk-http-bench"), "\"format\" is not"},
      {with("/format", 1), "\"format\" is not"},
      {without("version"), "unsupported \"version\""},
      {with("/version", 2), "unsupported \"version\""},
      {with("/version", "1"), "unsupported \"version\""},
      {without("points"), "\"points\" must be an array"},
      {with("/points", J::object()), "\"points\" must be an array"},
      {with("/points/0", 3), "points[0]: expected an object, found number"},
      {with("/cores", "2"), "cores: expected an integer, found string"},
      {with("/cores", 2.5), "cores: expected an integer, found a fraction"},
      {with("/cores", -1), "cores: must not be negative"},
      {with("/cores", 10000000000LL), "cores: integer out of range"},
      {with("/synthetic", "yes"), "synthetic: expected true or false"},
      {with("/model", 5), "model: expected a string, found number"},
      {with("/model_load_ms", nullptr), "model_load_ms: expected a number, found null"},
      {with("/slo", "ttft:5"), "slo: expected an object"},
      {with("/slo/ttft_ms", "500"), "slo.ttft_ms: expected a number, found the string \"500\""},
      {with("/points/0/ttft_ms/p99", "abc"), "points[0].ttft_ms.p99: expected a number"},
      {with("/points/0/ttft_ms", J::array({1, 2})), "points[0].ttft_ms: expected an object"},
      {with("/points/0/e2e_ms/count", 1.5), "points[0].e2e_ms.count: expected an integer"},
      {with("/points/0/failure_messages", "x"), "points[0].failure_messages: expected an array"},
      {with("/points/0/failure_messages/1", 7), "points[0].failure_messages[1]: expected a string"},
      {with("/points/0/server/has", 1), "points[0].server.has: expected true or false"},
      {with("/points/0/server", true), "points[0].server: expected an object"},
      {with("/points/0/output_tokens", 18446744073709551615ULL),
       "points[0].output_tokens: integer out of range"},
      {with("/points/0/requests", 3000000000LL), "points[0].requests: integer out of range"},
      {with("/points/0/label", J::array()), "points[0].label: expected a string"},
      {with("/points/0/wall_s", "Infinity"), "points[0].wall_s: expected a number"},
  };
  for (const auto& [doc, want] : cases) {
    auto r = BenchReportFromJson(doc);
    ASSERT_FALSE(r.ok()) << "accepted: " << doc.substr(0, 200);
    EXPECT_NE(r.message().find(want), std::string::npos)
        << "wanted \"" << want << "\", got: " << r.message();
    EXPECT_EQ(r.message().rfind("bench report", 0), 0u) << r.message();
  }
}

TEST(BenchReportJsonTest, RejectsNumbersJsonCannotHold) {
  // 1e999 overflows a double: either the parser refuses it or the reader does; never inf.
  auto r = BenchReportFromJson(
      R"({"format": "brisk-bench-report", "version": 1, "points": [{"wall_s": 1e999}]})");
  EXPECT_FALSE(r.ok());
}

TEST(WriteBenchReportTest, WritesAllFormatsAndReadsBack) {
  auto sample = BenchReportFromJson(SampleText());
  ASSERT_TRUE(sample.ok()) << sample.message();
  const std::string dir = test::TempDir() + "/nested/out";
  ASSERT_TRUE(WriteBenchReport(*sample, dir).ok());
  for (const char* name : {"report.json", "report.csv", "report.md", "report.html"})
    EXPECT_GT(std::filesystem::file_size(dir + "/" + name), 100u) << name;
  EXPECT_EQ(ReadText(dir + "/report.html"), sample->ToHtml());
  // Each chart of the page also as a standalone SVG image (the sample has server counters and
  // peak RSS, so all ten charts exist).
  for (const char* metric : {"ttft", "tpot", "itl", "e2e", "throughput", "requests",
                             "tpot_vs_throughput", "ttft_vs_throughput", "batch", "memory"}) {
    const std::string svg = ReadText(dir + "/charts/" + metric + ".svg");
    EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u) << metric;
    EXPECT_NE(svg.find(std::string("data-metric=\"") + metric + "\""), std::string::npos);
    EXPECT_NE(svg.find("</svg>"), std::string::npos) << metric;
    EXPECT_EQ(svg.find("<script"), std::string::npos) << metric;
  }
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir + "/charts"),
                          std::filesystem::directory_iterator()),
            10);
  auto again = BenchReportFromJson(ReadText(dir + "/report.json"));
  ASSERT_TRUE(again.ok()) << again.message();
  EXPECT_EQ(again->ToJson(), sample->ToJson());
  std::filesystem::remove_all(std::filesystem::path(dir).parent_path().parent_path());
}

TEST(WriteBenchReportTest, ErrorsNameThePath) {
  const std::string tmp = test::TempDir();
  const std::string file = tmp + "/plain-file";
  std::ofstream(file) << "x";
  Status st = WriteBenchReport(BenchReport{}, file + "/sub");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find(file), std::string::npos) << st.message();
  Status st2 = WriteBenchReport(BenchReport{}, file);
  ASSERT_FALSE(st2.ok());
  EXPECT_NE(st2.message().find(file), std::string::npos) << st2.message();
  std::filesystem::remove_all(tmp);
}

}  // namespace
}  // namespace brisk
