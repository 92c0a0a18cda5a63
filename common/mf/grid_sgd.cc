#include "common/mf/grid_sgd.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <numeric>
#include <thread>
#include <type_traits>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace fedmf::mf {
namespace {

// G x G blocks; their starts are G^2 + 1 int64 (256: half a megabyte).
constexpr int32_t kMaxGrid = 256;
// Coordinates in a row's head: one SSE packet.
constexpr int kHead = 4;

// Rearranges a[0, n) in place so that the elements of bucket k (key(x) in
// [0, buckets)) come before those of bucket k + 1 (American flag sort: every
// swap puts one element in its final bucket, O(n + buckets), no copy of the
// data). Returns the buckets' starts, buckets + 1 entries.
template <typename KeyFn>
std::vector<int64_t> BucketInPlace(data::Rating* a, int64_t n, int32_t buckets, KeyFn key) {
  std::vector<int64_t> begin(static_cast<size_t>(buckets) + 1, 0);
  for (int64_t i = 0; i < n; ++i) ++begin[static_cast<size_t>(key(a[i])) + 1];
  std::partial_sum(begin.begin(), begin.end(), begin.begin());
  std::vector<int64_t> next(begin.begin(), begin.end() - 1);
  for (int32_t b = 0; b < buckets; ++b) {
    while (next[b] < begin[b + 1]) {
      const int32_t k = key(a[next[b]]);
      if (k == b) {
        ++next[b];
      } else {
        std::swap(a[next[b]], a[next[k]++]);
      }
    }
  }
  return begin;
}

// Position p of n falls in part p * G / n of G; part r starts at
// ceil(r n / G). Returns the G + 1 starts.
std::vector<int32_t> PartStarts(int32_t n, int32_t g) {
  std::vector<int32_t> starts(static_cast<size_t>(g) + 1);
  for (int32_t r = 0; r <= g; ++r) {
    starts[r] = static_cast<int32_t>((static_cast<int64_t>(r) * n + g - 1) / g);
  }
  return starts;
}

std::vector<int32_t> PartOf(int32_t n, int32_t g) {
  std::vector<int32_t> part(static_cast<size_t>(n));
  for (int32_t p = 0; p < n; ++p) part[p] = static_cast<int32_t>(static_cast<int64_t>(p) * g / n);
  return part;
}

// Constants of one epoch's updates, in the engine's scaled units.
struct Step {
  float eta;
  float l2;
  float inv_head;      // 1 / (coordinates in the head)
  float inv_tail;      // 1 / (coordinates in the tail), 0 without a tail
  float rating_scale;  // 1 / s: a rating in scaled units
  float ball;          // Pi's R in scaled units (R / s)
  float sqrt_ball;
};

// Pi on one row in scaled units (negatives to 0, then into the ball).
template <typename RowRef>
inline void Project(RowRef&& r, const Step& c) {
  r = r.cwiseMax(0.0f);
  const float ss = r.squaredNorm();
  if (ss > c.ball) r *= c.sqrt_ball / std::sqrt(ss);
}

// One group of coordinates (the head or the tail) of one update: gradients
// at the rows from before the update, the step eta / sqrt(G) with the
// group's accumulator from before it, then G grows by the group's mean
// squared gradient coordinate.
template <typename Seg>
inline void UpdateGroup(Seg p, Seg q, float e, float& g_p, float& g_q, float inv_n, const Step& c) {
  using Plain = typename std::remove_cvref_t<Seg>::PlainObject;
  const Plain gp = c.l2 * p - e * q;
  const Plain gq = c.l2 * q - e * p;
  p -= (c.eta / std::sqrt(g_p)) * gp;
  q -= (c.eta / std::sqrt(g_q)) * gq;
  g_p += gp.squaredNorm() * inv_n;
  g_q += gq.squaredNorm() * inv_n;
}

// One block's updates. S is the padded row width when it is one we
// specialise (Eigen unrolls whole SSE packets), else Eigen::Dynamic. G holds
// two accumulators per row: [0] for the head (the first kHead coordinates),
// [1] for the tail; `head_only` (the warm-up epoch) leaves the tail alone.
template <int S, bool kProject>
double BlockKernel(const data::Rating* begin, const data::Rating* end, float* u, float* v,
                   float* gu, float* gv, int32_t stride, bool head_only, const Step& c) {
  using Row = Eigen::Matrix<float, 1, S>;
  using RowMap = Eigen::Map<Row, Eigen::Aligned16>;
  constexpr int kTail = S == Eigen::Dynamic ? Eigen::Dynamic : S - kHead;
  const int32_t tail = stride - kHead;
  double sum_sq = 0;
  for (const data::Rating* r = begin; r != end; ++r) {
    RowMap p(u + static_cast<int64_t>(r->user) * stride, stride);
    RowMap q(v + static_cast<int64_t>(r->item) * stride, stride);
    float* g_p = gu + 2 * static_cast<int64_t>(r->user);
    float* g_q = gv + 2 * static_cast<int64_t>(r->item);
    const float e = r->value * c.rating_scale - p.dot(q);
    sum_sq += static_cast<double>(e) * e;
    UpdateGroup(p.template head<kHead>(), q.template head<kHead>(), e, g_p[0], g_q[0], c.inv_head,
                c);
    if (!head_only && tail > 0) {
      if constexpr (kTail == Eigen::Dynamic) {
        UpdateGroup(p.tail(tail), q.tail(tail), e, g_p[1], g_q[1], c.inv_tail, c);
      } else if constexpr (kTail > 0) {
        UpdateGroup(p.template tail<kTail>(), q.template tail<kTail>(), e, g_p[1], g_q[1],
                    c.inv_tail, c);
      }
    }
    if constexpr (kProject) {
      Project(p, c);
      Project(q, c);
    }
  }
  return sum_sq;
}

template <bool kProject>
double DispatchKernel(int32_t stride, const data::Rating* begin, const data::Rating* end, float* u,
                      float* v, float* gu, float* gv, bool head_only, const Step& c) {
  auto run = [&](auto tag) {
    return BlockKernel<decltype(tag)::value, kProject>(begin, end, u, v, gu, gv, stride, head_only,
                                                       c);
  };
  switch (stride) {
    case 4: return run(std::integral_constant<int, 4>{});
    case 8: return run(std::integral_constant<int, 8>{});
    case 12: return run(std::integral_constant<int, 12>{});
    case 16: return run(std::integral_constant<int, 16>{});
    case 20: return run(std::integral_constant<int, 20>{});
    case 32: return run(std::integral_constant<int, 32>{});
    case 52: return run(std::integral_constant<int, 52>{});
    default: return run(std::integral_constant<int, Eigen::Dynamic>{});
  }
}

absl::Status Validate(const std::vector<data::Rating>& ratings, const Matrix& u, const Matrix& v,
                      const GridSgdOptions& o) {
  if (!(o.learning_rate > 0) || !std::isfinite(o.learning_rate)) {
    return absl::InvalidArgumentError(
        absl::StrCat("GridSgd: learning_rate must be > 0 and finite, got ", o.learning_rate));
  }
  if (!(o.l2 >= 0) || !std::isfinite(o.l2)) {
    return absl::InvalidArgumentError(
        absl::StrCat("GridSgd: l2 must be >= 0 and finite, got ", o.l2));
  }
  if (std::isnan(o.rating_max) || std::isinf(o.rating_max)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "GridSgd: rating_max must be finite (<= 0 for no projection), got ", o.rating_max));
  }
  if (o.grid < 1 || o.grid > kMaxGrid) {
    return absl::InvalidArgumentError(
        absl::StrCat("GridSgd: grid must be in [1, ", kMaxGrid, "], got ", o.grid));
  }
  if (o.threads < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("GridSgd: threads must be >= 1, got ", o.threads));
  }
  if (u.cols() != v.cols() || u.cols() < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "GridSgd: U and V must have the same width >= 1, got ", u.cols(), " and ", v.cols()));
  }
  constexpr Eigen::Index kMaxRows = std::numeric_limits<int32_t>::max();
  if (u.rows() > kMaxRows || v.rows() > kMaxRows || u.cols() > kMaxRows - 3) {
    return absl::InvalidArgumentError("GridSgd: more than 2^31 - 1 rows or columns");
  }
  for (size_t k = 0; k < ratings.size(); ++k) {
    const data::Rating& r = ratings[k];
    if (r.user < 0 || r.user >= u.rows() || r.item < 0 || r.item >= v.rows()) {
      return absl::InvalidArgumentError(
          absl::StrCat("GridSgd: rating ", k, " (user ", r.user, ", item ", r.item,
                       ") is outside U (", u.rows(), " rows) or V (", v.rows(), " rows)"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

double GridSgdRatingScale(const std::vector<data::Rating>& ratings) {
  if (ratings.empty()) return 1.0;
  double sum = 0, sum_sq = 0;
  for (const data::Rating& r : ratings) {
    sum += r.value;
    sum_sq += static_cast<double>(r.value) * r.value;
  }
  const double n = static_cast<double>(ratings.size());
  const double sd = std::sqrt(std::max(sum_sq / n - (sum / n) * (sum / n), 0.0));
  // At least a quarter of the root mean square: scaled ratings stay O(1)
  // when they barely vary (all equal: sd = 0 would make them infinite).
  const double s = std::max(sd, 0.25 * std::sqrt(sum_sq / n));
  return s > 0 && std::isfinite(s) ? s : 1.0;
}

void GridSgdStartingModel(const std::vector<data::Rating>& ratings, int32_t dim,
                          random::Csprng& rng, Matrix& u, Matrix& v) {
  const double scale = std::sqrt(GridSgdRatingScale(ratings) / std::max(dim, 1));
  const auto users = static_cast<int32_t>(u.rows()), items = static_cast<int32_t>(v.rows());
  u = Matrix();  // the old rows go before the new ones are made (peak memory)
  v = Matrix();
  u = RandomEmbeddings(users, dim, scale, rng);
  v = RandomEmbeddings(items, dim, scale, rng);
}

absl::StatusOr<GridSgd> GridSgd::Create(std::vector<data::Rating>&& borrowed, const Matrix& u,
                                        const Matrix& v, const GridSgdOptions& options,
                                        random::Csprng& rng) {
  if (absl::Status s = Validate(borrowed, u, v, options); !s.ok()) return s;
  std::vector<data::Rating> ratings = std::move(borrowed);
  GridSgd g;
  g.options_ = options;
  g.dim_ = static_cast<int32_t>(u.cols());
  g.stride_ = (g.dim_ + 3) / 4 * 4;
  g.num_users_ = static_cast<int32_t>(u.rows());
  g.num_items_ = static_cast<int32_t>(v.rows());
  const int32_t grid = options.grid;

  // The renumbering: internal position k holds the caller's row user_at_[k].
  g.user_at_.resize(static_cast<size_t>(g.num_users_));
  g.item_at_.resize(static_cast<size_t>(g.num_items_));
  std::iota(g.user_at_.begin(), g.user_at_.end(), 0);
  std::iota(g.item_at_.begin(), g.item_at_.end(), 0);
  std::shuffle(g.user_at_.begin(), g.user_at_.end(), rng);
  std::shuffle(g.item_at_.begin(), g.item_at_.end(), rng);
  {
    std::vector<int32_t> user_pos(g.user_at_.size()), item_pos(g.item_at_.size());
    for (int32_t k = 0; k < g.num_users_; ++k) user_pos[g.user_at_[k]] = k;
    for (int32_t k = 0; k < g.num_items_; ++k) item_pos[g.item_at_[k]] = k;
    for (data::Rating& r : ratings) {
      r.user = user_pos[r.user];
      r.item = item_pos[r.item];
    }
  }

  // Block order, then users in order inside each block.
  const std::vector<int32_t> user_part = PartOf(g.num_users_, grid);
  const std::vector<int32_t> item_part = PartOf(g.num_items_, grid);
  const std::vector<int32_t> user_start = PartStarts(g.num_users_, grid);
  g.block_begin_ = BucketInPlace(
      ratings.data(), static_cast<int64_t>(ratings.size()), grid * grid,
      [&](const data::Rating& r) { return user_part[r.user] * grid + item_part[r.item]; });
  for (int32_t b = 0; b < grid * grid; ++b) {
    const int32_t first = user_start[b / grid];
    const int32_t users = user_start[b / grid + 1] - first;
    if (users == 0) continue;
    const int64_t begin = g.block_begin_[b];
    BucketInPlace(ratings.data() + begin, g.block_begin_[b + 1] - begin, users,
                  [first](const data::Rating& r) { return r.user - first; });
  }
  g.ratings_ = std::move(ratings);

  g.scale_ = GridSgdRatingScale(g.ratings_);

  // The model in float32 at internal positions, in scaled units (rows divided
  // by sqrt(s), so <u, v> is a rating divided by s); padding columns 0 (they
  // stay 0: every gradient coordinate there is lambda * 0 - e * 0).
  const double to_scaled = 1.0 / std::sqrt(g.scale_);
  g.u_.assign(static_cast<size_t>(g.num_users_) * g.stride_, 0.0f);
  g.v_.assign(static_cast<size_t>(g.num_items_) * g.stride_, 0.0f);
  for (int32_t k = 0; k < g.num_users_; ++k) {
    for (int32_t j = 0; j < g.dim_; ++j) {
      g.u_[static_cast<size_t>(k) * g.stride_ + j] =
          static_cast<float>(u(g.user_at_[k], j) * to_scaled);
    }
  }
  for (int32_t k = 0; k < g.num_items_; ++k) {
    for (int32_t j = 0; j < g.dim_; ++j) {
      g.v_[static_cast<size_t>(k) * g.stride_ + j] =
          static_cast<float>(v(g.item_at_[k], j) * to_scaled);
    }
  }
  g.gu_.assign(2 * static_cast<size_t>(g.num_users_), 1.0f);
  g.gv_.assign(2 * static_cast<size_t>(g.num_items_), 1.0f);
  return g;
}

double GridSgd::RunEpoch(random::Csprng& rng) {
  if (ratings_.empty()) return 0.0;
  const int32_t grid = options_.grid;
  // The schedule: diagonal s pairs block row rows[k] with block column
  // cols[(k + shift[s]) mod G], k = 0..G-1 — G blocks on distinct rows and
  // distinct columns, so they touch disjoint rows of U and of V.
  std::vector<int32_t> rows(static_cast<size_t>(grid)), cols(rows.size()), shift(rows.size());
  std::iota(rows.begin(), rows.end(), 0);
  std::iota(cols.begin(), cols.end(), 0);
  std::iota(shift.begin(), shift.end(), 0);
  std::shuffle(rows.begin(), rows.end(), rng);
  std::shuffle(cols.begin(), cols.end(), rng);
  std::shuffle(shift.begin(), shift.end(), rng);

  const bool project = options_.rating_max > 0;
  Step c;
  c.eta = static_cast<float>(options_.learning_rate);
  c.l2 = static_cast<float>(options_.l2 / scale_);
  c.inv_head = 1.0f / static_cast<float>(std::min(dim_, kHead));
  c.inv_tail = dim_ > kHead ? 1.0f / static_cast<float>(dim_ - kHead) : 0.0f;
  c.rating_scale = static_cast<float>(1.0 / scale_);
  c.ball = project ? static_cast<float>(options_.rating_max / scale_) : 0.0f;
  c.sqrt_ball = std::sqrt(c.ball);
  const bool head_only = options_.warm_up && epochs_run_ == 0;
  ++epochs_run_;
  const int32_t blocks = grid * grid;
  std::vector<double> sums(static_cast<size_t>(blocks), 0.0);
  const int32_t threads = std::min(options_.threads, grid);
  // Block t = s * G + k (diagonal s, position k) updates block row rows[k] of
  // U and block column col = cols[(k + shift[s]) mod G] of V. The block
  // before it to touch those U rows is (s - 1, k); to touch those V rows,
  // (s - 1, k') with cols[(k' + shift[s - 1]) mod G] = col. A block starts
  // once both are done, so every row of U and V sees the same updates in the
  // same order as running the diagonals one after another, for any number of
  // threads; but a thread never waits for a whole diagonal (one barrier per
  // epoch, not G), and a block of the next diagonal can start while its
  // diagonal's last blocks still run elsewhere. Threads take blocks in the
  // order t = 0, 1, ...: a block's two predecessors were taken before it, by
  // a thread that runs them without waiting for anything later, so nothing
  // deadlocks.
  // kprime[s * G + k]: k' above, the position in diagonal s - 1 of the
  // block with the same V column.
  std::vector<int32_t> kprime(static_cast<size_t>(blocks), 0);
  std::vector<int32_t> prev_k_for_col(static_cast<size_t>(grid));
  for (int32_t s = 1; s < grid; ++s) {
    for (int32_t k = 0; k < grid; ++k) prev_k_for_col[cols[(k + shift[s - 1]) % grid]] = k;
    for (int32_t k = 0; k < grid; ++k) {
      kprime[static_cast<size_t>(s) * grid + k] = prev_k_for_col[cols[(k + shift[s]) % grid]];
    }
  }
  // done[t] turns 1 when block t has run (futex waits: a waiting thread sleeps).
  std::vector<std::atomic<int32_t>> done(static_cast<size_t>(blocks));
  auto wait_done = [&](int32_t block) {
    done[static_cast<size_t>(block)].wait(0, std::memory_order_acquire);
  };
  std::atomic<int32_t> next{0};
  auto run = [&] {
    for (int32_t t = next.fetch_add(1, std::memory_order_relaxed); t < blocks;
         t = next.fetch_add(1, std::memory_order_relaxed)) {
      const int32_t s = t / grid, k = t % grid;
      if (s > 0) {
        wait_done((s - 1) * grid + k);
        wait_done((s - 1) * grid + kprime[static_cast<size_t>(t)]);
      }
      const int32_t b = rows[k] * grid + cols[(k + shift[s]) % grid];
      const data::Rating* begin = ratings_.data() + block_begin_[b];
      const data::Rating* end = ratings_.data() + block_begin_[b + 1];
      sums[static_cast<size_t>(t)] =
          project ? DispatchKernel<true>(stride_, begin, end, u_.data(), v_.data(), gu_.data(),
                                         gv_.data(), head_only, c)
                  : DispatchKernel<false>(stride_, begin, end, u_.data(), v_.data(), gu_.data(),
                                          gv_.data(), head_only, c);
      done[static_cast<size_t>(t)].store(1, std::memory_order_release);
      done[static_cast<size_t>(t)].notify_all();
    }
  };
  std::vector<std::thread> workers;
  for (int32_t w = 1; w < threads; ++w) workers.emplace_back(run);
  run();
  for (std::thread& w : workers) w.join();
  double total = 0;
  for (const double x : sums) total += x;  // a fixed order: deterministic
  // Errors in scaled units back in the ratings' units.
  return total * scale_ * scale_ / static_cast<double>(ratings_.size());
}

void GridSgd::CopyModelTo(Matrix& u, Matrix& v) const {
  const double from_scaled = std::sqrt(scale_);
  u.resize(num_users_, dim_);
  v.resize(num_items_, dim_);
  for (int32_t k = 0; k < num_users_; ++k) {
    for (int32_t j = 0; j < dim_; ++j)
      u(user_at_[k], j) = u_[static_cast<size_t>(k) * stride_ + j] * from_scaled;
  }
  for (int32_t k = 0; k < num_items_; ++k) {
    for (int32_t j = 0; j < dim_; ++j)
      v(item_at_[k], j) = v_[static_cast<size_t>(k) * stride_ + j] * from_scaled;
  }
}

std::vector<data::Rating> GridSgd::TakeRatings() && {
  for (data::Rating& r : ratings_) {
    r.user = user_at_[r.user];
    r.item = item_at_[r.item];
  }
  block_begin_.assign(block_begin_.size(), 0);
  return std::move(ratings_);
}

}  // namespace fedmf::mf
