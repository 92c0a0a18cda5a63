#include "tools/fedmf/advise_plot.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"

namespace fedmf::cli {
namespace {

constexpr int kCell = 56;
constexpr int kMargin = 70;
constexpr int kGap = 60;

std::string Escape(const std::string& s) {
  return absl::StrReplaceAll(s, {{"&", "&amp;"}, {"<", "&lt;"}, {">", "&gt;"}});
}

// White (no gain) to dark green (the best gain on the map).
std::string Colour(double value, double max) {
  const double t = max > 0 ? std::clamp(value / max, 0.0, 1.0) : 0.0;
  const int r = static_cast<int>(255 - t * (255 - 0x1b));
  const int g = static_cast<int>(255 - t * (255 - 0x7a));
  const int b = static_cast<int>(255 - t * (255 - 0x3a));
  return absl::StrFormat("#%02x%02x%02x", r, g, b);
}

}  // namespace

std::string AdvisePlotSvg(const advise::CoLGame& game, const advise::Recommendation& rec,
                          const std::string& title) {
  const size_t k = game.size();
  const auto& actions = game.table().actions;
  const std::vector<advise::Equilibrium> equilibria = game.PureNashEquilibria();
  const int map = static_cast<int>(k) * kCell;
  const int width = 2 * map + kGap + 2 * kMargin;
  const int height = map + kMargin + 70;
  std::string svg = absl::StrFormat(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
      "font-family=\"sans-serif\" font-size=\"11\">\n"
      "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
      "<text x=\"%d\" y=\"20\" font-size=\"14\">%s</text>\n",
      width, height, kMargin, Escape(title));
  for (int n = 0; n < 2; ++n) {
    double max = 0;
    for (size_t i = 0; i < k; ++i) {
      for (size_t j = 0; j < k; ++j) max = std::max(max, game.Benefit(n, {i, j}));
    }
    const int x0 = kMargin + n * (map + kGap);
    const int y0 = 50;
    absl::StrAppendFormat(&svg,
                          "<text x=\"%d\" y=\"%d\">player %d: gain b%d (max %.4f); rows: "
                          "player 1's epsilon, columns: player 2's</text>\n",
                          x0, y0 - 8, n + 1, n + 1, max);
    for (size_t i = 0; i < k; ++i) {
      absl::StrAppendFormat(&svg, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>\n", x0 - 4,
                            y0 + static_cast<int>(i) * kCell + kCell / 2 + 4,
                            Escape(advise::ActionLabel(actions[i])));
      absl::StrAppendFormat(&svg, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
                            x0 + static_cast<int>(i) * kCell + kCell / 2, y0 + map + 14,
                            Escape(advise::ActionLabel(actions[i])));
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
    for (const advise::Equilibrium& e : equilibria) {
      const bool chosen = e.cell == rec.equilibrium.cell;
      absl::StrAppendFormat(&svg,
                            "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" "
                            "stroke=\"%s\" stroke-width=\"%d\"/>\n",
                            x0 + static_cast<int>(e.cell.j) * kCell + 2,
                            y0 + static_cast<int>(e.cell.i) * kCell + 2, kCell - 4, kCell - 4,
                            chosen ? "#b00020" : "#1f4e9c", chosen ? 4 : 2);
    }
  }
  absl::StrAppendFormat(&svg,
                        "<text x=\"%d\" y=\"%d\">blue: Nash equilibria; red: recommended — %s"
                        "</text>\n</svg>\n",
                        kMargin, height - 12, Escape(rec.reason));
  return svg;
}

}  // namespace fedmf::cli
