// What every human-readable bench report shows (bench_report.h): the header lines and the result
// columns. The terminal table, the Markdown report and the HTML page all take them from here, so
// they cannot drift apart. Internal to src/bench (report_text.cc, report_html.cc).
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "bench/bench_report.h"

namespace brisk {

inline constexpr const char* kSyntheticNote = "random weights: speeds are real, texts are noise";

// One result column: its heading, whether it holds numbers (right-aligned), and the cell text.
struct ReportColumn {
  std::string header;
  bool numeric = true;
  std::function<std::string(const BenchPoint&)> cell;
};

// The label column, ok/fail, throughput, goodput (with an SLO), TTFT/TPOT p50+p99, ITL p99,
// E2E p99, peak RSS (when any point measured it), server batch size (when any point has it), the
// server's gauges (KV cache use, running and waiting requests: --url with vLLM's metrics) and the
// GPUs (utilisation, memory, power: nvidia-smi on the PATH), each only when a point has them.
std::vector<ReportColumn> ReportColumns(const BenchReport& report);

// ("model", "qwen (Q4_K_M, random weights: ...)"), ... in display order; empty items left out.
std::vector<std::pair<std::string, std::string>> ReportHeader(const BenchReport& report);

// "ttft <= 500 ms, tpot <= 50 ms" or "none".
std::string SloText(const Slo& slo);

// The point's own label, or one made from its coordinates (hand-made reports may lack one).
std::string PointLabel(const BenchPoint& p);

// printf("%.*f"), or "-" for NaN (a reader sees a hole rather than "nan").
std::string Fixed(double v, int decimals);

// A point's failure messages, each as "LABEL: message" (nothing for points without any).
std::vector<std::string> FailureLines(const BenchReport& report);

bool AnyServerSide(const BenchReport& report);
bool AnyPeakRss(const BenchReport& report);
bool AnyGpu(const BenchReport& report);
bool AnyServerGauges(const BenchReport& report);

}  // namespace brisk
