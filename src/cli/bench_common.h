// What `brisk bench` and `brisk tune` share on the command line: list parsing and the end of a
// run (reports written, "latest" copy for the server's /bench page, table or JSON printed, exit
// code).
#pragma once

#include <string>
#include <vector>

#include "bench/bench_report.h"
#include "util/status.h"

namespace brisk::cli {

// "a,b,c" -> {"a","b","c"} (items trimmed of spaces; empty items dropped).
std::vector<std::string> SplitList(const std::string& text);
// "0.5,1,2,inf" -> rates (> 0; "inf" = all at once).
Result<std::vector<double>> ParseRateList(const std::string& text);
// "128" -> 128; "natural" -> 0 with *natural = true.
Result<int> ParseOutputLen(const std::string& text, bool* natural);

// The default report folder: $BRISK_HOME/bench/<UTC time>.
std::string DefaultReportDir();

// Writes every format into `out_dir` (default DefaultReportDir()), copies report.html and
// report.json into $BRISK_HOME/bench/latest/, prints the table (or JSON) on stdout and the
// report path. Exit code: 0, or 1 when any request failed (the table says which and why).
int FinishBenchReport(const BenchReport& report, const std::string& out_dir, bool json);

}  // namespace brisk::cli
