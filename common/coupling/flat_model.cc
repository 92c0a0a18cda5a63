#include "common/coupling/flat_model.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>

#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"

namespace fedmf::coupling {
namespace {

// The four blocks one after the other, each row-major, as one 1 x P row.
mf::Matrix Concatenated(std::initializer_list<const mf::Matrix*> blocks) {
  int64_t size = 0;
  for (const mf::Matrix* m : blocks) size += m->size();
  mf::Matrix flat(1, size);
  double* out = flat.data();
  for (const mf::Matrix* m : blocks) out = std::copy(m->data(), m->data() + m->size(), out);
  return flat;
}

int64_t Take(const mf::Matrix& flat, int64_t offset, mf::Matrix* m) {
  std::copy(flat.data() + offset, flat.data() + offset + m->size(), m->data());
  return offset + m->size();
}

}  // namespace

absl::Status CheckFlat(const mf::Matrix& flat, const FlatLayout& layout, const char* what) {
  if (flat.rows() != 1 || flat.cols() != layout.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": shape ", flat.rows(), "x", flat.cols(), ", expected 1x", layout.size(), " (",
        layout.num_users(), " users, ", layout.num_items(), " items, rank ", layout.dim(), ")"));
  }
  for (int64_t k = 0; k < flat.size(); ++k) {
    if (!std::isfinite(flat.data()[k])) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": non-finite value at index ", k, " of ", flat.size()));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<FlatLayout> FlatLayout::Create(int64_t num_users, int64_t num_items, int64_t dim) {
  if (num_users < 1 || num_items < 1 || dim < 1 || dim > 1000) {
    return absl::InvalidArgumentError(absl::StrCat("coupling model of ", num_users, " users, ",
                                                   num_items, " items, rank ", dim,
                                                   ": each must be >= 1 (rank <= 1000)"));
  }
  // Checked before squaring: m, n up to 2^31 would overflow m^2 + n^2 below.
  if (num_users > (int64_t{1} << 26) || num_items > (int64_t{1} << 26) ||
      num_users * num_users + num_items * num_items > kMaxDenseCouplings) {
    return absl::InvalidArgumentError(absl::StrCat(
        "coupling model of ", num_users, " users and ", num_items,
        " items: the dense couplings S and W would hold m^2 + n^2 values, over the limit of ",
        kMaxDenseCouplings,
        " (docs/privacy.md, section coupling: sparse or low-rank couplings "
        "would scale)"));
  }
  return FlatLayout(static_cast<int32_t>(num_users), static_cast<int32_t>(num_items),
                    static_cast<int32_t>(dim));
}

int64_t FlatLayout::size() const {
  const int64_t m = num_users_, n = num_items_;
  return couplings_begin() + m * m + n * n;
}

int64_t FlatLayout::couplings_begin() const { return (int64_t{num_users_} + num_items_) * dim_; }

mf::Matrix FlattenModel(const CouplingModel& model) {
  return Concatenated({&model.u, &model.v, &model.s, &model.wt});
}

mf::Matrix FlattenSum(const GradientSum& sum) {
  return Concatenated({&sum.u, &sum.v, &sum.s, &sum.wt});
}

absl::StatusOr<CouplingModel> UnflattenModel(const mf::Matrix& flat, const FlatLayout& layout,
                                             double offset) {
  RETURN_IF_ERROR(CheckFlat(flat, layout, "coupling model"));
  const int32_t m = layout.num_users(), n = layout.num_items(), d = layout.dim();
  CouplingModel model;
  model.offset = offset;
  model.u.resize(m, d);
  model.v.resize(n, d);
  model.s.resize(m, m);
  model.wt.resize(n, n);
  int64_t at = 0;
  for (mf::Matrix* block : {&model.u, &model.v, &model.s, &model.wt}) at = Take(flat, at, block);
  return model;
}

absl::StatusOr<mf::Matrix> InitialFlatModel(const FlatLayout& layout, double init_scale,
                                            random::Csprng& rng) {
  ASSIGN_OR_RETURN(CouplingModel model, InitialModel(layout.num_users(), layout.num_items(),
                                                     layout.dim(), 0, init_scale, rng));
  return FlattenModel(model);
}

absl::Status ApplyFlatStep(const mf::Matrix& total, double learning_rate, double coupling_bound,
                           const FlatLayout& layout, mf::Matrix* flat_model) {
  RETURN_IF_ERROR(CheckFlat(*flat_model, layout, "coupling model"));
  RETURN_IF_ERROR(CheckFlat(total, layout, "coupling gradient total"));
  if (!(learning_rate > 0) || !(coupling_bound > 0)) {
    return absl::InvalidArgumentError("coupling step: learning rate and bound must be > 0");
  }
  *flat_model -= learning_rate * total;
  const int64_t begin = layout.couplings_begin();
  double* x = flat_model->data();
  for (int64_t k = begin; k < flat_model->size(); ++k) {
    x[k] = std::clamp(x[k], -coupling_bound, coupling_bound);
  }
  return absl::OkStatus();
}

}  // namespace fedmf::coupling
