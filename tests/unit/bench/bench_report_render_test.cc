// The human-readable bench reports: terminal table, CSV, Markdown and the HTML page
// (bench_report.h), mostly on the hand-written tests/data/bench/sample_report.json.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <regex>
#include <sstream>

#include "bench/bench_report.h"
#include "test_paths.h"

namespace brisk {
namespace {

BenchReport Sample() {
  std::ifstream in(test::DataPath("bench/sample_report.json"), std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  auto r = BenchReportFromJson(s.str());
  EXPECT_TRUE(r.ok()) << r.message();
  return r.ok() ? *r : BenchReport{};
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

std::vector<std::string> Split(const std::string& text, const std::string& sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t at; (at = text.find(sep, start)) != std::string::npos; start = at + sep.size())
    out.push_back(text.substr(start, at - start));
  out.push_back(text.substr(start));
  return out;
}

// An RFC 4180 reader for the test's own checks (quoted fields, doubled quotes).
std::vector<std::vector<std::string>> ParseCsv(const std::string& text) {
  std::vector<std::vector<std::string>> rows(1);
  std::string field;
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"')
        field += '"', ++i;
      else if (c == '"')
        quoted = false;
      else
        field += c;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      rows.back().push_back(field), field.clear();
    } else if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') {
      rows.back().push_back(field), field.clear();
      rows.emplace_back();
      ++i;
    } else {
      field += c;
    }
  }
  if (!field.empty() || !rows.back().empty()) rows.back().push_back(field);
  if (rows.back().empty()) rows.pop_back();
  return rows;
}

TEST(BenchReportCsvTest, OneRowPerPointSameWidthQuoted) {
  const std::string csv = Sample().ToCsv();
  auto rows = ParseCsv(csv);
  ASSERT_EQ(rows.size(), 6u);  // header + 5 points
  // 18 point fields, 4 latencies x 7 statistics, peak RSS, 9 server fields, the messages.
  EXPECT_EQ(rows[0].size(), 18u + 28u + 1u + 9u + 1u);
  for (const auto& row : rows) EXPECT_EQ(row.size(), rows[0].size());
  auto col = [&](const std::string& name) {
    auto it = std::find(rows[0].begin(), rows[0].end(), name);
    EXPECT_NE(it, rows[0].end()) << name;
    return (size_t)(it - rows[0].begin());
  };
  EXPECT_EQ(rows[5][col("label")], "c=16");
  EXPECT_EQ(rows[5][col("ttft_ms_p50")], "298.4");
  EXPECT_EQ(rows[5][col("ttft_ms_p90")], "1104.5");
  EXPECT_EQ(rows[5][col("ttft_ms_p99")], "1893.2");
  EXPECT_EQ(rows[5][col("itl_ms_count")], "4032");
  EXPECT_EQ(rows[5][col("server_preemptions")], "3");
  EXPECT_EQ(rows[1][col("server_has")], "1");
  EXPECT_EQ(rows[4][col("failures")], "2");
  EXPECT_EQ(rows[4][col("failure_messages")],
            "timed out after 2 s waiting for the first token; cancelled: client \"7\" went "
            "away, | mid-stream <eos>");
  // The raw text doubles the quotes inside a quoted field.
  EXPECT_NE(csv.find("\"timed out after 2 s waiting for the first token; cancelled: client "
                     "\"\"7\"\" went away, | mid-stream <eos>\""),
            std::string::npos);
}

TEST(BenchReportCsvTest, QuotesLabelsWithSeparators) {
  BenchReport r;
  BenchPoint p;
  p.label = "a,b";
  p.batch_policy = "say \"hi\"\nthere";
  r.points.push_back(p);
  auto rows = ParseCsv(r.ToCsv());
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1][0], "a,b");
  EXPECT_EQ(rows[1][6], "say \"hi\"\nthere");
  EXPECT_EQ(rows[1].size(), rows[0].size());
}

