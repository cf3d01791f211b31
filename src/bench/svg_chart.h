// A small line-chart writer for the HTML bench report (bench_report.h ToHtml): it returns an
// inline <svg> element (no xmlns, no script, no external reference), so the page stays one
// self-contained file that any browser shows without network access.
//
// What it draws: a title, axis labels, "nice" ticks (steps of 1, 2 or 5 times a power of ten),
// one polyline plus point markers per series (each marker has a <title> tooltip), a legend, and
// an optional dashed horizontal reference line (the SLO). The x axis is numeric, or categorical
// when `categories` is set (then x values are indices into it). Points with a NaN or infinite
// coordinate are skipped; a series left without points is left out; a chart without any point
// says "no data". All text is XML-escaped.
#pragma once

#include <string>
#include <vector>

namespace brisk {

struct ChartSeries {
  std::string name;
  std::vector<double> x, y;  // same length; x is a category index for categorical charts
  std::vector<std::string> point_labels;  // optional, shown in each point's tooltip
};

struct LineChart {
  std::string metric;  // the data-metric attribute (what tests and styles select on)
  std::string title, x_label, y_label;
  std::vector<std::string> categories;  // non-empty: categorical x axis with these labels
  std::vector<ChartSeries> series;
  bool has_reference = false;  // a dashed horizontal line at reference_y (e.g. the SLO)
  double reference_y = 0;
  std::string reference_label;
  bool y_from_zero = true;  // start the y axis at 0 when all values are positive
  int width = 640, height = 340;
};

// Tick positions covering [lo, hi] with about `target` intervals, each step 1, 2 or 5 x 10^k:
// NiceTicks(0, 97) = {0, 20, 40, 60, 80, 100}. lo == hi is widened around the value. Empty for
// non-finite input or lo > hi.
std::vector<double> NiceTicks(double lo, double hi, int target = 5);

// The tick label: as many decimals as the step needs, no "-0" (FormatTick(0.4, 0.2) = "0.4").
std::string FormatTick(double value, double step);

// & < > " ' as entities: safe inside element text and attribute values.
std::string XmlEscape(const std::string& text);

// The <svg class="chart" data-metric="..."> element.
std::string RenderLineChart(const LineChart& chart);

}  // namespace brisk
