#include "common/mf/top_n.h"

#include <algorithm>

namespace fedmf::mf {

void KeepTopN(int32_t top_n, std::vector<std::pair<int32_t, double>>* scored) {
  const size_t n = std::min<size_t>(scored->size(), static_cast<size_t>(std::max(top_n, 0)));
  std::partial_sort(scored->begin(), scored->begin() + static_cast<std::ptrdiff_t>(n),
                    scored->end(), [](const auto& a, const auto& b) {
                      return a.second != b.second ? a.second > b.second : a.first < b.first;
                    });
  scored->resize(n);
}

}  // namespace fedmf::mf
