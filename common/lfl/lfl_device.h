// One device of LFL-SGDMF (FMF paper Section 6): a single user's ratings,
// its private embedding u_i (never leaves), and its side of each Stage 2
// iteration. Transport-free state machine:
//
//   kCreated --Pretrain(V0)--> kReady --Round1(V, t)--> kAwaitingRound2
//     --Round2(|U1|)--> kReady ... --Finish(V_final)--> kFinished
//
// A device that drops in round 2 simply never calls Round2; its xi_i then
// stays in the aggregate (see two_round_dp.h).
#ifndef FEDMF_COMMON_LFL_LFL_DEVICE_H_
#define FEDMF_COMMON_LFL_LFL_DEVICE_H_

#include <vector>

#include "absl/status/statusor.h"
#include "common/data/partition.h"
#include "common/lfl/two_round_dp.h"
#include "common/mf/embeddings.h"
#include "common/mf/metrics.h"
#include "common/random/csprng.h"

namespace fedmf::lfl {

struct LflDeviceOptions {
  int32_t dim = 20;
  double rating_max = 5;
  double sgd_learning_rate = 0.01;
  double sgd_l2 = 0.05;
  int32_t pretrain_epochs = 20;
  int32_t finetune_epochs = 20;
};

class LflDevice {
 public:
  enum class Phase { kCreated, kReady, kAwaitingRound2, kFinished };

  LflDevice(data::PartyData data, LflDeviceOptions options, TwoRoundParams dp,
            random::Csprng rng);

  // Stage 1: u_i fitted to the device's ratings with V fixed.
  absl::Status Pretrain(const mf::Matrix& v);
  // Round 1 of iteration t: samples one training rating X_ij and returns the
  // FULL m x p item gradient (only row j non-zero, so its position is hidden
  // once masked) plus xi_i, flattened row-major. A device without training
  // ratings contributes zeros plus noise.
  absl::StatusOr<std::vector<double>> Round1(const mf::Matrix& v);
  // Round 2: -xi_i + xi'_i for the announced |U1|.
  absl::StatusOr<std::vector<double>> Round2(int64_t round1_survivors);
  // A device that was dropped (or skipped) leaves the iteration.
  void AbandonIteration();
  // Stage 3: u_i fine-tuned against the final V (V is not changed).
  absl::Status Finish(const mf::Matrix& v);

  mf::ErrorMetrics EvaluateTest(const mf::Matrix& v) const;
  Phase phase() const { return phase_; }
  const data::PartyData& data() const { return data_; }

 private:
  void RunSgd(const mf::Matrix& v, int32_t epochs);

  data::PartyData data_;
  LflDeviceOptions options_;
  DeviceNoise noise_;
  random::Csprng rng_;
  mf::Matrix u_;  // 1 x p
  Phase phase_ = Phase::kCreated;
};

// Per-entry bound on a device's round-1 input (|gradient| + clipped noise),
// used to size the fixed-point encoding: |2 e u| <= 2 R sqrt(R), and the
// Gaussian is clipped at `tail_sigmas` standard deviations.
double Round1Bound(double rating_max, const TwoRoundParams& dp, double tail_sigmas);

}  // namespace fedmf::lfl

#endif  // FEDMF_COMMON_LFL_LFL_DEVICE_H_
