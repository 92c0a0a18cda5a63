// Line charts as plain SVG (no scripts, no fetched fonts): `fedmf demo|train
// --plot` and the server's dashboard draw a job's per-round history with it.
// Every series is one <polyline class="series"> whose data-series attribute
// names it and whose data-values attribute holds its points as
// "x:y x:y ..." in the data's own units (%.6g), so a test or a reader can
// check the plotted numbers without inverting the pixel mapping.
#ifndef FEDMF_COMMON_PLOT_SVG_CHART_H_
#define FEDMF_COMMON_PLOT_SVG_CHART_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace fedmf::plot {

struct Series {
  std::string name;                               // legend text, data-series
  std::vector<std::pair<double, double>> points;  // (x, y); non-finite y skipped
  // The final model's value (issue #56: after Stage 3, which the per-round
  // points never show): drawn in the series' colour as a marked point
  // <circle class="final" data-series=NAME data-value="x:y">, linked to the
  // last per-round point by a dotted segment; not part of the polyline.
  std::optional<std::pair<double, double>> final_point;
};

// A horizontal line across the plot at `y` (e.g. a baseline's test MSE):
// <line class="reference" data-series=NAME data-value=Y>, dashed, with its
// name and value in the legend.
struct Reference {
  std::string name;
  double y = 0;
};

struct LineChart {
  std::string id;  // the chart's <g id=...>, e.g. "epsilon" (letters, digits, '-')
  std::string title;
  std::string x_label;
  std::string y_label;
  std::vector<Series> series;
  std::vector<Reference> references;  // drawn when finite
};

// One chart as an <svg> element of `width` x `height` pixels. Axes span the
// data, final points and references included (y from min(0, lowest) when
// every y >= 0); a chart without points says "no data".
std::string SvgChart(const LineChart& chart, int width = 640, int height = 300);

// Charts stacked vertically in one standalone SVG document (the XML
// declaration and namespace included), for --plot FILE.svg.
std::string SvgDocument(const std::vector<LineChart>& charts, int width = 640,
                        int chart_height = 300);

// Text for SVG/HTML content and attribute values.
std::string EscapeXml(const std::string& s);

}  // namespace fedmf::plot

#endif  // FEDMF_COMMON_PLOT_SVG_CHART_H_
