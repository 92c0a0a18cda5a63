#include "common/plot/svg_chart.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"

namespace fedmf::plot {
namespace {

constexpr int kLeft = 80, kRight = 150, kTop = 30, kBottom = 42;
// Distinguishable on white, in order (Okabe-Ito without the yellow).
constexpr const char* kColours[] = {"#0072b2", "#d55e00", "#009e73", "#cc79a7",
                                    "#e69f00", "#56b4e9", "#000000"};

struct Range {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  void Add(double v) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  bool empty() const { return !(lo <= hi); }
  // A zero-width range gets a unit span so the mapping stays defined.
  void Pad() {
    if (hi - lo < 1e-12) {
      lo -= 0.5;
      hi += 0.5;
    }
  }
};

}  // namespace

std::string EscapeXml(const std::string& s) {
  return absl::StrReplaceAll(
      s, {{"&", "&amp;"}, {"<", "&lt;"}, {">", "&gt;"}, {"\"", "&quot;"}, {"'", "&#39;"}});
}

std::string SvgChart(const LineChart& chart, int width, int height) {
  Range x, y;
  auto finite = [](const std::pair<double, double>& p) {
    return std::isfinite(p.first) && std::isfinite(p.second);
  };
  for (const Series& s : chart.series) {
    for (const auto& p : s.points) {
      if (!finite(p)) continue;
      x.Add(p.first);
      y.Add(p.second);
    }
    if (s.final_point && finite(*s.final_point)) {
      x.Add(s.final_point->first);
      y.Add(s.final_point->second);
    }
  }
  if (!x.empty()) {
    for (const Reference& r : chart.references) {
      if (std::isfinite(r.y)) y.Add(r.y);
    }
  }
  std::string out = absl::StrFormat(
      "<svg class=\"chart\" id=\"%s\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
      "xmlns=\"http://www.w3.org/2000/svg\" font-family=\"sans-serif\" font-size=\"12\">\n"
      "<text class=\"title\" x=\"%d\" y=\"18\" font-size=\"14\">%s</text>\n",
      EscapeXml(chart.id), width, height, width, height, kLeft, EscapeXml(chart.title));
  const int plot_w = width - kLeft - kRight, plot_h = height - kTop - kBottom;
  if (x.empty()) {
    absl::StrAppendFormat(&out, "<text class=\"empty\" x=\"%d\" y=\"%d\">no data</text>\n</svg>\n",
                          kLeft, kTop + plot_h / 2);
    return out;
  }
  if (y.lo >= 0) y.lo = 0;
  x.Pad();
  y.Pad();
  auto px = [&](double v) { return kLeft + (v - x.lo) / (x.hi - x.lo) * plot_w; };
  auto py = [&](double v) { return kTop + plot_h - (v - y.lo) / (y.hi - y.lo) * plot_h; };
  // Axes, with the ends of each range as ticks.
  absl::StrAppendFormat(&out,
                        "<g class=\"axes\" stroke=\"#444\"><line x1=\"%d\" y1=\"%d\" x2=\"%d\" "
                        "y2=\"%d\"/><line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/></g>\n",
                        kLeft, kTop, kLeft, kTop + plot_h, kLeft, kTop + plot_h, kLeft + plot_w,
                        kTop + plot_h);
  for (double v : {y.lo, (y.lo + y.hi) / 2, y.hi}) {
    absl::StrAppendFormat(
        &out, "<text class=\"ytick\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.3g</text>\n",
        kLeft - 6, py(v) + 4, v);
  }
  for (double v : {x.lo, x.hi}) {
    absl::StrAppendFormat(
        &out, "<text class=\"xtick\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%.4g</text>\n",
        px(v), kTop + plot_h + 16, v);
  }
  absl::StrAppendFormat(
      &out,
      "<text class=\"xlabel\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text>\n"
      "<text class=\"ylabel\" x=\"12\" y=\"%d\" text-anchor=\"middle\" "
      "transform=\"rotate(-90 12 %d)\">%s</text>\n",
      kLeft + plot_w / 2, height - 8, EscapeXml(chart.x_label), kTop + plot_h / 2,
      kTop + plot_h / 2, EscapeXml(chart.y_label));
  int k = 0;  // legend rows
  bool any_final = false;
  for (const Series& s : chart.series) {
    const char* colour = kColours[k % std::size(kColours)];
    std::vector<std::string> pixels, values;
    for (const auto& p : s.points) {
      if (!finite(p)) continue;
      pixels.push_back(absl::StrFormat("%.1f,%.1f", px(p.first), py(p.second)));
      values.push_back(absl::StrFormat("%.6g:%.6g", p.first, p.second));
    }
    if (!pixels.empty()) {
      absl::StrAppendFormat(&out,
                            "<polyline class=\"series\" data-series=\"%s\" data-values=\"%s\" "
                            "points=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"/>\n",
                            EscapeXml(s.name), absl::StrJoin(values, " "),
                            absl::StrJoin(pixels, " "), colour);
    }
    if (s.final_point && finite(*s.final_point)) {
      any_final = true;
      const auto [fx, fy] = *s.final_point;
      // Dotted from the last per-round point: what the final stage changed.
      for (auto last = s.points.rbegin(); last != s.points.rend(); ++last) {
        if (!finite(*last)) continue;
        absl::StrAppendFormat(&out,
                              "<line class=\"final-link\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                              "y2=\"%.1f\" stroke=\"%s\" stroke-width=\"1.5\" "
                              "stroke-dasharray=\"2 3\"/>\n",
                              px(last->first), py(last->second), px(fx), py(fy), colour);
        break;
      }
      absl::StrAppendFormat(&out,
                            "<circle class=\"final\" data-series=\"%s\" data-value=\"%.6g:%.6g\" "
                            "cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"%s\" stroke=\"#000\"/>\n",
                            EscapeXml(s.name), fx, fy, px(fx), py(fy), colour);
    }
    const int ly = kTop + 8 + 18 * k;
    absl::StrAppendFormat(
        &out,
        "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" "
        "stroke-width=\"2\"/><text class=\"legend\" x=\"%d\" y=\"%d\">%s</text>\n",
        width - kRight + 12, ly, width - kRight + 30, ly, colour, width - kRight + 36, ly + 4,
        EscapeXml(s.name));
    ++k;
  }
  const int legend_x = width - kRight + 12;
  if (any_final) {
    const int ly = kTop + 8 + 18 * k++;
    absl::StrAppendFormat(&out,
                          "<circle cx=\"%d\" cy=\"%d\" r=\"5\" fill=\"#fff\" stroke=\"#000\"/>"
                          "<text class=\"legend\" x=\"%d\" y=\"%d\">final model</text>\n",
                          legend_x + 9, ly, legend_x + 24, ly + 4);
  }
  // Baselines: dashed, black then grey, each with its value in the legend.
  static constexpr const char* kDash[] = {"8 4", "3 3", "12 3 3 3"};
  int r = 0;
  for (const Reference& ref : chart.references) {
    if (!std::isfinite(ref.y)) continue;
    const char* colour = r % 2 == 0 ? "#000000" : "#777777";
    const char* dash = kDash[r % std::size(kDash)];
    absl::StrAppendFormat(&out,
                          "<line class=\"reference\" data-series=\"%s\" data-value=\"%.6g\" "
                          "x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\" "
                          "stroke-width=\"1.5\" stroke-dasharray=\"%s\"/>\n",
                          EscapeXml(ref.name), ref.y, kLeft, py(ref.y), kLeft + plot_w, py(ref.y),
                          colour, dash);
    const int ly = kTop + 8 + 18 * k++;
    absl::StrAppendFormat(&out,
                          "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" "
                          "stroke-width=\"1.5\" stroke-dasharray=\"%s\"/><text class=\"legend\" "
                          "x=\"%d\" y=\"%d\">%s %.4g</text>\n",
                          legend_x, ly, legend_x + 18, ly, colour, dash, legend_x + 24, ly + 4,
                          EscapeXml(ref.name), ref.y);
    ++r;
  }
  out += "</svg>\n";
  return out;
}

std::string SvgDocument(const std::vector<LineChart>& charts, int width, int chart_height) {
  const int height = chart_height * std::max<int>(1, static_cast<int>(charts.size()));
  std::string out = absl::StrFormat(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" "
      "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">\n<rect width=\"100%%\" height=\"100%%\" "
      "fill=\"white\"/>\n",
      width, height, width, height);
  for (size_t i = 0; i < charts.size(); ++i) {
    absl::StrAppendFormat(&out, "<g transform=\"translate(0 %d)\">\n",
                          static_cast<int>(i) * chart_height);
    out += SvgChart(charts[i], width, chart_height);
    out += "</g>\n";
  }
  out += "</svg>\n";
  return out;
}

}  // namespace fedmf::plot
