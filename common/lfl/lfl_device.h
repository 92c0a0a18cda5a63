// One device of LFL-SGDMF (FMF paper Section 6): a single user's ratings,
// its private embedding u_i (never leaves), and its side of each Stage 2
// iteration. Transport-free state machine:
//
//   kCreated --Pretrain(V0)--> kReady --Round1(V, t)--> kAwaitingRound2
//     --Round2(|U1|)--> kReady ... --Finish(V_final)--> kFinished
//
// The device keeps the better of two models by its own validation split
// (validation_fraction of its training ratings, held out of every fit): its
// Stage 1 model (u_i against V0) or the federated one (u_i fine-tuned against
// the final V). Only two candidates: with a few validation ratings, choosing
// among more (every Stage 3 epoch) fits the validation noise. A
// noisy V can be worse than none; no release depends on this choice, so it
// costs no privacy, and the test ratings are never looked at.
//
// A device that drops in round 2 simply never calls Round2; its xi_i then
// stays in the aggregate (see two_round_dp.h).
#ifndef FEDMF_COMMON_LFL_LFL_DEVICE_H_
#define FEDMF_COMMON_LFL_LFL_DEVICE_H_

#include <memory>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
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
  // The device's own choice, not the server's: a share of its training
  // ratings held out to choose between models (0: none, Stage 3 runs all
  // finetune_epochs and the federated model is kept).
  double validation_fraction = 0.1;
  // Round 1's gradient (job parameters, public). false: the paper's — one
  // training rating sampled, g = -2 e u_i in its row. true (the default,
  // issue #16): the sum of that gradient over ALL the device's training
  // ratings, so an item's row gets every rater's signal each iteration
  // instead of ~1/|ratings| of it, under the same noise. Either way the
  // device scales its gradient to norm <= GradientNormBound(), the
  // sensitivity sigma_v is calibrated to (docs/privacy.md, section lfl).
  bool whole_gradient = true;
  double clip_norm = 0;  // C; 0: 2 R^{3/2}, the bound of one rating's gradient
  double GradientNormBound() const;
};

// One device's round-1 gradient before noise: rows `items` of the m x p
// item gradient (every other row is zero).
struct SparseGradient {
  std::vector<int32_t> items;  // ascending, distinct
  std::vector<double> rows;    // items.size() x p, row-major
};

class LflDevice {
 public:
  enum class Phase { kCreated, kReady, kAwaitingRound2, kFinished };

  LflDevice(data::PartyData data, LflDeviceOptions options, TwoRoundParams dp, random::Csprng rng);

  // Stage 1: u_i fitted to the device's ratings with V0 fixed. The device
  // keeps V0 (shared, read-only, owned jointly with whoever passed it) as
  // its fallback model.
  absl::Status Pretrain(std::shared_ptr<const mf::Matrix> v0);
  // Round 1 of iteration t: samples one training rating X_ij and returns the
  // FULL m x p item gradient (only row j non-zero, so its position is hidden
  // once masked) plus xi_i, flattened row-major. A device without training
  // ratings contributes zeros plus noise.
  absl::StatusOr<std::vector<double>> Round1(const mf::Matrix& v);
  // Round1's gradient alone (no rows for a device without training
  // ratings), phase unchanged. For simulations that draw the aggregate's
  // noise in one place (SimulateLfl's analytic aggregation); a real device
  // only ever sends Round1's noisy vector.
  absl::StatusOr<SparseGradient> Round1Gradient(const mf::Matrix& v);
  // Round 2: -xi_i + xi'_i for the announced |U1|.
  absl::StatusOr<std::vector<double>> Round2(int64_t round1_survivors);
  // A device that was dropped (or skipped) leaves the iteration.
  void AbandonIteration();
  // Stage 3: u_i fine-tuned against the final V (V is not changed), then the
  // better of that and the Stage 1 model by validation error is kept.
  absl::Status Finish(std::shared_ptr<const mf::Matrix> v);

  // Test error of the device's current model: after Pretrain its Stage 1
  // model, after Finish the model it kept.
  mf::ErrorMetrics EvaluateTest() const;
  // The same model on the device's validation split (count 0 if none).
  mf::ErrorMetrics EvaluateValidation() const;
  // After Finish: whether the device fell back to its Stage 1 model.
  bool kept_stage1() const { return kept_stage1_; }
  Phase phase() const { return phase_; }
  const data::PartyData& data() const { return data_; }

 private:
  absl::Status CheckShape(const mf::Matrix* v, absl::string_view what) const;
  // Rows items_ of v, clipped onto the device's own set (|items_| x p).
  mf::Matrix LocalRows(const mf::Matrix& v) const;
  void RunSgd(mf::Matrix& v_local, int32_t epochs);
  double ValidationMse(const mf::Matrix& u, const mf::Matrix& v_local) const;

  data::PartyData data_;
  LflDeviceOptions options_;
  DeviceNoise noise_;
  random::Csprng rng_;
  std::vector<data::Rating> validation_;  // own held-out training ratings
  // The items the device rated (train, validation, test), ascending; the
  // *_local_ ratings index this list, so fitting u_i touches |items_| rows
  // of V, not all m.
  std::vector<int32_t> items_;
  std::vector<data::Rating> train_local_, validation_local_, test_local_;
  mf::Matrix u_;  // 1 x p
  // The model EvaluateTest uses: (u_, *model_v_). Stage 1's is kept for the
  // choice in Finish.
  std::shared_ptr<const mf::Matrix> model_v_;
  mf::Matrix stage1_u_;
  std::shared_ptr<const mf::Matrix> stage1_v_;
  bool kept_stage1_ = false;
  Phase phase_ = Phase::kCreated;
};

// Per-entry bound on a device's round-1 input (|gradient| + clipped noise),
// used to size the fixed-point encoding: an entry is at most the gradient's
// norm bound (`gradient_norm`; 0: 2 R sqrt(R), one rating's), and the
// Gaussian is clipped at `tail_sigmas` standard deviations.
double Round1Bound(double rating_max, const TwoRoundParams& dp, double tail_sigmas,
                   double gradient_norm = 0);

}  // namespace fedmf::lfl

#endif  // FEDMF_COMMON_LFL_LFL_DEVICE_H_
