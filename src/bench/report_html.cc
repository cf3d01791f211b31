// BenchReport::ToHtml: one self-contained page (inline <style>, inline SVG, no <script>, no
// external URL; a Content-Security-Policy forbids any load), so it can be mailed, attached to an
// issue or opened from disk on a machine without network.
//
// The page: a line saying where and when it was measured (the server's /bench adds its top bar
// and whether that was this server: server/bench_page_header.h), the header table (machine,
// model, settings), the result table (one <tr class="point">
// per point, the same columns as the terminal table), the failure messages, then one chart per
// metric, each <svg class="chart" data-metric="NAME">:
//   ttft, tpot, itl, e2e   p50/p90/p99 (ms) vs the sweep variable; ttft and tpot with the SLO as a
//                          dashed line when one is set
//   throughput             output and total tok/s vs the sweep variable
//   requests               successful requests/s (and goodput/s when an SLO is set) vs sweep
//   tpot_vs_throughput     TPOT p99 against output tok/s (the throughput-latency curve)
//   ttft_vs_throughput     TTFT p99 against output tok/s
//   batch                  server-side mean sequences per step vs sweep (only when a point has
//                          server-side numbers)
//   memory                 peak RSS (MiB) vs sweep (only when a point measured it)
//   server_requests        the server's running / waiting requests, sampled (--url with vLLM's
//   kv_usage               gauges) and its KV cache use (%); only when a point has them
//   gpu_util, gpu_memory,  GPU utilisation (%), memory used (MiB) and power (W) from nvidia-smi;
//   gpu_power              only when a point has them (nvidia-smi on the PATH)
// Charts use successful requests only: a point where every request failed is in the table but
// has no marker. The x axis is numeric for concurrency / max_num_seqs / request_rate sweeps with
// distinct finite values, otherwise the points' labels in order (e.g. batch policies).
#include <cmath>
#include <cstdio>
#include <functional>
#include <set>

#include "bench/bench_report.h"
#include "bench/report_columns.h"
#include "bench/svg_chart.h"

