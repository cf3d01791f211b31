// The latency parts that `bench engine` and `bench http` print alike, so their reports can be
// laid side by side: one "| conc | metric | p50 ms | ..." table and one JSON shape per summary.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/stats.h"

namespace brisk {

// "12.3", or "-" when the summary is empty.
std::string MsCell(const LatencySummary& s, double v);

// {"count", "mean", "min", "p50", "p90", "p99", "max"}.
nlohmann::ordered_json LatencyJson(const LatencySummary& s);

// One concurrency level's four latency summaries.
struct LatencyRow {
  int concurrency = 0;
  const LatencySummary *ttft, *tpot, *itl, *e2e;
};
// The table, with its heading lines, one row per metric and level.
std::string LatencyTable(const std::vector<LatencyRow>& rows);

}  // namespace brisk
