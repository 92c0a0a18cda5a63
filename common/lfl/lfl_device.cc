#include "common/lfl/lfl_device.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"
#include "common/mf/clipping.h"
#include "common/mf/sgd.h"

namespace fedmf::lfl {

namespace {

// The device's ratings with items renumbered to their position in `items`.
std::vector<data::Rating> Localized(std::vector<data::Rating> ratings,
                                    const std::vector<int32_t>& items) {
  for (data::Rating& r : ratings) {
    r.item =
        static_cast<int32_t>(std::lower_bound(items.begin(), items.end(), r.item) - items.begin());
  }
  return ratings;
}

}  // namespace

LflDevice::LflDevice(data::PartyData data, LflDeviceOptions options, TwoRoundParams dp,
                     random::Csprng rng)
    : data_(std::move(data)), options_(options), noise_(dp), rng_(std::move(rng)) {
  random::Csprng init = rng_.Fork("init");
  u_ = mf::RandomEmbeddings(1, options_.dim,
                            mf::InitScaleFor(0.7 * options_.rating_max, options_.dim),
                            options_.rating_max, init);
  random::Csprng holdout = rng_.Fork("validation");
  validation_ = data::HoldOut(data_.train, options_.validation_fraction, holdout);
  for (const auto* set : {&data_.train, &validation_, &data_.test}) {
    for (const data::Rating& r : *set) items_.push_back(r.item);
  }
  std::sort(items_.begin(), items_.end());
  items_.erase(std::unique(items_.begin(), items_.end()), items_.end());
  train_local_ = Localized(data_.train, items_);
  validation_local_ = Localized(validation_, items_);
  test_local_ = Localized(data_.test, items_);
}

mf::Matrix LflDevice::LocalRows(const mf::Matrix& v) const {
  // The rows of the items the device rated, projected onto the device's own
  // clipping set: V comes from the server, which may send anything (u_i is
  // fitted to it). Rows already in the set are unchanged bit for bit.
  mf::Matrix local(static_cast<Eigen::Index>(items_.size()), options_.dim);
  for (size_t k = 0; k < items_.size(); ++k)
    local.row(static_cast<Eigen::Index>(k)) = v.row(items_[k]);
  mf::ClipEmbeddings(local, options_.rating_max);
  return local;
}

void LflDevice::RunSgd(mf::Matrix& v_local, int32_t epochs) {
  mf::SgdOptions o;
  o.learning_rate = options_.sgd_learning_rate;
  o.l2 = options_.sgd_l2;
  o.update_u = true;
  o.update_v = false;  // the device never changes V
  o.rating_max = options_.rating_max;
  for (int32_t e = 0; e < epochs; ++e) mf::SgdEpoch(train_local_, u_, v_local, o, rng_);
}

double LflDevice::ValidationMse(const mf::Matrix& u, const mf::Matrix& v_local) const {
  return mf::Evaluate(validation_local_, u, v_local, data_.range).mse;
}

absl::Status LflDevice::CheckShape(const mf::Matrix* v, absl::string_view what) const {
  if (v == nullptr || v->rows() != data_.num_items() || v->cols() != options_.dim ||
      !v->allFinite()) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": malformed V (want ", data_.num_items(),
                                                   " x ", options_.dim, ", finite)"));
  }
  return absl::OkStatus();
}

absl::Status LflDevice::Pretrain(std::shared_ptr<const mf::Matrix> v0) {
  if (phase_ != Phase::kCreated) return absl::FailedPreconditionError("Pretrain twice");
  RETURN_IF_ERROR(CheckShape(v0.get(), "Pretrain"));
  mf::Matrix local = LocalRows(*v0);
  RunSgd(local, options_.pretrain_epochs);
  stage1_u_ = u_;
  stage1_v_ = v0;
  model_v_ = std::move(v0);
  phase_ = Phase::kReady;
  return absl::OkStatus();
}

double LflDeviceOptions::GradientNormBound() const {
  return clip_norm > 0 ? clip_norm : mf::SensitivityOneMatrix(rating_max);
}

