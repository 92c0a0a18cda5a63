// `fedmf advise --plot` (issue #56): no overlapping titles, a caption that is
// never cut, a legend naming only the outlines drawn.
#include "tools/fedmf/advise_plot.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace fedmf::cli {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kCharPx = 6.5;  // the plot's own generous glyph width at font-size 11

// Actions inf, 4, alone; alone error 1; together at (inf, inf) each player's
// error is 1 - gain, elsewhere 1.
advise::TradeoffTable Table(double gain) {
  advise::TradeoffTable t;
  t.actions = {{false, kInf}, {false, 4}, {true, 0}};
  t.alone_error[0] = t.alone_error[1] = 1.0;
  for (int n = 0; n < 2; ++n) t.error[n].assign(3, std::vector<double>(3, 1.0));
  t.error[0][0][0] = t.error[1][0][0] = 1.0 - gain;
  return t;
}

// The text of every element with class="cls", in order.
std::vector<std::string> Texts(const std::string& svg, const std::string& cls) {
  std::vector<std::string> out;
  const std::string anchor = "class=\"" + cls + "\"";
  for (size_t at = svg.find(anchor); at != std::string::npos; at = svg.find(anchor, at + 1)) {
    const size_t open = svg.find('>', at) + 1;
    out.push_back(svg.substr(open, svg.find('<', open) - open));
  }
  return out;
}

int Attr(const std::string& svg, size_t from, const std::string& name) {
  const size_t at = svg.find(name + "=\"", from) + name.size() + 2;
  return std::stoi(svg.substr(at, svg.find('"', at) - at));
}

size_t Count(const std::string& svg, const std::string& needle) {
  size_t n = 0;
  for (size_t at = svg.find(needle); at != std::string::npos; at = svg.find(needle, at + 1)) ++n;
  return n;
}

TEST(AdvisePlotTest, TitlesApartCaptionWholeLegendOnlyWhatIsDrawn) {
  // Privacy weighs 0.1 and collaborating gains nothing: (alone, alone) is
  // the only equilibrium, and the recommended one — no blue outline.
  ASSERT_OK_AND_ASSIGN(advise::CoLGame game,
                       advise::CoLGame::Create(Table(-0.1), {1, 0.1}, {1, 0.1}));
  advise::Recommendation rec = advise::Recommend(game);
  ASSERT_FALSE(rec.collaborate);
  ASSERT_EQ(game.PureNashEquilibria().size(), 1u);
  rec.reason +=
      "; and a long tail that a 600-pixel line could never hold: training alone: stay "
      "alone, as the last words of this caption say";
  const std::string svg = AdvisePlotSvg(game, rec, "fedmf advise: hfl, joint mode, mean of 3");
  const int width = Attr(svg, 0, "width");
  // The two map titles do not run into each other.
  const size_t first = svg.find("class=\"map-title\"");
  const size_t second = svg.find("class=\"map-title\"", first + 1);
  const std::vector<std::string> titles = Texts(svg, "map-title");
  ASSERT_EQ(titles.size(), 2u);
  EXPECT_EQ(titles[0], "player 1: b1, max 0.000");
  EXPECT_LE(Attr(svg, first, "x") + kCharPx * titles[0].size(), Attr(svg, second, "x"));
  EXPECT_LE(Attr(svg, second, "x") + kCharPx * titles[1].size(), width);
  // The caption is the legend then the whole reason, each line inside the page.
  const std::vector<std::string> caption = Texts(svg, "caption");
  ASSERT_GE(caption.size(), 2u);
  EXPECT_EQ(absl::StrJoin(caption, " "), "red outline: the recommended cell. " + rec.reason);
  for (const std::string& line : caption) EXPECT_LE(12 + kCharPx * line.size(), width) << line;
  const size_t last = svg.rfind("class=\"caption\"");
  EXPECT_LT(Attr(svg, last, "y"), Attr(svg, 0, "height"));
  EXPECT_EQ(svg.find("blue"), std::string::npos);
  EXPECT_EQ(Count(svg, "class=\"equilibrium\""), 0u);
  EXPECT_EQ(Count(svg, "class=\"recommended\""), 2u);  // one per map
}

TEST(AdvisePlotTest, OtherEquilibriaAreBlueAndNamedSo) {
  // Gain 0.2 at (inf, inf) for both, no privacy weight: recommended (inf,
  // inf); (alone, alone) is an equilibrium too (Theorem 1), drawn blue.
  ASSERT_OK_AND_ASSIGN(advise::CoLGame game, advise::CoLGame::Create(Table(0.2), {1, 0}, {1, 0}));
  const advise::Recommendation rec = advise::Recommend(game);
  ASSERT_TRUE(rec.collaborate);
  const std::string svg = AdvisePlotSvg(game, rec, "t");
  EXPECT_NE(svg.find("blue outline: a Nash equilibrium"), std::string::npos);
  EXPECT_GE(Count(svg, "class=\"equilibrium\""), 2u);
  EXPECT_EQ(Count(svg, "class=\"recommended\""), 2u);
}

}  // namespace
}  // namespace fedmf::cli
