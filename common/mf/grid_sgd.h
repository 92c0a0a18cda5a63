// The non-private trainer for pooled (central) and local-only models: the
// same squared-loss MF as SgdEpoch, fitted the way LIBMF fits it (Chin et al.,
// "A learning-rate schedule for stochastic gradient methods to matrix
// factorization", PAKDD 2015; "A fast parallel SGD for matrix factorization
// in shared memory systems", RecSys 2013), written for this project:
//  - float32 rows, padded to a multiple of 4 so each row is whole SSE packets;
//  - an adaptive step per row: row r moves by eta / sqrt(G_r) times its
//    gradient, G_r = 1 + the mean squared gradient coordinate of every earlier
//    update of that row (rows with many ratings slow down, rare ones do not),
//    one G for the row's first 4 coordinates and one for the rest (warm_up);
//  - scaled units: training runs on the ratings divided by their standard
//    deviation s (rows divided by sqrt(s), lambda by s: the same objective),
//    so eta means the same step on every rating scale while G starts at 1;
//    the model is given back in the ratings' units;
//  - a blocked order: users and items are renumbered by a random permutation
//    and cut into G x G blocks; inside a block the ratings are grouped by user
//    (so a user's row stays in cache and U is read in order), and each epoch
//    visits the blocks in a fresh random schedule of G "diagonals" whose G
//    blocks share no user and no item. Blocks run on up to G threads at once,
//    each as soon as the blocks before it on its user rows and its item rows
//    are done (no barrier between diagonals); every row sees the same updates
//    in the same order as diagonal after diagonal on one thread, so the result
//    depends on the rng and G only, never on the thread count.
// No privacy here: this fits models that never leave their owner (central is
// the pooling baseline, local-only a party's own). The DP paths stay on the
// per-rating double-precision code of common/mf/sgd.h and common/fmf.
#ifndef FEDMF_COMMON_MF_GRID_SGD_H_
#define FEDMF_COMMON_MF_GRID_SGD_H_

#include <Eigen/Core>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "common/data/ratings.h"
#include "common/mf/embeddings.h"
#include "common/random/csprng.h"

namespace fedmf::mf {

struct GridSgdOptions {
  // eta (> 0, finite): a row's step is eta / sqrt(G_r) times its gradient.
  double learning_rate = 0.1;
  // lambda (>= 0): the loss of one rating is (x - <u,v>)^2 / 2 plus
  // lambda / 2 (|u|^2 + |v|^2), so the gradients are
  //   g_u = lambda u - e v,  g_v = lambda v - e u,  e = x - <u,v>,
  // both taken at the rows from before the update.
  double l2 = 0.05;
  // R: when > 0 (finite) both rows are projected with Pi after every update
  // (negatives to 0, then into the ball of radius sqrt(R)), the model the
  // private settings use; <= 0 leaves the rows unconstrained.
  double rating_max = 5.0;
  // G (1..256): the ratings fall into G x G blocks.
  int32_t grid = 8;
  // Cores for an epoch (>= 1); more than G are not used.
  int32_t threads = 1;
  // The first epoch this engine runs updates only each row's head (its first
  // 4 coordinates): a rank-4 fit first, the rest of the rank after it (LIBMF's
  // warm-up). The head and the tail keep separate accumulators G, so the tail
  // starts its steps at full size when it joins.
  bool warm_up = true;
};

// The scale s GridSgd trains in: the ratings' standard deviation, but at
// least a quarter of their root mean square (so ratings that barely vary do
// not become huge in scaled units); 1 without ratings or when all are 0.
double GridSgdRatingScale(const std::vector<data::Rating>& ratings);

// GridSgd's starting model for `ratings`: every entry of U (u.rows() rows)
// and V (v.rows() rows) uniform in [0, sqrt(s / dim)), so <u, v> starts at
// about s / 4 and grows (LIBMF's start; a start near the mean rating fits
// worse in 10 epochs, docs/archive/benchmarks-2026.md). Draws from `rng`; u and v are
// resized to `dim` columns.
void GridSgdStartingModel(const std::vector<data::Rating>& ratings, int32_t dim,
                          random::Csprng& rng, Matrix& u, Matrix& v);

class GridSgd {
 public:
  // Takes the training ratings (moved from, then rearranged in place: no
  // second copy of them is made) and the starting model, which it keeps in
  // float32. Errors: options out of range, U and V of different widths or
  // width 0, more than 2^31 - 1 rows, a rating whose user/item is not a row of
  // U/V (the message names its index); on error `ratings` is left as it was.
  // `rng` draws the renumbering.
  static absl::StatusOr<GridSgd> Create(std::vector<data::Rating>&& ratings, const Matrix& u,
                                        const Matrix& v, const GridSgdOptions& options,
                                        random::Csprng& rng);

  GridSgd(GridSgd&&) = default;
  GridSgd& operator=(GridSgd&&) = default;

  // One pass over every rating in this epoch's schedule (drawn from `rng`).
  // Returns the mean of e^2 seen before each update (0 without ratings).
  double RunEpoch(random::Csprng& rng);

  // The model, rows in the caller's numbering, widened to double; u and v are
  // resized to (users, dim) and (items, dim).
  void CopyModelTo(Matrix& u, Matrix& v) const;

  // The ratings given to Create, with the caller's ids, in the engine's
  // order; the engine holds none afterwards.
  std::vector<data::Rating> TakeRatings() &&;

  int64_t num_ratings() const { return static_cast<int64_t>(ratings_.size()); }

 private:
  using FloatVector = std::vector<float, Eigen::aligned_allocator<float>>;
  GridSgd() = default;

  GridSgdOptions options_;
  int32_t dim_ = 0;
  int32_t stride_ = 0;  // dim_ rounded up to a multiple of 4
  int32_t num_users_ = 0;
  int32_t num_items_ = 0;
  // Ratings with internal ids (a user's position in the renumbering), in
  // block order: block (r, c) is ratings_[block_begin_[r * G + c],
  // block_begin_[r * G + c + 1]), grouped by user inside.
  std::vector<data::Rating> ratings_;
  std::vector<int64_t> block_begin_;
  std::vector<int32_t> user_at_;  // internal position -> caller's user id
  std::vector<int32_t> item_at_;
  FloatVector u_, v_;           // rows at internal positions, stride_ apart
  std::vector<float> gu_, gv_;  // G per row: [2r] its head's, [2r + 1] its tail's
  double scale_ = 1.0;          // s
  int32_t epochs_run_ = 0;
};

}  // namespace fedmf::mf

#endif  // FEDMF_COMMON_MF_GRID_SGD_H_
