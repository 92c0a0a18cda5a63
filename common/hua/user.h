// A user device of Hua et al. section 4: keeps its ratings and u_i, answers
// the recommender's requests with noisy item gradients (S2) or masked ones for
// the third party (S2-TP, S3). u_i never leaves this object.
//
// The valid variant (default; accounting.h): the user keeps theta of her
// rated items (drawn from her own stream, never looking at values), predicts
// b_i + u_i^T v_j with b_i her mean rating (never sent), projects u_i and
// every received v_j onto ||x|| <= sqrt(R), computes the whole report vector
// of an iteration from the pass-0 request, scales it to ||.|| <= C and adds
// Gaussian noise (S2: sigma per report; S2-TP/S3: a share sigma / sqrt(k')
// per report, k' the planned users of the item). A repair pass re-sends the
// pass-0 blocks of the items it names (whatever v_j it carries) with the
// same standard-normal draws, so the decoded sum of (t, j) — at most one:
// the third party forwards no second — holds one block of the vector whose
// norm was bounded. The paper's mechanism (params.paper_noise) is kept as it
// was.
#ifndef FEDMF_COMMON_HUA_USER_H_
#define FEDMF_COMMON_HUA_USER_H_

#include <cstdint>
#include <map>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "common/data/ratings.h"
#include "common/hua/messages.h"
#include "common/hua/params.h"
#include "common/hua/zp_codec.h"
#include "common/mf/embeddings.h"
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
  // (streams.h UserStream); u_i(0) is drawn from rng.Fork("init"), the kept
  // items (valid variant) from rng.Fork("trim"). `range` is the user's own
  // declared range: R, the projections and the noise come from it and from
  // the public params, never from a request.
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
  // b_i: 0 in the paper's mechanism.
  double bias() const { return bias_; }
  // The valid variant, after the last iteration: keeps the model
  // b_i + u_i^T v_j if its squared error on the user's held-out ratings is at
  // most her mean's (or she holds none out), else predicts b_i alone. Local:
  // nothing leaves the user.
  absl::Status ChooseModel(const mf::Matrix& v);
  bool uses_model() const { return uses_model_; }
  int32_t num_validation() const { return static_cast<int32_t>(validation_.size()); }
  int32_t id() const { return id_; }
  // The ratings the user takes part with (valid variant: at most theta).
  int32_t num_ratings() const { return static_cast<int32_t>(ratings_.size()); }
  // Iterations whose reports this user computed (pass 0): her releases.
  int32_t releases() const { return releases_; }
  // The valid variant's pre-noise blocks of the open iteration (after the
  // scaling to C), by item: what the sensitivity tests measure.
  const std::map<int32_t, std::vector<double>>& clean_blocks() const { return blocks_; }

 private:
  User(int32_t id, std::vector<RatedItem> ratings, const HuaParams& params,
       const data::RatingRange& range, const ZpCodec* codec, random::Csprng rng);

  // Index of `item` in ratings_, or -1.
  int32_t Position(int32_t item) const;
  // Validates the request and advances to its iteration; fills `pos`.
  absl::Status Begin(const IterationRequest& request, std::vector<int32_t>& pos);
  // -2 u(t-1) (r - b - u(t-1)^T v) for request item k.
  std::vector<double> Gradient(const ItemRequest& item, int32_t pos) const;
  bool gaussian() const { return !params_.paper_noise; }
  // Valid variant, pass 0: every block from u_i(t-1) and the projected v_j,
  // the whole vector scaled to ||.|| <= C, kept in blocks_. Later passes
  // only check that their items are among them.
  absl::Status ComputeBlocks(const IterationRequest& request, const std::vector<int32_t>& pos);
  // Block + share of the Gaussian noise: sigma / sqrt(shares) per coordinate,
  // the standard-normal draw fixed per (t, j) and clamped (accounting.h).
  std::vector<double> NoisyBlock(int32_t item, int32_t iteration, int32_t pos, int32_t shares);
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
  // Valid variant.
  double norm_bound_ = 1.0;  // sqrt(R) (paper: 1, u only)
  double clip_ = 0;          // C
  double sigma_ = 0;         // per coordinate of a decoded sum (S2: of a report)
  double bias_ = 0;
  std::vector<RatedItem> validation_;
  bool uses_model_ = true;
  int32_t releases_ = 0;
  std::map<int32_t, std::vector<double>> blocks_;  // item -> pre-noise block, iteration_
  std::vector<std::vector<double>> v_used_;        // projected v_j of pass 0, per request item
};

}  // namespace fedmf::hua

#endif  // FEDMF_COMMON_HUA_USER_H_
