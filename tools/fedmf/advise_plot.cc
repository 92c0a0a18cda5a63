#include "tools/fedmf/advise_plot.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/plot/svg_chart.h"

namespace fedmf::cli {
namespace {

constexpr int kCell = 56;
constexpr int kMargin = 70;
constexpr int kGap = 60;
constexpr int kLine = 15;        // caption line height (font-size 11)
constexpr double kCharPx = 6.5;  // a generous average glyph width at font-size 11
constexpr const char* kEquilibrium = "#1f4e9c";
constexpr const char* kRecommended = "#b00020";

// White (no gain) to dark green (the best gain on the map).
std::string Colour(double value, double max) {
  const double t = max > 0 ? std::clamp(value / max, 0.0, 1.0) : 0.0;
  const int r = static_cast<int>(255 - t * (255 - 0x1b));
  const int g = static_cast<int>(255 - t * (255 - 0x7a));
  const int b = static_cast<int>(255 - t * (255 - 0x3a));
  return absl::StrFormat("#%02x%02x%02x", r, g, b);
}

// `text` broken at spaces into lines of at most `columns` characters (a word
// longer than that gets a line of its own), so no caption runs off the page.
std::vector<std::string> Wrap(const std::string& text, size_t columns) {
  std::vector<std::string> lines;
  std::string line;
  for (absl::string_view word : absl::StrSplit(text, ' ', absl::SkipEmpty())) {
    if (!line.empty() && line.size() + 1 + word.size() > columns) {
      lines.push_back(line);
      line.clear();
    }
    absl::StrAppend(&line, line.empty() ? "" : " ", word);
  }
  if (!line.empty()) lines.push_back(line);
  return lines;
}

}  // namespace

std::string AdvisePlotSvg(const advise::CoLGame& game, const advise::Recommendation& rec,
                          const std::string& title) {
  const size_t k = game.size();
  const auto& actions = game.table().actions;
  const std::vector<advise::Equilibrium> equilibria = game.PureNashEquilibria();
  const int map = static_cast<int>(k) * kCell;
  const int width = std::max(2 * map + kGap + 2 * kMargin, 560);
  const size_t columns = static_cast<size_t>((width - 2 * 12) / kCharPx);
  // The legend names only what is drawn: the recommended cell (red) always,
  // blue only when another equilibrium exists.
  bool other_equilibria = false;
  for (const advise::Equilibrium& e : equilibria)
    other_equilibria |= !(e.cell == rec.equilibrium.cell);
  std::vector<std::string> caption =
      Wrap(absl::StrCat(other_equilibria ? "blue outline: a Nash equilibrium; " : "",
                        "red outline: the recommended cell. ", rec.reason),
           columns);
  const int y0 = 78;  // top of the maps
  const int height = y0 + map + 30 + kLine * static_cast<int>(caption.size()) + 10;
  std::string svg = absl::StrFormat(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
      "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"11\">\n"
      "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
      "<text class=\"title\" x=\"12\" y=\"20\" font-size=\"14\">%s</text>\n"
      "<text class=\"subtitle\" x=\"12\" y=\"38\">normalized gain b over training alone; rows: "
      "player 1's epsilon, columns: player 2's</text>\n",
      width, height, width, height, plot::EscapeXml(title));
  for (int n = 0; n < 2; ++n) {
    double max = 0;
    for (size_t i = 0; i < k; ++i) {
      for (size_t j = 0; j < k; ++j) max = std::max(max, game.Benefit(n, {i, j}));
    }
    const int x0 = kMargin + n * (map + kGap);
    // Short enough for the narrowest map (two actions: 112 px) plus the gap.
    absl::StrAppendFormat(&svg,
                          "<text class=\"map-title\" x=\"%d\" y=\"%d\">player %d: b%d, max "
                          "%.3f</text>\n",
                          x0, y0 - 10, n + 1, n + 1, max);
    for (size_t i = 0; i < k; ++i) {
      absl::StrAppendFormat(&svg, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>\n", x0 - 4,
                            y0 + static_cast<int>(i) * kCell + kCell / 2 + 4,
                            plot::EscapeXml(advise::ActionLabel(actions[i])));
      absl::StrAppendFormat(&svg, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
                            x0 + static_cast<int>(i) * kCell + kCell / 2, y0 + map + 14,
                            plot::EscapeXml(advise::ActionLabel(actions[i])));
      for (size_t j = 0; j < k; ++j) {
        const double b = game.Benefit(n, {i, j});
        const int x = x0 + static_cast<int>(j) * kCell;
        const int y = y0 + static_cast<int>(i) * kCell;
        absl::StrAppendFormat(&svg,
                              "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\" "
                              "stroke=\"#cccccc\"/>\n<text x=\"%d\" y=\"%d\" "
                              "text-anchor=\"middle\">%.3f</text>\n",
                              x, y, kCell, kCell, Colour(b, max), x + kCell / 2, y + kCell / 2 + 4,
                              b);
      }
    }
    auto outline = [&](advise::Cell c, const char* cls, const char* colour, int stroke) {
      absl::StrAppendFormat(&svg,
                            "<rect class=\"%s\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
                            "fill=\"none\" stroke=\"%s\" stroke-width=\"%d\"/>\n",
                            cls, x0 + static_cast<int>(c.j) * kCell + 2,
                            y0 + static_cast<int>(c.i) * kCell + 2, kCell - 4, kCell - 4, colour,
                            stroke);
    };
    for (const advise::Equilibrium& e : equilibria) {
      if (!(e.cell == rec.equilibrium.cell)) outline(e.cell, "equilibrium", kEquilibrium, 2);
    }
    outline(rec.equilibrium.cell, "recommended", kRecommended, 4);
  }
  for (size_t l = 0; l < caption.size(); ++l) {
    absl::StrAppendFormat(&svg, "<text class=\"caption\" x=\"12\" y=\"%d\">%s</text>\n",
                          y0 + map + 36 + kLine * static_cast<int>(l), plot::EscapeXml(caption[l]));
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace fedmf::cli
