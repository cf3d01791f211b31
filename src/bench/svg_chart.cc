// Inline SVG line charts (svg_chart.h). Coordinates are written with one decimal: charts are a
// few hundred pixels wide, so finer positions change nothing on screen and only grow the page.
#include "bench/svg_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "util/html_escape.h"

namespace brisk {
namespace {

// Distinguishable on white and for the common colour-vision deficiencies, in this order.
constexpr const char* kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                    "#9467bd", "#8c564b", "#17becf", "#7f7f7f"};
constexpr int kPaletteSize = sizeof kPalette / sizeof kPalette[0];

// Plot area margins: title and legend above, tick labels and the x label below, the y tick
// labels and the rotated y label on the left.
constexpr double kLeft = 68, kRight = 20, kTop = 58, kBottom = 54;

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

// A value for a tooltip: enough digits to read, no exponent for everyday magnitudes.
std::string Value(double v) {
  char buf[48];
  double a = std::fabs(v);
  if (a >= 1e9 || (a > 0 && a < 1e-3))
    std::snprintf(buf, sizeof buf, "%.4g", v);
  else if (a >= 100)
    std::snprintf(buf, sizeof buf, "%.1f", v);
  else if (a >= 1)
    std::snprintf(buf, sizeof buf, "%.2f", v);
  else
    std::snprintf(buf, sizeof buf, "%.3f", v);
  return buf;
}

struct Pt {
  double x, y;
  std::string label;
};

std::string Text(double x, double y, const std::string& text, const char* anchor, const char* cls,
                 const std::string& extra = "") {
  return "<text x=\"" + Num(x) + "\" y=\"" + Num(y) + "\" text-anchor=\"" + anchor + "\" class=\"" +
         cls + "\"" + extra + ">" + XmlEscape(text) + "</text>\n";
}

std::string Open(const LineChart& c) {
  std::string w = std::to_string(c.width), h = std::to_string(c.height);
  return "<svg class=\"chart\" data-metric=\"" + XmlEscape(c.metric) + "\" viewBox=\"0 0 " + w +
         " " + h + "\" width=\"" + w + "\" height=\"" + h + "\" role=\"img\" aria-label=\"" +
         XmlEscape(c.title) + "\">\n<rect class=\"bg\" x=\"0\" y=\"0\" width=\"" + w +
         "\" height=\"" + h + "\" fill=\"#ffffff\"/>\n" +
         Text(c.width / 2.0, 20, c.title, "middle", "title", " font-weight=\"bold\"");
}

}  // namespace

std::vector<double> NiceTicks(double lo, double hi, int target) {
  if (!std::isfinite(lo) || !std::isfinite(hi) || lo > hi || target < 1) return {};
  if (lo == hi) {
    double d = lo == 0 ? 1 : std::fabs(lo) * 0.5;
    lo -= lo == 0 ? 0 : d;
    hi += d;
  }
  double raw = (hi - lo) / target;
  if (!std::isfinite(raw) || raw <= 0) return {};
  double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double r = raw / mag;  // in [1, 10)
  // The smallest of 1, 2, 5, 10 that is not below r (1e-9: log10/pow round-off).
  double f = r <= 1 + 1e-9 ? 1 : r <= 2 + 1e-9 ? 2 : r <= 5 + 1e-9 ? 5 : 10;
  double step = f * mag;
  double k0 = std::floor(lo / step + 1e-9), k1 = std::ceil(hi / step - 1e-9);
  std::vector<double> ticks;
  for (double k = k0; k <= k1 + 0.5 && ticks.size() < 64; k += 1) ticks.push_back(k * step);
  return ticks;
}

std::string FormatTick(double value, double step) {
  int decimals = 0;
  if (step > 0 && step < 1) decimals = std::min(12, (int)std::ceil(-std::log10(step) - 1e-9));
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
  std::string s = buf;
  if (s[0] == '-' && s.find_first_not_of("-0.") == std::string::npos) s.erase(0, 1);
  return s;
}

