// The SVG line-chart writer (bench/svg_chart.h): ticks worked out by hand from the 1-2-5 rule,
// pixel positions from the documented margins, escaping and the no-data cases.
#include "bench/svg_chart.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace brisk {
namespace {

void ExpectTicks(double lo, double hi, const std::vector<double>& want) {
  std::vector<double> got = NiceTicks(lo, hi);
  ASSERT_EQ(got.size(), want.size()) << lo << ".." << hi;
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(got[i], want[i], 1e-9 * std::max(1.0, std::fabs(want[i]))) << lo << ".." << hi;
}

TEST(NiceTicksTest, KnownRanges) {
  ExpectTicks(0, 97, {0, 20, 40, 60, 80, 100});               // 97/5 = 19.4 -> step 20
  ExpectTicks(0, 100, {0, 20, 40, 60, 80, 100});              // exactly 20: no extra tick
  ExpectTicks(0, 1, {0, 0.2, 0.4, 0.6, 0.8, 1.0});            // 0.2
  ExpectTicks(-15, 42, {-20, 0, 20, 40, 60});                 // 11.4 -> 20
  ExpectTicks(120, 4890, {0, 1000, 2000, 3000, 4000, 5000});  // 954 -> 1000
  ExpectTicks(1, 16, {0, 5, 10, 15, 20});                     // 3 -> 5
  ExpectTicks(0.0031, 0.0118, {0.002, 0.004, 0.006, 0.008, 0.010, 0.012});  // 0.00174 -> 0.002
  ExpectTicks(0, 0, {0, 0.2, 0.4, 0.6, 0.8, 1.0});                          // nothing to show: 0..1
  ExpectTicks(3, 3, {1, 2, 3, 4, 5});  // widened to 1.5..4.5, step 1
}

TEST(NiceTicksTest, RejectsNonFinite) {
  EXPECT_TRUE(NiceTicks(NAN, 1).empty());
  EXPECT_TRUE(NiceTicks(0, INFINITY).empty());
  EXPECT_TRUE(NiceTicks(2, 1).empty());
}

TEST(FormatTickTest, DecimalsFollowTheStep) {
  EXPECT_EQ(FormatTick(0.4, 0.2), "0.4");
  EXPECT_EQ(FormatTick(0.30000000000000004, 0.1), "0.3");
  EXPECT_EQ(FormatTick(20, 20), "20");
  EXPECT_EQ(FormatTick(1500, 500), "1500");
  EXPECT_EQ(FormatTick(0.05, 0.05), "0.05");
  EXPECT_EQ(FormatTick(-1e-12, 0.2), "0.0");  // no "-0.0"
  EXPECT_EQ(FormatTick(-20, 20), "-20");
}

TEST(XmlEscapeTest, AllFive) {
  EXPECT_EQ(XmlEscape("<b>&\"x'"), "&lt;b&gt;&amp;&quot;x&#39;");
  EXPECT_EQ(XmlEscape("plain"), "plain");
}

LineChart Basic() {
  LineChart c;
  c.metric = "m";
  c.title = "T";
  c.x_label = "x";
  c.y_label = "y";
  return c;
}

TEST(RenderLineChartTest, PixelPositionsFromMargins) {
  LineChart c = Basic();  // 640 x 340; plot area x 68..620, y 58..286
  c.series.push_back({"s", {0, 100}, {0, 100}, {}});
  const std::string svg = RenderLineChart(c);
  EXPECT_NE(svg.find("points=\"68.0,286.0 620.0,58.0\""), std::string::npos) << svg;
  EXPECT_NE(svg.find("<svg class=\"chart\" data-metric=\"m\""), std::string::npos);
  EXPECT_NE(svg.find("data-series=\"s\""), std::string::npos);
  // y ticks 0..100 by 20 as labels.
  for (const char* t : {">0<", ">20<", ">40<", ">60<", ">80<", ">100<"})
    EXPECT_NE(svg.find(t), std::string::npos) << t;
  EXPECT_EQ(svg.find("xmlns"), std::string::npos);  // inline in HTML: no namespace URL
}

TEST(RenderLineChartTest, SkipsNanAndInfinity) {
  LineChart c = Basic();
  c.series.push_back({"s", {0, 1, 2, 3, 4}, {10, NAN, 30, INFINITY, 50}, {}});
  c.series.push_back({"bad", {0, 1}, {NAN, -INFINITY}, {}});  // nothing drawable: left out
  const std::string svg = RenderLineChart(c);
  EXPECT_EQ(svg.find("nan"), std::string::npos);
  EXPECT_EQ(svg.find("inf"), std::string::npos);
  size_t at = svg.find("points=\"");
  ASSERT_NE(at, std::string::npos);
  std::string pts = svg.substr(at + 8, svg.find('"', at + 8) - at - 8);
  EXPECT_EQ(std::count(pts.begin(), pts.end(), ','), 3) << pts;  // 3 of the 5 points
  EXPECT_EQ(svg.find("data-series=\"bad\""), std::string::npos);
  EXPECT_EQ(svg.find("no data"), std::string::npos);
}

TEST(RenderLineChartTest, NoData) {
  LineChart c = Basic();
  EXPECT_NE(RenderLineChart(c).find(">no data<"), std::string::npos);
  c.series.push_back({"s", {}, {}, {}});
  c.series.push_back({"t", {1, 2}, {NAN, NAN}, {}});
  const std::string svg = RenderLineChart(c);
  EXPECT_NE(svg.find(">no data<"), std::string::npos);
  EXPECT_EQ(svg.find("<polyline"), std::string::npos);
  EXPECT_NE(svg.find("data-metric=\"m\""), std::string::npos);  // still findable
}

TEST(RenderLineChartTest, CategoricalReferenceAndEscaping) {
  LineChart c = Basic();
  c.title = "a<b";
  c.categories = {"fcfs", "<prefill>"};
  c.series.push_back({"p99 \"x\"", {0, 1, 7}, {5, 6, 7}, {"one", "two", "seven"}});
  c.has_reference = true;
  c.reference_y = 40;
  c.reference_label = "SLO 40 ms";
  const std::string svg = RenderLineChart(c);
  EXPECT_NE(svg.find(">a&lt;b<"), std::string::npos);
  EXPECT_NE(svg.find(">fcfs</text>"), std::string::npos);
  EXPECT_NE(svg.find(">&lt;prefill&gt;</text>"), std::string::npos);
  EXPECT_NE(svg.find("data-series=\"p99 &quot;x&quot;\""), std::string::npos);
  EXPECT_EQ(svg.find("<prefill>"), std::string::npos);
  // Category index 7 is out of range: two markers. Bands of 276 px: centres at 206 and 482.
  size_t circles = 0;
  for (size_t at = svg.find("<circle"); at != std::string::npos; at = svg.find("<circle", at + 1))
    ++circles;
  EXPECT_EQ(circles, 2u);
  EXPECT_NE(svg.find("cx=\"206.0\""), std::string::npos) << svg;
  EXPECT_NE(svg.find("cx=\"482.0\""), std::string::npos);
  EXPECT_NE(svg.find("(two)</title>"), std::string::npos);
  // Dashed SLO line; the y axis reaches it (ticks 0..40).
  EXPECT_NE(svg.find("class=\"reference\""), std::string::npos);
  EXPECT_NE(svg.find("stroke-dasharray"), std::string::npos);
  EXPECT_NE(svg.find(">SLO 40 ms<"), std::string::npos);
  EXPECT_NE(svg.find(">40<"), std::string::npos);
}

}  // namespace
}  // namespace brisk
