// Line charts as plain SVG (no scripts, no fetched fonts): `fedmf demo|train
// --plot` and the server's dashboard draw a job's per-round history with it.
// Every series is one <polyline class="series"> whose data-series attribute
// names it and whose data-values attribute holds its points as
// "x:y x:y ..." in the data's own units (%.6g), so a test or a reader can
// check the plotted numbers without inverting the pixel mapping.
#ifndef FEDMF_COMMON_PLOT_SVG_CHART_H_
#define FEDMF_COMMON_PLOT_SVG_CHART_H_

#include <string>
#include <utility>
#include <vector>

namespace fedmf::plot {

struct Series {
  std::string name;                               // legend text, data-series
  std::vector<std::pair<double, double>> points;  // (x, y); non-finite y skipped
};

struct LineChart {
  std::string id;  // the chart's <g id=...>, e.g. "epsilon" (letters, digits, '-')
  std::string title;
  std::string x_label;
  std::string y_label;
  std::vector<Series> series;
};

// One chart as an <svg> element of `width` x `height` pixels. Axes span the
// data (y from min(0, lowest) when every y >= 0); an empty chart says "no data".
std::string SvgChart(const LineChart& chart, int width = 640, int height = 300);

// Charts stacked vertically in one standalone SVG document (the XML
// declaration and namespace included), for --plot FILE.svg.
std::string SvgDocument(const std::vector<LineChart>& charts, int width = 640,
                        int chart_height = 300);

// Text for SVG/HTML content and attribute values.
std::string EscapeXml(const std::string& s);

}  // namespace fedmf::plot

#endif  // FEDMF_COMMON_PLOT_SVG_CHART_H_
