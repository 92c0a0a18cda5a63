#include "common/lfl/lfl_device.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "common/mf/clipping.h"
#include "common/mf/sgd.h"

namespace fedmf::lfl {

LflDevice::LflDevice(data::PartyData data, LflDeviceOptions options, TwoRoundParams dp,
                     random::Csprng rng)
    : data_(std::move(data)), options_(options), noise_(dp), rng_(std::move(rng)) {
  random::Csprng init = rng_.Fork("init");
  u_ = mf::RandomEmbeddings(1, options_.dim, mf::InitScaleFor(0.7 * options_.rating_max, options_.dim),
                            options_.rating_max, init);
}

void LflDevice::RunSgd(const mf::Matrix& v, int32_t epochs) {
  mf::SgdOptions o;
  o.learning_rate = options_.sgd_learning_rate;
  o.l2 = options_.sgd_l2;
  o.update_u = true;
  o.update_v = false;
  o.rating_max = options_.rating_max;
  // SgdEpoch takes V mutable; the device must not change V. The copy is
  // projected onto the device's own clipping set first: V comes from the
  // server, which may send anything (u_i is fitted to it).
  mf::Matrix v_copy = v;
  mf::ClipEmbeddings(v_copy, options_.rating_max);
  for (int32_t e = 0; e < epochs; ++e) mf::SgdEpoch(data_.train, u_, v_copy, o, rng_);
}

absl::Status LflDevice::Pretrain(const mf::Matrix& v) {
  if (phase_ != Phase::kCreated) return absl::FailedPreconditionError("Pretrain twice");
  if (v.rows() != data_.num_items() || v.cols() != options_.dim) {
    return absl::InvalidArgumentError("Pretrain: V has the wrong shape");
  }
  RunSgd(v, options_.pretrain_epochs);
  phase_ = Phase::kReady;
  return absl::OkStatus();
}

absl::StatusOr<std::vector<double>> LflDevice::Round1(const mf::Matrix& v) {
  if (phase_ != Phase::kReady) return absl::FailedPreconditionError("Round1 out of phase");
  if (v.rows() != data_.num_items() || v.cols() != options_.dim || !v.allFinite()) {
    return absl::InvalidArgumentError("Round1: malformed V");
  }
  std::vector<double> grad(static_cast<size_t>(v.size()), 0.0);
  if (!data_.train.empty()) {
    const data::Rating& r = data_.train[rng_.UniformInt(data_.train.size())];
    // v_j and u_i projected onto the device's own clipping set (R is the
    // device's, not the server's): with r in [0, R] the residual is in
    // [-R, R] and the gradient's norm <= 2 R^{3/2}, the Delta the noise is
    // calibrated to, whatever row the server sent. Rows already in the set
    // are unchanged bit for bit.
    std::vector<double> vj(v.row(r.item).data(), v.row(r.item).data() + options_.dim);
    std::vector<double> ui(u_.row(0).data(), u_.row(0).data() + options_.dim);
    mf::ClipRow(vj.data(), options_.dim, options_.rating_max);
    mf::ClipRow(ui.data(), options_.dim, options_.rating_max);
    const double value = std::clamp(static_cast<double>(r.value), 0.0, options_.rating_max);
    const double e = value - Eigen::Map<const Eigen::RowVectorXd>(ui.data(), options_.dim)
                                 .dot(Eigen::Map<const Eigen::RowVectorXd>(vj.data(), options_.dim));
    for (int32_t c = 0; c < options_.dim; ++c) {
      grad[static_cast<size_t>(r.item) * options_.dim + c] = -2.0 * e * ui[c];
    }
  }
  noise_.AddRound1Noise(grad, rng_);
  phase_ = Phase::kAwaitingRound2;
  return grad;
}

absl::StatusOr<std::vector<double>> LflDevice::Round2(int64_t round1_survivors) {
  if (phase_ != Phase::kAwaitingRound2) return absl::FailedPreconditionError("Round2 out of phase");
  auto out = noise_.Round2Replacement(round1_survivors, rng_);
  if (!out.ok()) return out.status();
  phase_ = Phase::kReady;
  return out;
}

void LflDevice::AbandonIteration() {
  if (phase_ == Phase::kAwaitingRound2) phase_ = Phase::kReady;
}

absl::Status LflDevice::Finish(const mf::Matrix& v) {
  if (phase_ == Phase::kCreated || phase_ == Phase::kFinished) {
    return absl::FailedPreconditionError("Finish out of phase");
  }
  RunSgd(v, options_.finetune_epochs);
  phase_ = Phase::kFinished;
  return absl::OkStatus();
}

mf::ErrorMetrics LflDevice::EvaluateTest(const mf::Matrix& v) const {
  return mf::Evaluate(data_.test, u_, v, data_.range);
}

double Round1Bound(double rating_max, const TwoRoundParams& dp, double tail_sigmas) {
  return 2.0 * rating_max * std::sqrt(rating_max) + tail_sigmas * std::sqrt(Round1Variance(dp));
}

}  // namespace fedmf::lfl