TEST(BenchReportTableTest, HeaderRowsAndFailures) {
  const std::string t = Sample().ToTable();
  EXPECT_NE(t.find("brisk: 0.1.0"), std::string::npos) << t;
  EXPECT_NE(t.find("started: 2025-01-15T10:42:07Z"), std::string::npos);
  EXPECT_NE(t.find("mode: in-process"), std::string::npos);
  EXPECT_NE(t.find("qwen2.5-0.5b-synthetic-q4_k_m.gguf (Q4_K_M)"), std::string::npos);
  EXPECT_NE(t.find("random weights: speeds are real, texts are noise"), std::string::npos);
  EXPECT_NE(t.find("AMD EPYC 9R14, 2 cores, ISA avx512-vnni, 2 threads"), std::string::npos);
  EXPECT_NE(t.find("load: model 412.6 ms, tokenizer 38.9 ms"), std::string::npos);
  EXPECT_NE(t.find("workload: qa, output tokens: 64, greedy"), std::string::npos);
  EXPECT_NE(t.find("SLO: TTFT <= 500 ms, TPOT <= 50 ms"), std::string::npos);
  for (const char* col : {"concurrency", "ok/fail", "out tok/s", "total tok/s", "req/s",
                          "goodput/s", "TTFT p50 ms", "TTFT p99 ms", "TPOT p50 ms", "TPOT p99 ms",
                          "ITL p99 ms", "E2E p99 ms", "peak RSS MiB", "seqs/step"})
    EXPECT_NE(t.find(col), std::string::npos) << col;
  // The c=8 row: label, 30 ok / 2 failed, 241.2 out tok/s, goodput 3.39, TTFT p99 611.9.
  std::regex row8(
      R"(\| c=8 +\| +30/2 \| +241\.2 \| +399\.5 \| +3\.77 \| +3\.39 \| +187\.3 \| +611\.9 \|)");
  EXPECT_TRUE(std::regex_search(t, row8)) << t;
  EXPECT_NE(t.find("failures:\n  c=8: timed out after 2 s waiting for the first token\n"),
            std::string::npos);
  // Every table line is as wide as the header line (padded columns).
  std::vector<std::string> lines;
  for (const std::string& l : Split(t, "\n"))
    if (!l.empty() && l[0] == '|') lines.push_back(l);
  ASSERT_EQ(lines.size(), 7u);  // header, rule, 5 points
  for (const std::string& l : lines) EXPECT_EQ(l.size(), lines[0].size()) << l;
}

TEST(BenchReportTableTest, OptionalColumnsOnlyWhenMeasured) {
  BenchReport r;
  r.sweep = "max_num_seqs";
  BenchPoint p;
  p.label = "seqs=4";
  p.successes = 1;
  r.points.push_back(p);
  const std::string t = r.ToTable();
  EXPECT_NE(t.find("max_num_seqs"), std::string::npos);
  EXPECT_EQ(t.find("goodput"), std::string::npos);
  EXPECT_EQ(t.find("RSS"), std::string::npos);
  EXPECT_EQ(t.find("seqs/step"), std::string::npos);
  EXPECT_NE(t.find("SLO: none"), std::string::npos);
  EXPECT_EQ(t.find("load:"), std::string::npos);  // zero load times are not shown
  // No latency samples: "-" rather than a made-up 0.
  EXPECT_TRUE(std::regex_search(t, std::regex(R"(\| +- \|)"))) << t;
}

TEST(BenchReportMarkdownTest, BulletsAndTable) {
  const std::string md = Sample().ToMarkdown();
  EXPECT_NE(md.find("- **brisk**: 0.1.0\n"), std::string::npos) << md;
  EXPECT_NE(md.find("- **sweep**: concurrency\n"), std::string::npos);
  EXPECT_NE(md.find("Synthetic model"), std::string::npos);
  size_t rows = 0, pipes = 0;
  for (const std::string& l : Split(md, "\n")) {
    if (l.empty() || l[0] != '|') continue;
    // Unescaped bars only: each row has the same number of cells.
    size_t n = 0;
    for (size_t i = 0; i < l.size(); ++i) n += l[i] == '|' && (i == 0 || l[i - 1] != '\\');
    if (rows++ == 0) pipes = n;
    EXPECT_EQ(n, pipes) << l;
  }
  EXPECT_EQ(rows, 7u);
  EXPECT_EQ(pipes, 15u);  // 14 columns
  EXPECT_NE(md.find("|---"), std::string::npos);
  // The failure text's bar and angle brackets are escaped.
  EXPECT_NE(md.find("- c=8: cancelled: client \"7\" went away, \\| mid-stream &lt;eos&gt;"),
            std::string::npos)
      << md;
}

TEST(BenchReportMarkdownTest, EscapesBarsInTableCells) {
  BenchReport r;
  BenchPoint p;
  p.label = "a|b";
  r.points.push_back(p);
  const std::string md = r.ToMarkdown();
  EXPECT_NE(md.find("| a\\|b "), std::string::npos) << md;
}

// The <svg ...>...</svg> element of one chart ("" when absent).
std::string Chart(const std::string& html, const std::string& metric) {
  size_t at = html.find("data-metric=\"" + metric + "\"");
  if (at == std::string::npos) return "";
  size_t start = html.rfind("<svg", at);
  return html.substr(start, html.find("</svg>", at) + 6 - start);
}

const char* const kMetrics[] = {"ttft",
                                "tpot",
                                "itl",
                                "e2e",
                                "throughput",
                                "requests",
                                "tpot_vs_throughput",
                                "ttft_vs_throughput",
                                "batch",
                                "memory"};

