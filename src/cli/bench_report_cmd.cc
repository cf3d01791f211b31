// `brisk bench report FILE.json [--out DIR]`: re-renders every report format (JSON, CSV, Markdown,
// HTML; bench/bench_report.h) from a saved report.json, e.g. after brisk itself learned a new
// chart, or to get the HTML page of a run made on another machine.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "bench/bench_report.h"
#include "cli/cli_util.h"
#include "cli/commands.h"

namespace brisk::cli {
namespace {

struct BenchReportCliOptions {
  std::string file;
  std::string out;  // default: the JSON's folder
};

// A report is a few hundred kB at most; anything far bigger is not one.
constexpr std::uintmax_t kMaxReportBytes = 64u << 20;

Result<std::string> ReadReportFile(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    return Status::Error(path + " is a directory (expected a report.json file)");
  std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (!ec && size > kMaxReportBytes)
    return Status::Error(path + " is too large for a bench report (" + std::to_string(size) +
                         " bytes)");
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::Error("cannot open " + path + ": " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Status::Error("error reading " + path);
  return text.str();
}

int RunBenchReport(const BenchReportCliOptions& o) {
  auto text = ReadReportFile(o.file);
  if (!text.ok()) return ReportError(text.status());
  auto report = BenchReportFromJson(*text);
  if (!report.ok()) return ReportError(report.status().WithContext(o.file));
  std::string dir = o.out;
  if (dir.empty()) {
    dir = std::filesystem::path(o.file).parent_path().string();
    if (dir.empty()) dir = ".";
  }
  Status st = WriteBenchReport(*report, dir);
  if (!st.ok()) return ReportError(st);
  std::printf("%s\nreport: %s\n", report->ToTable().c_str(),
              (std::filesystem::path(dir) / "report.html").string().c_str());
  return 0;
}

}  // namespace

CommandFn AddBenchReportSubcommand(CLI::App& bench) {
  auto o = std::make_shared<BenchReportCliOptions>();
  CLI::App* cmd = bench.add_subcommand(
      "report", "re-render report.json / .csv / .md / .html (with charts) from a report.json");
  cmd->add_option("file", o->file, "a report.json written by brisk bench")->required();
  cmd->add_option("--out", o->out, "output folder (default: the folder of FILE)");
  return [o] { return RunBenchReport(*o); };
}

}  // namespace brisk::cli
