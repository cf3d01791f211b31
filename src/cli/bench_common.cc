#include "cli/bench_common.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>

#include "cli/cli_util.h"
#include "model/default_model.h"

namespace brisk::cli {

std::vector<std::string> SplitList(const std::string& text) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find(',', pos);
    if (end == std::string::npos) end = text.size();
    std::string item = text.substr(pos, end - pos);
    const size_t a = item.find_first_not_of(' ');
    const size_t b = item.find_last_not_of(' ');
    if (a != std::string::npos) out.push_back(item.substr(a, b - a + 1));
    pos = end + 1;
  }
  return out;
}

Result<std::vector<double>> ParseRateList(const std::string& text) {
  std::vector<double> out;
  for (const std::string& item : SplitList(text)) {
    if (item == "inf") {
      out.push_back(INFINITY);
      continue;
    }
    char* end = nullptr;
    const double v = std::strtod(item.c_str(), &end);
    if (end != item.c_str() + item.size() || !(v > 0) || std::isinf(v))
      return Status::Error("'" + item + "' is not a rate > 0 (or inf)");
    out.push_back(v);
  }
  if (out.empty()) return Status::Error("expected a list like 0.5,1,2,inf");
  return out;
}

Result<int> ParseOutputLen(const std::string& text, bool* natural) {
  *natural = false;
  if (text == "natural") {
    *natural = true;
    return 0;
  }
  char* end = nullptr;
  const long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || end != text.c_str() + text.size() || v < 1 || v > (1 << 20))
    return Status::Error("--output-len must be a number of tokens (1..1048576) or 'natural'");
  return int(v);
}

std::string DefaultReportDir() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &tm);
  return BriskHome() + "/bench/" + buf;
}

int FinishBenchReport(const BenchReport& report, const std::string& out_dir, bool json) {
  namespace fs = std::filesystem;
  const std::string dir = out_dir.empty() ? DefaultReportDir() : out_dir;
  if (Status s = WriteBenchReport(report, dir); !s.ok()) return ReportError(s);
  // The server's /bench page shows the latest run; failing to update it is worth a note only.
  const fs::path latest = fs::path(BriskHome()) / "bench" / "latest";
  std::error_code ec;
  fs::create_directories(latest, ec);
  // Copied under a temporary name, then renamed: the server never reads a half-written file.
  for (const char* f : {"report.json", "report.html"}) {
    if (ec) break;
    const fs::path tmp = latest / (std::string(".") + f + ".tmp");
    fs::copy_file(fs::path(dir) / f, tmp, fs::copy_options::overwrite_existing, ec);
    if (!ec) fs::rename(tmp, latest / f, ec);
  }
  if (ec)
    std::fprintf(stderr, "note: could not update %s: %s\n", latest.c_str(), ec.message().c_str());
  std::printf("%s\n", json ? report.ToJson().c_str() : report.ToTable().c_str());
  std::printf("report: %s/report.html\n", fs::absolute(dir).c_str());
  int failed = 0, total = 0;
  for (const BenchPoint& p : report.points) {
    failed += p.failures;
    total += p.requests;
  }
  if (failed > 0) {
    std::string first;
    for (const BenchPoint& p : report.points)
      if (!p.failure_messages.empty()) {
        first = p.failure_messages.front();
        break;
      }
    return ReportError(
        Status::Error(std::to_string(failed) + " of " + std::to_string(total) +
                      " requests failed (per point in the table above); first: " + first));
  }
  return 0;
}

}  // namespace brisk::cli
