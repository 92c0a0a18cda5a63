// `fedmf advise --plot FILE.svg`: each player's normalized accuracy gain
// b_n over the action grid as a heat map, the recommended cell outlined in
// red and any other Nash equilibrium in blue; the caption (the legend of
// what is drawn, then the recommendation's reason) wraps to the page width.
// Plain SVG, no dependencies.
#ifndef FEDMF_TOOLS_FEDMF_ADVISE_PLOT_H_
#define FEDMF_TOOLS_FEDMF_ADVISE_PLOT_H_

#include <string>

#include "common/advise/col_game.h"

namespace fedmf::cli {

std::string AdvisePlotSvg(const advise::CoLGame& game, const advise::Recommendation& rec,
                          const std::string& title);

}  // namespace fedmf::cli

#endif  // FEDMF_TOOLS_FEDMF_ADVISE_PLOT_H_
