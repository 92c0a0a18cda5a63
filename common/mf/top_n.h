// Top-N recommendation lists: one ordering for every recommender in fedmf.
#ifndef FEDMF_COMMON_MF_TOP_N_H_
#define FEDMF_COMMON_MF_TOP_N_H_

#include <cstdint>
#include <utility>
#include <vector>

namespace fedmf::mf {

// Keeps the `top_n` highest-scored (item, score) pairs of `scored`, best
// first; equal scores go to the smaller item id, so the list is
// deterministic. Fewer than `top_n` pairs are all kept, sorted.
void KeepTopN(int32_t top_n, std::vector<std::pair<int32_t, double>>* scored);

}  // namespace fedmf::mf

#endif  // FEDMF_COMMON_MF_TOP_N_H_