absl::StatusOr<SparseGradient> LflDevice::Round1Gradient(const mf::Matrix& v) {
  if (phase_ != Phase::kReady) return absl::FailedPreconditionError("Round1 out of phase");
  RETURN_IF_ERROR(CheckShape(&v, "Round1"));
  SparseGradient g;
  if (data_.train.empty()) return g;
  // u_i and each v_j projected onto the device's own clipping set (R is the
  // device's, not the server's): with r in [0, R] the residual is in
  // [-R, R] and one rating's gradient has norm <= 2 R^{3/2} whatever row
  // the server sent. Rows already in the set are unchanged bit for bit.
  const int32_t p = options_.dim;
  std::vector<double> ui(u_.row(0).data(), u_.row(0).data() + p);
  mf::ClipRow(ui.data(), p, options_.rating_max);
  const Eigen::Map<const Eigen::RowVectorXd> u_map(ui.data(), p);
  std::vector<double> vj(static_cast<size_t>(p));
  auto add = [&](const data::Rating& r) {
    std::copy(v.row(r.item).data(), v.row(r.item).data() + p, vj.begin());
    mf::ClipRow(vj.data(), p, options_.rating_max);
    const double value = std::clamp(static_cast<double>(r.value), 0.0, options_.rating_max);
    const double e = value - u_map.dot(Eigen::Map<const Eigen::RowVectorXd>(vj.data(), p));
    g.items.push_back(r.item);
    for (int32_t c = 0; c < p; ++c) g.rows.push_back(-2.0 * e * ui[static_cast<size_t>(c)]);
  };
  if (options_.whole_gradient) {
    for (const data::Rating& r : data_.train) add(r);  // one rating per item, sorted
  } else {
    add(data_.train[rng_.UniformInt(data_.train.size())]);
  }
  // Scale to the norm bound the noise is calibrated to (a no-op for one
  // rating at the default bound).
  double norm2 = 0;
  for (double x : g.rows) norm2 += x * x;
  const double bound = options_.GradientNormBound();
  if (norm2 > bound * bound) {
    const double scale = bound / std::sqrt(norm2);
    for (double& x : g.rows) x *= scale;
  }
  return g;
}

absl::StatusOr<std::vector<double>> LflDevice::Round1(const mf::Matrix& v) {
  ASSIGN_OR_RETURN(SparseGradient g, Round1Gradient(v));
  const int32_t p = options_.dim;
  std::vector<double> grad(static_cast<size_t>(v.size()), 0.0);
  for (size_t k = 0; k < g.items.size(); ++k) {
    std::copy(g.rows.begin() + static_cast<std::ptrdiff_t>(k) * p,
              g.rows.begin() + static_cast<std::ptrdiff_t>(k + 1) * p,
              grad.begin() + static_cast<std::ptrdiff_t>(g.items[k]) * p);
  }
  noise_.AddRound1Noise(grad, rng_);
  phase_ = Phase::kAwaitingRound2;
  return grad;
}

absl::StatusOr<std::vector<double>> LflDevice::Round2(int64_t round1_survivors) {
  if (phase_ != Phase::kAwaitingRound2) return absl::FailedPreconditionError("Round2 out of phase");
  ASSIGN_OR_RETURN(auto out, noise_.Round2Replacement(round1_survivors, rng_));
  phase_ = Phase::kReady;
  return out;
}

void LflDevice::AbandonIteration() {
  if (phase_ == Phase::kAwaitingRound2) phase_ = Phase::kReady;
}

absl::Status LflDevice::Finish(std::shared_ptr<const mf::Matrix> v) {
  if (phase_ == Phase::kCreated || phase_ == Phase::kFinished) {
    return absl::FailedPreconditionError("Finish out of phase");
  }
  RETURN_IF_ERROR(CheckShape(v.get(), "Finish"));
  mf::Matrix local = LocalRows(*v);
  phase_ = Phase::kFinished;
  if (validation_local_.empty()) {
    RunSgd(local, options_.finetune_epochs);
    model_v_ = std::move(v);
    return absl::OkStatus();
  }
  // Two candidates only, the Stage 1 model and the federated one after
  // Stage 3: with a handful of validation ratings per device, picking among
  // more (e.g. every Stage 3 epoch) mostly fits the validation noise. Ties
  // keep Stage 1.
  const double stage1 = ValidationMse(stage1_u_, LocalRows(*stage1_v_));
  RunSgd(local, options_.finetune_epochs);
  kept_stage1_ = stage1 <= ValidationMse(u_, local);
  if (kept_stage1_) {
    u_ = stage1_u_;
    model_v_ = stage1_v_;
  } else {
    model_v_ = std::move(v);
  }
  return absl::OkStatus();
}

mf::ErrorMetrics LflDevice::EvaluateValidation() const {
  if (model_v_ == nullptr || validation_local_.empty()) return mf::ErrorMetrics{};
  return mf::Evaluate(validation_local_, u_, LocalRows(*model_v_), data_.range);
}

mf::ErrorMetrics LflDevice::EvaluateTest() const {
  if (model_v_ == nullptr) return mf::ErrorMetrics{};  // no model before Pretrain
  return mf::Evaluate(test_local_, u_, LocalRows(*model_v_), data_.range);
}

double Round1Bound(double rating_max, const TwoRoundParams& dp, double tail_sigmas,
                   double gradient_norm) {
  const double g = gradient_norm > 0 ? gradient_norm : mf::SensitivityOneMatrix(rating_max);
  return g + tail_sigmas * std::sqrt(Round1Variance(dp));
}

}  // namespace fedmf::lfl
