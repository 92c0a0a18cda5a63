// The coupling model and a step's gradient sum as they travel between the
// data owners and the parameter server (fedmf-server in A's role): one
// 1 x P row holding U, V, S and W^T in that order, each row-major, so the
// daemons' matrix transport (common/fmf/wire/matrix_codec.h) carries them as any
// shared matrix. The layout is a pure function of the public sizes
// (m users, n items, rank d).
#ifndef FEDMF_COMMON_COUPLING_FLAT_MODEL_H_
#define FEDMF_COMMON_COUPLING_FLAT_MODEL_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/coupling/dp_step.h"
#include "common/coupling/model.h"
#include "common/mf/embeddings.h"
#include "common/random/csprng.h"

namespace fedmf::coupling {

class FlatLayout {
 public:
  // InvalidArgument for m, n, d < 1 or m^2 + n^2 over kMaxDenseCouplings.
  static absl::StatusOr<FlatLayout> Create(int64_t num_users, int64_t num_items, int64_t dim);

  int32_t num_users() const { return num_users_; }
  int32_t num_items() const { return num_items_; }
  int32_t dim() const { return dim_; }
  // P = (m + n) d + m^2 + n^2.
  int64_t size() const;
  // Where S begins: every value from here on is a coupling, clamped after
  // each step; (m + n) d.
  int64_t couplings_begin() const;

 private:
  FlatLayout(int32_t m, int32_t n, int32_t d) : num_users_(m), num_items_(n), dim_(d) {}
  int32_t num_users_;
  int32_t num_items_;
  int32_t dim_;
};

// InvalidArgument naming `what` and the shape, or the index of the first
// non-finite value, unless `flat` is 1 x layout.size() of finite values.
absl::Status CheckFlat(const mf::Matrix& flat, const FlatLayout& layout, const char* what);

mf::Matrix FlattenModel(const CouplingModel& model);
mf::Matrix FlattenSum(const GradientSum& sum);

// The model a flat row encodes, with the receiver's own offset r0 (never the
// sender's). InvalidArgument naming the index of the first bad value, or the
// shape, when `flat` is not 1 x layout.size() of finite values.
absl::StatusOr<CouplingModel> UnflattenModel(const mf::Matrix& flat, const FlatLayout& layout,
                                             double offset);

// A fresh model (InitialModel), flattened.
absl::StatusOr<mf::Matrix> InitialFlatModel(const FlatLayout& layout, double init_scale,
                                            random::Csprng& rng);

// The server's half of a step (dp_step.h ApplyStep on the flat form):
// model -= learning_rate * total, then every coupling clamped to
// [-coupling_bound, coupling_bound]. Post-processing of released sums.
absl::Status ApplyFlatStep(const mf::Matrix& total, double learning_rate, double coupling_bound,
                           const FlatLayout& layout, mf::Matrix* flat_model);

}  // namespace fedmf::coupling

#endif  // FEDMF_COMMON_COUPLING_FLAT_MODEL_H_
