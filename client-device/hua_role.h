// The Hua S3 user role of a device host: the host's virtual users (one
// common/hua User each, u_i never leaves them), turned from a job's public
// parameters and the host's local ratings into masked reports. No gRPC: the
// transport (hua_host.h) feeds it decoded requests and sends what it returns.
#ifndef FEDMF_CLIENT_DEVICE_HUA_ROLE_H_
#define FEDMF_CLIENT_DEVICE_HUA_ROLE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "common/data/ratings.h"
#include "common/hua/messages.h"
#include "common/hua/params.h"
#include "common/hua/user.h"
#include "common/hua/zp_codec.h"
#include "common/mf/embeddings.h"
#include "common/mf/metrics.h"

namespace fedmf::device {

// One user's local data: training ratings (its rated set is announced) and
// held-out test ratings (never leave the host).
struct HuaLocalUser {
  int32_t user = 0;  // global id
  std::vector<hua::RatedItem> train;
  std::vector<data::Rating> test;
};

class HuaUserRole {
 public:
  // `seed`: tests only (the simulator's per-user streams); otherwise every
  // user draws from the OS CSPRNG. Users without training ratings do not
  // take part (nothing to contribute); their test ratings are predicted with
  // u_i(0), as in the simulator.
  // `range` is the host's own declared range (Delta of the noise, the
  // prediction clamp of the test error). Every v_j a request carries is
  // projected onto the ball ||v_j|| <= MaxItemNorm(params) before a gradient
  // is taken from it, whatever the server sends.
  static absl::StatusOr<std::unique_ptr<HuaUserRole>> Create(const hua::HuaParams& params,
                                                             const data::RatingRange& range,
                                                             std::vector<HuaLocalUser> users,
                                                             std::optional<uint64_t> seed);
  // The first, loose projection of every received v_j (both mechanisms): it
  // keeps one user's term -2 u (r - u^T v) well inside the Z_P codec's range
  // (zp.max_abs / 8 = 2^17), so an encoding failure, which would depend on r,
  // cannot be provoked. The valid variant then projects v_j onto
  // ||v_j|| <= sqrt(R) inside hua::User (docs/privacy.md, section hua).
  static double MaxItemNorm(const hua::HuaParams& params);

  std::vector<hua::UserHello> Hellos() const;
  int32_t num_users() const { return static_cast<int32_t>(users_.size()); }
  int32_t num_ratings(int32_t user) const;

  // Fails on a request for a user this host does not run (or any the user rejects).
  absl::StatusOr<hua::MaskedReport> HandleInit(const hua::InitRequest& request);
  absl::StatusOr<hua::MaskedReport> HandleIteration(const hua::IterationRequest& request);

  // Test error of the host's users against the published V (the valid
  // variant: after each user's own choice of model or mean, User::ChooseModel).
  absl::StatusOr<mf::ErrorMetrics> Evaluate(const mf::Matrix& v);

 private:
  HuaUserRole(hua::HuaParams params, data::RatingRange range, hua::ZpCodec codec)
      : params_(params), range_(range), codec_(codec) {}
  absl::StatusOr<hua::User*> Find(int32_t user);

  hua::HuaParams params_;
  data::RatingRange range_;
  hua::ZpCodec codec_;  // users keep a pointer: the role is heap-allocated, never moved
  std::map<int32_t, hua::User> users_;
  std::map<int32_t, std::vector<data::Rating>> test_;
  // Users with test but no training ratings keep u_i(0), as in the simulator.
  std::map<int32_t, std::vector<double>> untrained_;
};

}  // namespace fedmf::device

#endif  // FEDMF_CLIENT_DEVICE_HUA_ROLE_H_