namespace brisk {
namespace {

constexpr const char* kStyle = R"(
body { font: 14px/1.45 system-ui, sans-serif; color: #1d1d1f; margin: 0; background: #fafafa; }
main.report { margin: 24px auto; max-width: 1360px; padding: 0 16px; }
h1 { font-size: 22px; margin: 0 0 12px; } h2 { font-size: 17px; margin: 28px 0 10px; }
.synthetic { background: #fff4ce; border: 1px solid #e0c050; padding: 8px 12px; border-radius: 6px; }
table { border-collapse: collapse; background: #fff; }
th, td { border: 1px solid #d6d6d6; padding: 4px 8px; }
table.header th { text-align: left; background: #f0f0f0; font-weight: 600; }
table.results th { background: #f0f0f0; white-space: nowrap; }
table.results td.num { text-align: right; font-variant-numeric: tabular-nums; }
table.results tr.fail td { background: #fde8e8; }
ul.failures { color: #9b1c1c; }
/* Charts fill the width: two or more per row on a desktop, one full-width row on a phone. */
.charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(100%, 480px), 1fr));
          gap: 16px; }
svg.chart { border: 1px solid #d6d6d6; border-radius: 6px; background: #fff; width: 100%;
            height: auto; display: block; }
/* Wide tables scroll inside their box; the page itself never scrolls sideways. */
.table-wrap { overflow-x: auto; max-width: 100%; }
table.header td { overflow-wrap: anywhere; }
.measured-on { background: #fff; border: 1px solid #d6d6d6; border-radius: 6px; padding: 8px 12px; }
@media (max-width: 600px) { main.report { margin: 12px auto; padding: 0 8px; } }
svg.chart text { font: 12px system-ui, sans-serif; fill: #333; }
svg.chart text.title { font-size: 14px; }
svg.chart text.nodata { font-size: 16px; fill: #888; }
p.note { color: #555; }
)";

std::string H(const std::string& s) { return XmlEscape(s); }

// The swept x coordinate of a point, NaN when the sweep has no numeric axis.
double SweepX(const BenchReport& r, const BenchPoint& p) {
  if (r.sweep == "concurrency") return p.concurrency;
  if (r.sweep == "max_num_seqs") return p.max_num_seqs;
  if (r.sweep == "request_rate") return p.request_rate;
  return NAN;
}

std::string SweepAxisLabel(const std::string& sweep) {
  if (sweep == "concurrency") return "concurrency (clients in flight)";
  if (sweep == "request_rate") return "request rate (requests/s)";
  if (sweep.empty()) return "point";
  return sweep;
}

// Builds charts whose x axis is the sweep variable (numeric or categorical, decided once).
class SweepCharts {
 public:
  explicit SweepCharts(const BenchReport& r) : r_(r) {
    std::set<double> seen;
    numeric_ = !r.points.empty();
    for (const BenchPoint& p : r.points) {
      double x = SweepX(r, p);
      if (!std::isfinite(x) || !seen.insert(x).second) numeric_ = false;
    }
    if (!numeric_)
      for (const BenchPoint& p : r.points) labels_.push_back(PointLabel(p));
  }

  // `include` picks the points that have this metric; `value` returns NaN for a hole.
  using Value = std::function<double(const BenchPoint&)>;
  LineChart Make(const std::string& metric, const std::string& title, const std::string& y_label,
                 const std::vector<std::pair<std::string, Value>>& series,
                 const std::function<bool(const BenchPoint&)>& include) const {
    LineChart c;
    c.metric = metric;
    c.title = title;
    c.x_label = SweepAxisLabel(r_.sweep);
    c.y_label = y_label;
    c.categories = labels_;
    for (const auto& [name, value] : series) {
      ChartSeries s;
      s.name = name;
      for (size_t i = 0; i < r_.points.size(); ++i) {
        const BenchPoint& p = r_.points[i];
        if (p.successes <= 0 || !include(p)) continue;
        s.x.push_back(numeric_ ? SweepX(r_, p) : (double)i);
        s.y.push_back(value(p));
        s.point_labels.push_back(PointLabel(p));
      }
      c.series.push_back(std::move(s));
    }
    return c;
  }

  static std::string LabelOf(const BenchPoint& p) { return p.label.empty() ? "?" : p.label; }

 private:
  const BenchReport& r_;
  bool numeric_ = false;
  std::vector<std::string> labels_;
};

bool Always(const BenchPoint&) { return true; }

// p50/p90/p99 of one latency, NaN where nothing was measured.
std::vector<std::pair<std::string, SweepCharts::Value>> Percentiles(LatencySummary BenchPoint::*m) {
  auto get = [m](double LatencySummary::*q) {
    return [m, q](const BenchPoint& p) { return (p.*m).count > 0 ? (p.*m).*q : NAN; };
  };
  return {{"p50", get(&LatencySummary::p50)},
          {"p90", get(&LatencySummary::p90)},
          {"p99", get(&LatencySummary::p99)}};
}

std::string SloLabel(double ms) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "SLO %g ms", ms);
  return buf;
}

// A latency against output throughput: one curve through the points in sweep order.
LineChart VersusThroughput(const BenchReport& r, const std::string& metric, const std::string& name,
                           LatencySummary BenchPoint::*m, double slo) {
  LineChart c;
  c.metric = metric;
  c.title = name + " p99 vs output throughput";
  c.x_label = "output tokens/s";
  c.y_label = name + " p99 (ms)";
  c.y_from_zero = true;
  ChartSeries s;
  s.name = name + " p99";
  for (const BenchPoint& p : r.points) {
    if (p.successes <= 0 || (p.*m).count == 0) continue;
    s.x.push_back(p.output_tok_s);
    s.y.push_back((p.*m).p99);
    s.point_labels.push_back(PointLabel(p));
  }
  c.series.push_back(std::move(s));
  if (slo > 0) c.has_reference = true, c.reference_y = slo, c.reference_label = SloLabel(slo);
  return c;
}

// The charts of what was sampled beside the load: the server's gauges and the GPUs, each group
// only when a point has it.
std::string SamplerCharts(const BenchReport& r, const SweepCharts& sc) {
  std::string h;
  if (AnyServerGauges(r)) {
    auto has = [](const BenchPoint& p) { return p.gauges.has; };
    h += RenderLineChart(
        sc.Make("server_requests", "Server requests (sampled)", "requests",
                {{"running (mean)", [](const BenchPoint& p) { return p.gauges.running_mean; }},
                 {"waiting (mean)", [](const BenchPoint& p) { return p.gauges.waiting_mean; }},
                 {"waiting (max)", [](const BenchPoint& p) { return p.gauges.waiting_max; }}},
                has));
    h += RenderLineChart(
        sc.Make("kv_usage", "Server KV cache use", "percent",
                {{"mean", [](const BenchPoint& p) { return 100 * p.gauges.kv_usage_mean; }},
                 {"max", [](const BenchPoint& p) { return 100 * p.gauges.kv_usage_max; }}},
                has));
  }
  if (AnyGpu(r)) {
    auto has = [](const BenchPoint& p) { return p.gpu.has; };
    h += RenderLineChart(sc.Make("gpu_util", "GPU utilisation", "percent",
                                 {{"mean", [](const BenchPoint& p) { return p.gpu.util_mean_pct; }},
                                  {"max", [](const BenchPoint& p) { return p.gpu.util_max_pct; }}},
                                 has));
    h += RenderLineChart(
        sc.Make("gpu_memory", "GPU memory used", "MiB (all GPUs)",
                {{"max", [](const BenchPoint& p) { return p.gpu.mem_used_max_mib; }}}, has));
    h += RenderLineChart(sc.Make("gpu_power", "GPU power", "W (all GPUs)",
                                 {{"mean", [](const BenchPoint& p) { return p.gpu.power_mean_w; }},
                                  {"max", [](const BenchPoint& p) { return p.gpu.power_max_w; }}},
                                 has));
  }
  return h;
}

// One sentence naming where and when the report was measured: machine, time, target, model.
std::string ProvenanceText(const BenchReport& r) {
  std::string machine = r.cpu.empty() ? "an unnamed machine" : r.cpu;
  if (r.cores > 0) machine += " (" + std::to_string(r.cores) + " cores)";
  std::string target = r.url.empty() ? "in-process (no server)" : "the server at " + r.url;
  if (!r.server.empty()) target += " (Server: " + r.server + ")";
  const std::string when = r.started_at.empty() ? "at an unrecorded time" : r.started_at;
  const std::string model = r.model.empty() ? "an unnamed model" : "model " + r.model;
  return "Measured " + when + " on " + machine + ", " + target + ", " + model +
         (r.brisk_version.empty() ? "" : ", by brisk " + r.brisk_version) + ".";
}

std::string TableWrap(const std::string& table) {
  return "<div class=\"table-wrap\">\n" + table + "</div>\n";
}

}  // namespace

std::string BenchReport::ToHtml() const { return ToHtml(ReportPageChrome{}); }

std::string BenchReport::ToHtml(const ReportPageChrome& chrome) const {
  std::string h = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  // Belt and braces for "self-contained": even a bug here could not make the page load anything.
  h += "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
       "style-src 'unsafe-inline'\">\n";
  h += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  h += "<title>brisk bench report" + (model.empty() ? "" : " - " + H(model)) + "</title>\n";
  h += "<style>" + std::string(kStyle) + chrome.css + "</style>\n</head>\n";
  h += chrome.body_class.empty() ? "<body>\n" : "<body class=\"" + H(chrome.body_class) + "\">\n";
  h += chrome.header_html;
  h += "<main class=\"report\">\n<h1>brisk bench report</h1>\n";
  h += "<p class=\"measured-on\" data-testid=\"measured-on\">" + H(ProvenanceText(*this)) +
       chrome.provenance_html + "</p>\n";
  if (synthetic)
    h += std::string("<p class=\"synthetic\" data-testid=\"synthetic\"><strong>Synthetic model") +
         "</strong>: " + kSyntheticNote + ".</p>\n";

  std::string header = "<table class=\"header\">\n";
  for (const auto& [key, value] : ReportHeader(*this))
    header += "<tr><th>" + H(key) + "</th><td>" + H(value) + "</td></tr>\n";
  h += TableWrap(header + "</table>\n");

  h += "<h2>Results</h2>\n<div class=\"table-wrap\">\n<table class=\"results\">\n<thead><tr>";
  const std::vector<ReportColumn> cols = ReportColumns(*this);
  for (const ReportColumn& c : cols) h += "<th>" + H(c.header) + "</th>";
  h += "</tr></thead>\n<tbody>\n";
  for (const BenchPoint& p : points) {
    h += p.failures > 0 ? "<tr class=\"point fail\">" : "<tr class=\"point\">";
    for (const ReportColumn& c : cols)
      h += std::string(c.numeric ? "<td class=\"num\">" : "<td>") + H(c.cell(p)) + "</td>";
    h += "</tr>\n";
  }
  h += "</tbody>\n</table>\n</div>\n";
  std::vector<std::string> failures = FailureLines(*this);
  if (!failures.empty()) {
    h += "<h2>Failures</h2>\n<ul class=\"failures\">\n";
    for (const std::string& f : failures) h += "<li>" + H(f) + "</li>\n";
    h += "</ul>\n";
  }

  h += "<h2>Charts</h2>\n<div class=\"charts\">\n";
  const SweepCharts sc(*this);
  struct Latency {
    const char* metric;
    const char* title;
    LatencySummary BenchPoint::*m;
    double slo;
  };
  for (const Latency& l :
       {Latency{"ttft", "Time to first token", &BenchPoint::ttft_ms, slo.ttft_ms},
        Latency{"tpot", "Time per output token", &BenchPoint::tpot_ms, slo.tpot_ms},
        Latency{"itl", "Inter-token latency", &BenchPoint::itl_ms, 0.0},
        Latency{"e2e", "End-to-end latency", &BenchPoint::e2e_ms, 0.0}}) {
    LineChart c = sc.Make(l.metric, l.title, "ms", Percentiles(l.m), Always);
    if (l.slo > 0)
      c.has_reference = true, c.reference_y = l.slo, c.reference_label = SloLabel(l.slo);
    h += RenderLineChart(c);
  }
  h +=
      RenderLineChart(sc.Make("throughput", "Throughput", "tokens/s",
                              {{"output tok/s", [](const BenchPoint& p) { return p.output_tok_s; }},
                               {"total tok/s", [](const BenchPoint& p) { return p.total_tok_s; }}},
                              Always));
  std::vector<std::pair<std::string, SweepCharts::Value>> req = {
      {"requests/s", [](const BenchPoint& p) { return p.request_s; }}};
  if (!slo.empty()) req.push_back({"goodput/s", [](const BenchPoint& p) { return p.goodput_s; }});
  h += RenderLineChart(sc.Make("requests", "Requests", "requests/s", req, Always));
  h += RenderLineChart(
      VersusThroughput(*this, "tpot_vs_throughput", "TPOT", &BenchPoint::tpot_ms, slo.tpot_ms));
  h += RenderLineChart(
      VersusThroughput(*this, "ttft_vs_throughput", "TTFT", &BenchPoint::ttft_ms, slo.ttft_ms));
  if (AnyServerSide(*this))
    h += RenderLineChart(
        sc.Make("batch", "Server batch size", "sequences per step",
                {{"mean seqs/step", [](const BenchPoint& p) { return p.server.mean_batch_seqs; }}},
                [](const BenchPoint& p) { return p.server.has; }));
  if (AnyPeakRss(*this))
    h += RenderLineChart(
        sc.Make("memory", "Peak memory", "peak RSS (MiB)",
                {{"peak RSS MiB", [](const BenchPoint& p) { return p.peak_rss_mib; }}},
                [](const BenchPoint& p) { return p.peak_rss_mib > 0; }));
  h += SamplerCharts(*this, sc);
  h += "</div>\n<p class=\"note\">Charts use successful requests only; a point where every "
       "request failed appears in the table but not in the charts. Hover a marker for its "
       "value.</p>\n</main>\n</body>\n</html>\n";
  return h;
}

}  // namespace brisk
