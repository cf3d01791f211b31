// The header lines and result columns shared by the table, Markdown and HTML reports.
#include "bench/report_columns.h"

#include <cmath>
#include <cstdio>

namespace brisk {
namespace {

// A latency cell: "-" when nothing was measured (e.g. TPOT of one-token answers).
std::string Ms(const LatencySummary& s, double v) { return s.count == 0 ? "-" : Fixed(v, 1); }

}  // namespace

std::string PointLabel(const BenchPoint& p) {
  if (!p.label.empty()) return p.label;
  if (p.concurrency > 0) return "c=" + std::to_string(p.concurrency);
  if (p.request_rate > 0) return "rate=" + Fixed(p.request_rate, 2);
  if (p.max_num_seqs > 0) return "seqs=" + std::to_string(p.max_num_seqs);
  if (!p.batch_policy.empty()) return p.batch_policy;
  return "?";
}

std::string Fixed(double v, int decimals) {
  if (std::isnan(v)) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string SloText(const Slo& slo) {
  if (slo.empty()) return "none";
  auto ms = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return std::string(buf);
  };
  std::string s;
  if (slo.ttft_ms > 0) s += "TTFT <= " + ms(slo.ttft_ms) + " ms";
  if (slo.tpot_ms > 0)
    s += std::string(s.empty() ? "" : ", ") + "TPOT <= " + ms(slo.tpot_ms) + " ms";
  return s;
}

bool AnyServerSide(const BenchReport& r) {
  for (const BenchPoint& p : r.points)
    if (p.server.has) return true;
  return false;
}

bool AnyPeakRss(const BenchReport& r) {
  for (const BenchPoint& p : r.points)
    if (p.peak_rss_mib > 0) return true;
  return false;
}

bool AnyGpu(const BenchReport& r) {
  for (const BenchPoint& p : r.points)
    if (p.gpu.has) return true;
  return false;
}

bool AnyServerGauges(const BenchReport& r) {
  for (const BenchPoint& p : r.points)
    if (p.gauges.has) return true;
  return false;
}

namespace {

// A cell of an optional group: "-" for a point without it (or a value the source did not give).
std::string Cell(bool has, double v, int decimals) { return has ? Fixed(v, decimals) : "-"; }

void AddGaugeColumns(std::vector<ReportColumn>& c) {
  c.push_back({"KV use max %", true, [](const BenchPoint& p) {
                 return Cell(p.gauges.has, 100 * p.gauges.kv_usage_max, 1);
               }});
  c.push_back({"running", true,
               [](const BenchPoint& p) { return Cell(p.gauges.has, p.gauges.running_mean, 1); }});
  c.push_back({"waiting", true,
               [](const BenchPoint& p) { return Cell(p.gauges.has, p.gauges.waiting_mean, 1); }});
}

void AddGpuColumns(std::vector<ReportColumn>& c) {
  c.push_back({"GPU util %", true,
               [](const BenchPoint& p) { return Cell(p.gpu.has, p.gpu.util_mean_pct, 0); }});
  c.push_back({"GPU mem MiB", true,
               [](const BenchPoint& p) { return Cell(p.gpu.has, p.gpu.mem_used_max_mib, 0); }});
  c.push_back(
      {"GPU W", true, [](const BenchPoint& p) { return Cell(p.gpu.has, p.gpu.power_mean_w, 0); }});
}

}  // namespace

std::vector<ReportColumn> ReportColumns(const BenchReport& r) {
  std::vector<ReportColumn> c;
  c.push_back({r.sweep.empty() ? "point" : r.sweep, false, PointLabel});
  c.push_back({"ok/fail", true, [](const BenchPoint& p) {
                 return std::to_string(p.successes) + "/" + std::to_string(p.failures);
               }});
  c.push_back({"out tok/s", true, [](const BenchPoint& p) { return Fixed(p.output_tok_s, 1); }});
  c.push_back({"total tok/s", true, [](const BenchPoint& p) { return Fixed(p.total_tok_s, 1); }});
  c.push_back({"req/s", true, [](const BenchPoint& p) { return Fixed(p.request_s, 2); }});
  if (!r.slo.empty())
    c.push_back({"goodput/s", true, [](const BenchPoint& p) { return Fixed(p.goodput_s, 2); }});
  c.push_back(
      {"TTFT p50 ms", true, [](const BenchPoint& p) { return Ms(p.ttft_ms, p.ttft_ms.p50); }});
  c.push_back(
      {"TTFT p99 ms", true, [](const BenchPoint& p) { return Ms(p.ttft_ms, p.ttft_ms.p99); }});
  c.push_back(
      {"TPOT p50 ms", true, [](const BenchPoint& p) { return Ms(p.tpot_ms, p.tpot_ms.p50); }});
  c.push_back(
      {"TPOT p99 ms", true, [](const BenchPoint& p) { return Ms(p.tpot_ms, p.tpot_ms.p99); }});
  c.push_back({"ITL p99 ms", true, [](const BenchPoint& p) { return Ms(p.itl_ms, p.itl_ms.p99); }});
  c.push_back({"E2E p99 ms", true, [](const BenchPoint& p) { return Ms(p.e2e_ms, p.e2e_ms.p99); }});
  if (AnyPeakRss(r))
    c.push_back({"peak RSS MiB", true, [](const BenchPoint& p) {
                   return p.peak_rss_mib > 0 ? Fixed(p.peak_rss_mib, 0) : std::string("-");
                 }});
  if (AnyServerSide(r))
    c.push_back({"seqs/step", true, [](const BenchPoint& p) {
                   return p.server.has ? Fixed(p.server.mean_batch_seqs, 2) : std::string("-");
                 }});
  if (AnyServerGauges(r)) AddGaugeColumns(c);
  if (AnyGpu(r)) AddGpuColumns(c);
  return c;
}

std::vector<std::pair<std::string, std::string>> ReportHeader(const BenchReport& r) {
  std::vector<std::pair<std::string, std::string>> h;
  auto add = [&](const char* key, const std::string& value) {
    if (!value.empty()) h.emplace_back(key, value);
  };
  add("brisk", r.brisk_version);
  add("started", r.started_at);
  add("command", r.command);
  std::string target = r.url;  // "http (http://host:port, Server: llama.cpp)"
  if (!r.server.empty()) target += (target.empty() ? "" : ", ") + ("Server: " + r.server);
  add("mode", target.empty() ? r.mode : r.mode + " (" + target + ")");
  std::string model = r.model.empty() ? "(not named)" : r.model;
  if (!r.file_type.empty()) model += " (" + r.file_type + ")";
  if (r.synthetic) model += std::string(" - synthetic model, ") + kSyntheticNote;
  add("model", model);
  std::string machine = r.cpu;
  auto part = [&](const std::string& s) {
    if (!s.empty()) machine += (machine.empty() ? "" : ", ") + s;
  };
  if (r.cores > 0) part(std::to_string(r.cores) + " cores");
  if (!r.isa.empty()) part("ISA " + r.isa);
  if (r.threads > 0) part(std::to_string(r.threads) + " threads");
  add("machine", machine);
  std::string load;
  if (r.model_load_ms != 0) load = "model " + Fixed(r.model_load_ms, 1) + " ms";
  if (r.tokenizer_load_ms != 0)
    load += (load.empty() ? "" : ", ") + std::string("tokenizer ") + Fixed(r.tokenizer_load_ms, 1) +
            " ms";
  add("load", load);
  std::string work = r.workload;
  auto wpart = [&](const std::string& s) {
    if (!s.empty()) work += (work.empty() ? "" : ", ") + s;
  };
  if (!r.output_len.empty()) wpart("output tokens: " + r.output_len);
  wpart(r.sampling);
  add("workload", work);
  add("sweep", r.sweep);
  add("settings", r.settings);
  add("SLO", SloText(r.slo));
  return h;
}

std::vector<std::string> FailureLines(const BenchReport& r) {
  std::vector<std::string> lines;
  for (const BenchPoint& p : r.points) {
    for (const std::string& m : p.failure_messages) lines.push_back(PointLabel(p) + ": " + m);
    if (p.failures > 0 && p.failure_messages.empty())
      lines.push_back(PointLabel(p) + ": " + std::to_string(p.failures) +
                      " requests failed (no message recorded)");
  }
  return lines;
}

}  // namespace brisk
