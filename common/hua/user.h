// A user device of Hua et al. section 4: keeps its ratings and u_i, answers
// the recommender's requests with noisy item gradients (S2) or masked ones for
// the third party (S2-TP, S3). u_i never leaves this object.
#ifndef FEDMF_COMMON_HUA_USER_H_
#define FEDMF_COMMON_HUA_USER_H_

#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "common/data/ratings.h"
#include "common/hua/messages.h"
#include "common/hua/params.h"
#include "common/hua/zp_codec.h"
#include "common/random/csprng.h"

namespace fedmf::hua {

struct RatedItem {
  int32_t item = 0;
  double rating = 0;
};

class User {
 public:
  // `ratings`: distinct items (any order; kept sorted). `codec` is required in
  // S2-TP and S3 and must outlive the user. `rng` is this user's own stream
  // (streams.h UserStream); u_i(0) is drawn from rng.Fork("init").
  static absl::StatusOr<User> Create(int32_t id, std::vector<RatedItem> ratings,
                                     const HuaParams& params, const data::RatingRange& range,
                                     const ZpCodec* codec, random::Csprng rng);

  UserHello Hello() const;

  // S3 initialization: tau = encode(eta^{i_s}) + beta (mod 2^64) per item, for
  // the third party. eta^{i_s} is this user's Theorem-2 piece under (H_j, k).
  absl::StatusOr<MaskedReport> HandleInit(const InitRequest& request);
  // S2: grad + eta^{i_s} + rho(t) per item, straight to the recommender.
  absl::StatusOr<DirectReport> HandleDirect(const IterationRequest& request);
  // S2-TP: encode(grad + eta^{i_s} + rho~^{i_s}) + psi.
  // S3:    encode(grad + rho~^{i_s}) + (psi + tau^ share).
  absl::StatusOr<MaskedReport> HandleMasked(const IterationRequest& request);

  // The first request of iteration t computes every gradient from u_i(t-1)
  // and then steps u_i with the v_j(t-1) it received; a repair pass of the
  // same iteration reuses u_i(t-1) and leaves u_i alone.
  std::span<const double> profile() const { return u_; }
  int32_t id() const { return id_; }
  int32_t num_ratings() const { return static_cast<int32_t>(ratings_.size()); }

 private:
  User(int32_t id, std::vector<RatedItem> ratings, const HuaParams& params,
       const data::RatingRange& range, const ZpCodec* codec, random::Csprng rng);

  // Index of `item` in ratings_, or -1.
  int32_t Position(int32_t item) const;
  // Validates the request and advances to its iteration; fills `pos`.
  absl::Status Begin(const IterationRequest& request, std::vector<int32_t>& pos);
  // -2 u(t-1) (r - u(t-1)^T v) for request item k.
  std::vector<double> Gradient(const ItemRequest& item, int32_t pos) const;
  // Steps u_i on the first pass of an iteration.
  void StepProfile(const IterationRequest& request, const std::vector<int32_t>& pos);
  // This user's standard-normal block for eta pieces / this iteration's rho~.
  std::span<const double> EtaZ(int32_t pos);
  std::span<const double> RhoZ(int32_t iteration, int32_t pos);
  absl::Status StoreEta(const ItemRequest& item, int32_t pos);

  int32_t id_;
  std::vector<RatedItem> ratings_;
  HuaParams params_;
  data::RatingRange range_;
  double laplace_b_;
  const ZpCodec* codec_;
  random::Csprng rng_;
  std::vector<double> u_;
  std::vector<double> u_prev_;
  int32_t iteration_ = 0;
  std::vector<std::vector<double>> eta_;  // S2 pieces, per rated item
  std::vector<double> eta_z_;
  std::vector<double> rho_z_;
  int32_t rho_z_iteration_ = -1;
};

}  // namespace fedmf::hua

#endif  // FEDMF_COMMON_HUA_USER_H_
