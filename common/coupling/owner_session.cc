#include "common/coupling/owner_session.h"

#include <algorithm>
#include <unordered_set>

#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"
#include "common/coupling/dp_step.h"
#include "common/dp/snapping.h"
#include "common/mf/top_n.h"

namespace fedmf::coupling {

OwnerSession::OwnerSession(Terms terms, FlatLayout layout, std::vector<data::Rating> train,
                           std::vector<data::Rating> test, dp::PrivacyLedger* ledger,
                           random::Csprng rng)
    : terms_(std::move(terms)),
      layout_(layout),
      train_(std::move(train)),
      test_(std::move(test)),
      ledger_(ledger),
      sample_rng_(rng.Fork("coupling/sample")),
      noise_rng_(rng.Fork("coupling/noise")) {}

absl::StatusOr<std::unique_ptr<OwnerSession>> OwnerSession::Create(Terms terms, FlatLayout layout,
                                                                   std::vector<data::Rating> train,
                                                                   std::vector<data::Rating> test,
                                                                   dp::PrivacyLedger* ledger,
                                                                   random::Csprng rng) {
  RETURN_IF_ERROR(ValidateCouplingOptions(terms.options));
  if (ledger == nullptr) return absl::InvalidArgumentError("coupling owner: no ledger");
  if (terms.job_id.empty()) return absl::InvalidArgumentError("coupling owner: empty job id");
  if (terms.rounds < 1) return absl::InvalidArgumentError("coupling owner: rounds must be >= 1");
  if (terms.options.dim != layout.dim()) {
    return absl::InvalidArgumentError(absl::StrCat("coupling owner: rank ", terms.options.dim,
                                                   " but the layout's is ", layout.dim()));
  }
  if (!(terms.range.min < terms.range.max)) {
    return absl::InvalidArgumentError("coupling owner: the rating range is empty");
  }
  RETURN_IF_ERROR(CheckCouplingRatings(train, layout.num_users(), layout.num_items(), terms.range,
                                       "the owner's training"));
  RETURN_IF_ERROR(CheckCouplingRatings(test, layout.num_users(), layout.num_items(), terms.range,
                                       "the owner's test"));
  return std::unique_ptr<OwnerSession>(new OwnerSession(std::move(terms), layout, std::move(train),
                                                        std::move(test), ledger, std::move(rng)));
}

absl::StatusOr<CouplingModel> OwnerSession::Adopt(const mf::Matrix& flat_model) const {
  // r0 is the owner's own (its declared range's midpoint), never the server's.
  return UnflattenModel(flat_model, layout_, (terms_.range.min + terms_.range.max) / 2);
}

absl::StatusOr<mf::Matrix> OwnerSession::RunStep(int32_t round, const mf::Matrix& flat_model) {
  if (phase_ != Phase::kTraining) {
    return absl::FailedPreconditionError("coupling owner: the job is finished here");
  }
  if (round < next_round_ || round >= terms_.rounds) {
    return absl::FailedPreconditionError(
        absl::StrCat("coupling owner: round ", round, " is not ahead (next ", next_round_,
                     ") or not below the job's ", terms_.rounds, " rounds"));
  }
  ASSIGN_OR_RETURN(CouplingModel model, Adopt(flat_model));
  const CouplingOptions& o = terms_.options;
  if (round > next_round_) {
    // Rounds skipped, or an owner rebuilt after a restart: draw from streams
    // of this round's own, never from where an earlier process drew an
    // earlier round (a local seed would replay that round's noise).
    sample_rng_ = sample_rng_.Fork(absl::StrCat("from/", round));
    noise_rng_ = noise_rng_.Fork(absl::StrCat("from/", round));
  }
  GradientSum sum = ClippedSum(model, PoissonSampleRatings(train_, o.sample_rate, sample_rng_));
  if (o.noise_multiplier > 0) {
    AddGaussianNoise(o.noise_multiplier * o.clip, noise_rng_, &sum);
    // Charged before the sum exists outside this object; a refusal releases
    // nothing (the drawn noise is discarded with it).
    // Per rating: the coupling mechanism's neighbours (docs/privacy.md, coupling).
    RETURN_IF_ERROR(ledger_->Charge(
        {terms_.job_id, round, o.sample_rate, o.noise_multiplier, 1, dp::LedgerUnit::kRating}));
    ++steps_charged_;
  }
  next_round_ = round + 1;
  model_ = std::move(model);
  mf::Matrix release = FlattenSum(sum);
  if (o.noise_multiplier > 0) {
    // Snapped as the FMF releases are (docs/privacy.md, floating-point): the
    // noisy sum has no public bound on its magnitude, so each value goes to
    // the grid of its own binade, a fixed 20-fraction-bit format whatever the
    // data — which float32 holds exactly, so the wire's float32 is lossless
    // (RoundedToFloat32 is the identity here, and rounds toward zero anyway).
    dp::SnapInBinadeTowardZero(release.data(), static_cast<size_t>(release.size()),
                               o.noise_multiplier * o.clip);
    release = mf::RoundedToFloat32(release);
  }
  return release;
}

absl::Status OwnerSession::Finish(const mf::Matrix& flat_model) {
  ASSIGN_OR_RETURN(CouplingModel model, Adopt(flat_model));
  model_ = std::move(model);
  phase_ = Phase::kFinished;
  return absl::OkStatus();
}

absl::StatusOr<mf::Matrix> OwnerSession::PreNoiseRelease(const std::vector<data::Rating>& batch,
                                                         const mf::Matrix& flat_model) const {
  ASSIGN_OR_RETURN(CouplingModel model, Adopt(flat_model));
  RETURN_IF_ERROR(CheckCouplingRatings(batch, layout_.num_users(), layout_.num_items(),
                                       terms_.range, "the batch"));
  return FlattenSum(ClippedSum(model, batch));
}

GradientSum OwnerSession::ClippedSum(const CouplingModel& model,
                                     const std::vector<data::Rating>& batch) const {
  GradientSum sum = GradientSum::ZerosLike(model);
  AddClippedGradients(model, ComputeCouplingTerms(model), batch, terms_.options.zeta,
                      terms_.options.clip, &sum);
  return sum;
}

mf::ErrorMetrics OwnerSession::EvaluateTest() const {
  if (!model_.has_value()) return {};
  return Evaluate(*model_, test_, terms_.range);
}

absl::StatusOr<std::vector<std::pair<int32_t, double>>> OwnerSession::Recommend(
    int32_t user, int32_t top_n, bool include_rated) const {
  if (!model_.has_value()) {
    return absl::FailedPreconditionError("coupling owner: no model received yet");
  }
  if (user < 0 || user >= layout_.num_users()) {
    return absl::InvalidArgumentError(absl::StrCat("user ", user, " is not in the model"));
  }
  if (top_n < 1) return absl::InvalidArgumentError("top_n must be >= 1");
  std::unordered_set<int32_t> rated;
  for (const auto* ratings : {&train_, &test_}) {
    for (const data::Rating& r : *ratings) {
      if (r.user == user) rated.insert(r.item);
    }
  }
  // The model holds every owner's users; this owner answers for its own.
  if (rated.empty()) {
    return absl::NotFoundError(absl::StrCat("user ", user, " has no ratings at this owner"));
  }
  if (include_rated) rated.clear();
  const CouplingTerms terms = ComputeCouplingTerms(*model_);
  std::vector<std::pair<int32_t, double>> scored;
  for (int32_t j = 0; j < layout_.num_items(); ++j) {
    if (rated.contains(j)) continue;
    const double p = Predict(*model_, terms, user, j);
    scored.emplace_back(j, std::clamp(p, terms_.range.min, terms_.range.max));
  }
  mf::KeepTopN(top_n, &scored);
  return scored;
}

}  // namespace fedmf::coupling
