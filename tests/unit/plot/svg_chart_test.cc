#include "common/plot/svg_chart.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"

namespace fedmf::plot {
namespace {

// The attribute `name="..."` of the first element containing `anchor`.
std::string Attribute(const std::string& svg, const std::string& anchor, const std::string& name) {
  const size_t at = svg.find(anchor);
  if (at == std::string::npos) return "<missing element>";
  const size_t open = svg.rfind('<', at);
  const size_t close = svg.find('>', at);
  const std::string element = svg.substr(open, close - open);
  const std::string key = name + "=\"";
  const size_t k = element.find(key);
  if (k == std::string::npos) return "<missing attribute>";
  const size_t v = k + key.size();
  return element.substr(v, element.find('"', v) - v);
}

LineChart Epsilon() {
  return LineChart{
      "epsilon",
      "epsilon per party",
      "round",
      "epsilon",
      {{"bank-a", {{1, 0.5}, {2, 0.75}, {3, 1.0}}}, {"shop<b>", {{1, 0.25}, {2, 0.5}}}}};
}

TEST(SvgChartTest, OnePolylinePerSeriesWithItsValuesAndPixels) {
  const std::string svg = SvgChart(Epsilon(), 640, 300);
  EXPECT_TRUE(absl::StartsWith(svg, "<svg class=\"chart\" id=\"epsilon\""));
  EXPECT_EQ(Attribute(svg, "data-series=\"bank-a\"", "data-values"), "1:0.5 2:0.75 3:1");
  // Names are escaped, not markup.
  EXPECT_EQ(Attribute(svg, "data-series=\"shop&lt;b&gt;\"", "data-values"), "1:0.25 2:0.5");
  EXPECT_FALSE(absl::StrContains(svg, "<b>"));
  // x spans 1..3 over [80, 640-150]; y spans 0..1 over [30+228, 30].
  const std::vector<std::string> pts =
      absl::StrSplit(Attribute(svg, "data-series=\"bank-a\"", "points"), ' ');
  ASSERT_EQ(pts.size(), 3u);
  EXPECT_EQ(pts[0], "80.0,144.0");                        // (1, 0.5)
  EXPECT_EQ(pts[2], "490.0,30.0");                        // (3, 1.0)
  EXPECT_TRUE(absl::StrContains(svg, ">bank-a</text>"));  // legend
}

TEST(SvgChartTest, NonFiniteValuesAreLeftOutAndAnEmptyChartSaysSo) {
  LineChart c{"mse", "test MSE", "round", "MSE", {{"a", {{1, 1.0}, {2, NAN}, {3, INFINITY}}}}};
  EXPECT_EQ(Attribute(SvgChart(c), "data-series=\"a\"", "data-values"), "1:1");
  LineChart empty{"mse", "test MSE", "round", "MSE", {{"a", {}}}};
  const std::string svg = SvgChart(empty);
  EXPECT_TRUE(absl::StrContains(svg, ">no data</text>"));
  EXPECT_FALSE(absl::StrContains(svg, "<polyline"));
}

// Issue #56: the final model's value as the last point, marked, apart from
// the per-round polyline; baselines as labelled horizontal lines; both
// inside the axes' range.
TEST(SvgChartTest, FinalPointIsMarkedAndReferencesAreLabelledLines) {
  LineChart c{"mse", "test MSE", "round", "test MSE", {{"bank-a", {{1, 1.6}, {2, 1.5}}}}};
  c.series[0].final_point = {{3, 0.8}};
  c.references = {{"local only", 0.95}, {"central", 0.4}, {"unmeasured", NAN}};
  const std::string svg = SvgChart(c, 640, 300);
  // The polyline keeps the per-round points alone.
  EXPECT_EQ(Attribute(svg, "<polyline class=\"series\" data-series=\"bank-a\"", "data-values"),
            "1:1.6 2:1.5");
  EXPECT_EQ(Attribute(svg, "<circle class=\"final\" data-series=\"bank-a\"", "data-value"),
            "3:0.8");
  // x spans 1..3 (the final point's x is the right end), y 0..1.6.
  EXPECT_EQ(Attribute(svg, "<circle class=\"final\"", "cx"), "490.0");
  EXPECT_EQ(Attribute(svg, "<circle class=\"final\"", "cy"), "144.0");  // 258 - 0.8 / 1.6 * 228
  EXPECT_TRUE(absl::StrContains(svg, "<line class=\"final-link\" x1=\"285.0\" y1=\"44.2\""));
  EXPECT_TRUE(absl::StrContains(svg, ">final model</text>"));
  EXPECT_EQ(Attribute(svg, "data-series=\"local only\"", "data-value"), "0.95");
  EXPECT_EQ(Attribute(svg, "data-series=\"local only\"", "x1"), "80");
  EXPECT_EQ(Attribute(svg, "data-series=\"local only\"", "x2"), "490");
  EXPECT_EQ(Attribute(svg, "data-series=\"central\"", "y1"), "201.0");  // 258 - 0.4 / 1.6 * 228
  EXPECT_TRUE(absl::StrContains(svg, ">local only 0.95</text>"));
  EXPECT_TRUE(absl::StrContains(svg, ">central 0.4</text>"));
  EXPECT_FALSE(absl::StrContains(svg, "unmeasured"));
  // A reference below every point widens the y range down to it.
  LineChart low{"mse", "t", "round", "MSE", {{"a", {{1, 2.0}, {2, 3.0}}}}};
  low.references = {{"floor", -1.0}};
  EXPECT_EQ(Attribute(SvgChart(low), "data-series=\"floor\"", "y1"), "258.0");
  // No per-round point, only the final one: no empty polyline.
  LineChart only_final{"mse", "t", "round", "MSE", {{"a", {}}}};
  only_final.series[0].final_point = {{7, 0.9}};
  const std::string f = SvgChart(only_final);
  EXPECT_FALSE(absl::StrContains(f, "<polyline"));
  EXPECT_FALSE(absl::StrContains(f, "final-link"));
  EXPECT_EQ(Attribute(f, "<circle class=\"final\"", "data-value"), "7:0.9");
}

TEST(SvgChartTest, DocumentStacksChartsInOneStandaloneSvg) {
  LineChart mse{"mse", "test MSE", "round", "MSE", {{"bank-a", {{1, 2.0}, {2, 1.5}}}}};
  const std::string doc = SvgDocument({mse, Epsilon()}, 640, 300);
  EXPECT_TRUE(absl::StartsWith(doc, "<?xml version=\"1.0\""));
  EXPECT_TRUE(absl::StrContains(doc, "height=\"600\""));
  EXPECT_TRUE(absl::StrContains(doc, "<g transform=\"translate(0 300)\">"));
  size_t polylines = 0;
  for (size_t at = doc.find("<polyline"); at != std::string::npos;
       at = doc.find("<polyline", at + 1)) {
    ++polylines;
  }
  EXPECT_EQ(polylines, 3u);
}

}  // namespace
}  // namespace fedmf::plot
