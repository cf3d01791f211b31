#include "bench/latency_table.h"

#include <cstdio>
#include <utility>

namespace brisk {

std::string MsCell(const LatencySummary& s, double v) {
  if (s.count == 0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

nlohmann::ordered_json LatencyJson(const LatencySummary& s) {
  return {{"count", s.count}, {"mean", s.mean}, {"min", s.min}, {"p50", s.p50},
          {"p90", s.p90},     {"p99", s.p99},   {"max", s.max}};
}

std::string LatencyTable(const std::vector<LatencyRow>& rows) {
  std::string s = "\n| conc | metric |  p50 ms |  p90 ms |  p99 ms | mean ms |\n";
  s += "|-----:|--------|--------:|--------:|--------:|--------:|\n";
  char buf[256];
  for (const LatencyRow& r : rows) {
    const std::pair<const char*, const LatencySummary*> metrics[] = {
        {"TTFT", r.ttft}, {"TPOT", r.tpot}, {"ITL", r.itl}, {"E2E", r.e2e}};
    for (const auto& [name, m] : metrics) {
      std::snprintf(buf, sizeof buf, "| %4d | %-6s | %7s | %7s | %7s | %7s |\n", r.concurrency,
                    name, MsCell(*m, m->p50).c_str(), MsCell(*m, m->p90).c_str(),
                    MsCell(*m, m->p99).c_str(), MsCell(*m, m->mean).c_str());
      s += buf;
    }
  }
  return s;
}

}  // namespace brisk