std::string XmlEscape(const std::string& text) { return HtmlEscape(text); }

namespace {

using DrawnSeries = std::vector<std::pair<const ChartSeries*, std::vector<Pt>>>;

// The drawable points of each series (NaN / inf / out-of-range categories dropped); series left
// without points are left out.
DrawnSeries DrawablePoints(const LineChart& c) {
  const bool categorical = !c.categories.empty();
  const double ncat = (double)c.categories.size();
  DrawnSeries series;
  for (const ChartSeries& s : c.series) {
    std::vector<Pt> pts;
    for (size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
      double x = s.x[i], y = s.y[i];
      if (!std::isfinite(x) || !std::isfinite(y)) continue;
      if (categorical && (x < 0 || x >= ncat || x != std::floor(x))) continue;
      pts.push_back({x, y, i < s.point_labels.size() ? s.point_labels[i] : std::string()});
    }
    if (!pts.empty()) series.emplace_back(&s, std::move(pts));
  }
  return series;
}

// The plot area and the mapping from data to pixels.
struct Plot {
  bool categorical = false;
  double ncat = 0;
  double pl = 0, pr = 0, pt = 0, pb = 0;  // left, right, top, bottom edges
  std::vector<double> xt, yt;             // ticks (xt empty when categorical)
  double py(double y) const { return pb - (y - yt.front()) / (yt.back() - yt.front()) * (pb - pt); }
  double px(double x) const {
    if (categorical) return pl + (x + 0.5) / ncat * (pr - pl);
    return pl + (x - xt.front()) / (xt.back() - xt.front()) * (pr - pl);
  }
};

// Ticks covering every point (and the reference line); false for absurd magnitudes.
bool LayOut(const LineChart& c, const DrawnSeries& series, bool reference, Plot* p) {
  double xmin = INFINITY, xmax = -INFINITY, ymin = INFINITY, ymax = -INFINITY;
  for (const auto& [s, pts] : series)
    for (const Pt& q : pts) {
      xmin = std::min(xmin, q.x), xmax = std::max(xmax, q.x);
      ymin = std::min(ymin, q.y), ymax = std::max(ymax, q.y);
    }
  if (reference) ymin = std::min(ymin, c.reference_y), ymax = std::max(ymax, c.reference_y);
  if (c.y_from_zero && ymin > 0) ymin = 0;
  p->categorical = !c.categories.empty();
  p->ncat = (double)c.categories.size();
  p->yt = NiceTicks(ymin, ymax);
  p->xt = p->categorical ? std::vector<double>{} : NiceTicks(xmin, xmax);
  p->pl = kLeft, p->pr = c.width - kRight, p->pt = kTop, p->pb = c.height - kBottom;
  return p->yt.size() >= 2 && (p->categorical || p->xt.size() >= 2);
}

// Grid, ticks, axis lines and axis labels.
std::string Axes(const LineChart& c, const Plot& p) {
  std::string o;
  const double ystep = p.yt[1] - p.yt[0];
  for (double y : p.yt) {
    o += "<line class=\"grid\" x1=\"" + Num(p.pl) + "\" x2=\"" + Num(p.pr) + "\" y1=\"" +
         Num(p.py(y)) + "\" y2=\"" + Num(p.py(y)) + "\" stroke=\"#e3e3e3\"/>\n";
    o += Text(p.pl - 6, p.py(y) + 4, FormatTick(y, ystep), "end", "tick");
  }
  // X ticks: numeric ticks, or every category label (every k-th when they would overlap).
  if (p.categorical) {
    size_t every = std::max<size_t>(1, (size_t)std::ceil(p.ncat / 12));
    for (size_t i = 0; i < c.categories.size(); i += every)
      o += Text(p.px((double)i), p.pb + 18, c.categories[i], "middle", "tick");
  } else {
    const double xstep = p.xt[1] - p.xt[0];
    for (double x : p.xt) o += Text(p.px(x), p.pb + 18, FormatTick(x, xstep), "middle", "tick");
  }
  o += "<line class=\"axis\" x1=\"" + Num(p.pl) + "\" x2=\"" + Num(p.pr) + "\" y1=\"" + Num(p.pb) +
       "\" y2=\"" + Num(p.pb) + "\" stroke=\"#555\"/>\n";
  o += "<line class=\"axis\" x1=\"" + Num(p.pl) + "\" x2=\"" + Num(p.pl) + "\" y1=\"" + Num(p.pt) +
       "\" y2=\"" + Num(p.pb) + "\" stroke=\"#555\"/>\n";
  o += Text((p.pl + p.pr) / 2, c.height - 12, c.x_label, "middle", "label");
  const double ly = (p.pt + p.pb) / 2;
  o += Text(16, ly, c.y_label, "middle", "label", " transform=\"rotate(-90 16 " + Num(ly) + ")\"");
  return o;
}

// The dashed reference line (the SLO) and its label.
std::string ReferenceLine(const LineChart& c, const Plot& p) {
  const double ry = p.py(c.reference_y);
  return "<line class=\"reference\" x1=\"" + Num(p.pl) + "\" x2=\"" + Num(p.pr) + "\" y1=\"" +
         Num(ry) + "\" y2=\"" + Num(ry) +
         "\" stroke=\"#b00020\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\"/>\n" +
         Text(p.pr - 4, ry - 5, c.reference_label, "end", "reflabel", " fill=\"#b00020\"");
}

// Each series' polyline and markers (with tooltips), then its legend entry above the plot.
std::string SeriesAndLegend(const LineChart& c, const DrawnSeries& series, const Plot& p) {
  std::string o;
  double lx = p.pl;
  for (size_t i = 0; i < series.size(); ++i) {
    const auto& [s, pts] = series[i];
    const std::string color = kPalette[i % kPaletteSize];
    std::string points;
    for (const Pt& q : pts)
      points += (points.empty() ? "" : " ") + Num(p.px(q.x)) + "," + Num(p.py(q.y));
    o += "<polyline class=\"series\" data-series=\"" + XmlEscape(s->name) +
         "\" fill=\"none\" stroke=\"" + color + "\" stroke-width=\"2\" points=\"" + points +
         "\"/>\n";
    for (const Pt& q : pts) {
      std::string tip = s->name + ": " + Value(q.y) + " at " +
                        (p.categorical ? c.categories[(size_t)q.x] : Value(q.x));
      if (!q.label.empty()) tip += " (" + q.label + ")";
      o += "<circle cx=\"" + Num(p.px(q.x)) + "\" cy=\"" + Num(p.py(q.y)) + "\" r=\"3\" fill=\"" +
           color + "\"><title>" + XmlEscape(tip) + "</title></circle>\n";
    }
    o += "<line x1=\"" + Num(lx) + "\" x2=\"" + Num(lx + 18) + "\" y1=\"40\" y2=\"40\" stroke=\"" +
         color + "\" stroke-width=\"2\"/>\n";
    o += Text(lx + 22, 44, s->name, "start", "legend");
    lx += 22 + 7.0 * (double)s->name.size() + 16;  // ~7 px per character at the legend's size
  }
  return o;
}

}  // namespace

std::string RenderLineChart(const LineChart& c) {
  const DrawnSeries series = DrawablePoints(c);
  std::string o = Open(c);
  if (series.empty()) {
    o += Text(c.width / 2.0, c.height / 2.0, "no data", "middle", "nodata");
    return o + "</svg>\n";
  }
  const bool reference = c.has_reference && std::isfinite(c.reference_y);
  Plot plot;
  if (!LayOut(c, series, reference, &plot)) {  // only for absurd magnitudes
    o += Text(c.width / 2.0, c.height / 2.0, "no data (values out of range)", "middle", "nodata");
    return o + "</svg>\n";
  }
  o += Axes(c, plot);
  if (reference) o += ReferenceLine(c, plot);
  return o + SeriesAndLegend(c, series, plot) + "</svg>\n";
}

}  // namespace brisk