TEST(BenchReportHtmlTest, SelfContainedWithEveryChart) {
  const std::string html = Sample().ToHtml();
  std::string lower = html;
  std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
  EXPECT_EQ(lower.find("<script"), std::string::npos);
  EXPECT_EQ(lower.find("http://"), std::string::npos);
  EXPECT_EQ(lower.find("https://"), std::string::npos);
  EXPECT_EQ(lower.find("src="), std::string::npos);
  EXPECT_EQ(lower.find("href="), std::string::npos);
  EXPECT_EQ(lower.find("url("), std::string::npos);
  EXPECT_EQ(lower.find("@import"), std::string::npos);
  EXPECT_EQ(html.find("nan"), std::string::npos);
  EXPECT_EQ(html.find("inf"), std::string::npos);
  for (const char* m : kMetrics)
    EXPECT_EQ(Count(html, std::string("data-metric=\"") + m + "\""), 1u) << m;
  EXPECT_EQ(Count(html, "<svg class=\"chart\""), 10u);
  EXPECT_EQ(Count(html, "<tr class=\"point"), 5u);
  EXPECT_EQ(Count(html, "<tr class=\"point fail\">"), 1u);
  EXPECT_NE(html.find("random weights: speeds are real, texts are noise"), std::string::npos);
  // The failure message is escaped.
  EXPECT_NE(html.find("cancelled: client &quot;7&quot; went away, | mid-stream &lt;eos&gt;"),
            std::string::npos);
  // SLO lines on ttft and tpot (and their throughput curves) only.
  EXPECT_NE(Chart(html, "ttft").find("class=\"reference\""), std::string::npos);
  EXPECT_NE(Chart(html, "ttft").find("SLO 500 ms"), std::string::npos);
  EXPECT_NE(Chart(html, "tpot").find("SLO 50 ms"), std::string::npos);
  EXPECT_EQ(Chart(html, "itl").find("class=\"reference\""), std::string::npos);
  EXPECT_EQ(Chart(html, "throughput").find("class=\"reference\""), std::string::npos);
  // Series per chart: p50/p90/p99; output/total; requests/goodput.
  EXPECT_EQ(Count(Chart(html, "e2e"), "<polyline"), 3u);
  EXPECT_EQ(Count(Chart(html, "throughput"), "<polyline"), 2u);
  EXPECT_NE(Chart(html, "requests").find("data-series=\"goodput/s\""), std::string::npos);
  EXPECT_EQ(Count(Chart(html, "tpot_vs_throughput"), "<circle"), 5u);
}

TEST(BenchReportHtmlTest, EscapesTextAndLeavesOutUnmeasuredCharts) {
  BenchReport r;
  r.model = "<b>&\"x";
  r.mode = "http";
  r.url = "http://10.0.0.1:8080";  // shown as text in the header table, never loaded
  r.server = "x&y";
  r.sweep = "batch_policy";
  for (const char* policy : {"fcfs", "decode-first", "<i>"}) {
    BenchPoint p;
    p.label = policy;
    p.batch_policy = policy;
    p.requests = p.successes = 4;
    p.output_tok_s = 10;
    r.points.push_back(p);
  }
  r.points[1].successes = 0, r.points[1].failures = 4;  // no successful data: no marker
  const std::string html = r.ToHtml();
  EXPECT_EQ(html.find("<b>&\"x"), std::string::npos);
  EXPECT_NE(html.find("&lt;b&gt;&amp;&quot;x"), std::string::npos);
  EXPECT_EQ(html.find("<i>"), std::string::npos);
  // The URL appears as text only: in the measured-on line and in the header table.
  EXPECT_EQ(Count(html, "http://"), 2u);
  EXPECT_EQ(html.find("=\"http://"), std::string::npos);
  EXPECT_NE(html.find("the server at http://10.0.0.1:8080 (Server: x&amp;y)"), std::string::npos);
  EXPECT_NE(html.find("<td>http (http://10.0.0.1:8080, Server: x&amp;y)</td>"), std::string::npos);
  EXPECT_EQ(Chart(html, "batch"), "");
  EXPECT_EQ(Chart(html, "memory"), "");
  EXPECT_EQ(html.find("random weights"), std::string::npos);
  // Categorical x: the three labels; markers for the two points that had successes.
  const std::string tp = Chart(html, "throughput");
  EXPECT_NE(tp.find(">decode-first</text>"), std::string::npos) << tp;
  EXPECT_NE(tp.find(">&lt;i&gt;</text>"), std::string::npos);
  EXPECT_EQ(Count(tp, "<circle"), 4u);  // 2 series x 2 points
  // No latency samples at all: the latency charts say so.
  EXPECT_NE(Chart(html, "ttft").find("no data"), std::string::npos);
}

}  // namespace
}  // namespace brisk
