#include "common/fmf/server_session.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"
#include "common/fmf/party_session.h"

namespace fedmf::fmf {
namespace {

absl::Status ValidateParties(const std::vector<PartyInfo>& parties) {
  if (parties.empty()) return absl::InvalidArgumentError("a job needs at least one party");
  for (size_t k = 0; k < parties.size(); ++k) {
    if (!(parties[k].weight > 0) || !std::isfinite(parties[k].weight)) {
      return absl::InvalidArgumentError(
          absl::StrCat("party ", k, " (", parties[k].name, "): weight must be > 0"));
    }
  }
  return absl::OkStatus();
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

std::vector<double> CappedWeights(const std::vector<double>& declared,
                                  const std::vector<bool>& averaged) {
  std::vector<double> out = declared;
  for (size_t k = 0; k < declared.size(); ++k) {
    if (!averaged[k]) continue;
    std::vector<double> others;
    for (size_t j = 0; j < declared.size(); ++j) {
      if (j != k && averaged[j]) others.push_back(declared[j]);
    }
    if (others.empty()) continue;  // alone: its weight is the whole average anyway
    out[k] = std::min(declared[k], kMaxWeightRatio * Median(std::move(others)));
  }
  return out;
}

ServerSession::ServerSession(const JobConfig& config, std::vector<PartyInfo> parties,
                             mf::Matrix shared, int32_t round)
    : config_(config),
      parties_(std::move(parties)),
      shared_(std::make_shared<const mf::Matrix>(std::move(shared))),
      round_(round),
      phase_(round >= config.EffectiveRounds() ? Phase::kFinished : Phase::kRoundOpen),
      updates_(parties_.size()) {}

absl::StatusOr<ServerSession> ServerSession::Create(const JobConfig& config, int32_t shared_rows,
                                                    std::vector<PartyInfo> parties,
                                                    random::Csprng& rng) {
  RETURN_IF_ERROR(ValidateJobConfig(config));
  RETURN_IF_ERROR(ValidateParties(parties));
  if (shared_rows < 1) return absl::InvalidArgumentError("shared_rows must be >= 1");
  return ServerSession(config, std::move(parties), InitialSharedMatrix(config, shared_rows, rng),
                       0);
}

absl::StatusOr<ServerSession> ServerSession::CreateCoupling(const JobConfig& config,
                                                            const coupling::FlatLayout& layout,
                                                            std::vector<PartyInfo> parties,
                                                            random::Csprng& rng) {
  RETURN_IF_ERROR(ValidateJobConfig(config));
  RETURN_IF_ERROR(ValidateParties(parties));
  if (config.setting != Setting::kCoupling || layout.dim() != config.dim) {
    return absl::InvalidArgumentError("CreateCoupling: a coupling job of the layout's rank");
  }
  ASSIGN_OR_RETURN(mf::Matrix model, coupling::InitialFlatModel(layout, config.coupling_init, rng));
  ServerSession session(config, std::move(parties), mf::RoundedToFloat32(model), 0);
  session.coupling_ = layout;
  return session;
}

absl::StatusOr<ServerSession> ServerSession::Restore(
    const JobConfig& config, std::vector<PartyInfo> parties, int32_t round, mf::Matrix shared,
    const std::optional<coupling::FlatLayout>& layout) {
  RETURN_IF_ERROR(ValidateJobConfig(config));
  RETURN_IF_ERROR(ValidateParties(parties));
  if (round < 0 || round > config.EffectiveRounds()) {
    return absl::InvalidArgumentError(absl::StrCat("restore: round ", round, " out of range"));
  }
  if (layout.has_value() != (config.setting == Setting::kCoupling)) {
    return absl::InvalidArgumentError("restore: a coupling job (only) needs its model's layout");
  }
  const int64_t cols = layout.has_value() ? layout->size() : config.dim;
  const int64_t max_rows = layout.has_value() ? 1 : shared.rows();
  if (shared.cols() != cols || shared.rows() < 1 || shared.rows() > max_rows ||
      !shared.allFinite()) {
    return absl::InvalidArgumentError("restore: persisted shared matrix is malformed");
  }
  ServerSession session(config, std::move(parties), std::move(shared), round);
  session.coupling_ = layout;
  return session;
}

bool ServerSession::HasSubmitted(int32_t party) const {
  return party >= 0 && party < static_cast<int32_t>(updates_.size()) && updates_[party].has_value();
}

absl::Status ServerSession::SubmitUpdate(int32_t party, int32_t round, const mf::Matrix& update) {
  if (phase_ != Phase::kRoundOpen) return absl::FailedPreconditionError("job is finished");
  if (round != round_) {
    return absl::FailedPreconditionError(
        absl::StrCat("field 'round': update for round ", round, " but round ", round_, " is open"));
  }
  if (party < 0 || party >= static_cast<int32_t>(parties_.size())) {
    return absl::InvalidArgumentError(absl::StrCat("field 'party': unknown party index ", party));
  }
  if (updates_[party].has_value()) {
    return absl::AlreadyExistsError(
        absl::StrCat("party ", parties_[party].name, " already submitted round ", round));
  }
  if (update.rows() != shared_->rows() || update.cols() != shared_->cols()) {
    return absl::InvalidArgumentError(absl::StrCat("field 'matrix': shape ", update.rows(), "x",
                                                   update.cols(), ", expected ", shared_->rows(),
                                                   "x", shared_->cols()));
  }
  RETURN_IF_ERROR(coupling_.has_value()
                      ? coupling::CheckFlat(update, *coupling_, "field 'matrix' (coupling sum)")
                      : CheckEmbeddingUpdate(update));
  updates_[party] = update;
  return absl::OkStatus();
}

absl::Status ServerSession::CheckEmbeddingUpdate(const mf::Matrix& update) const {
  // Clipping invariant, with slack for float rounding on the wire.
  const double max_norm2 = config_.rating_max * (1 + 1e-6) + 1e-9;
  for (Eigen::Index i = 0; i < update.rows(); ++i) {
    double norm2 = 0;
    for (Eigen::Index c = 0; c < update.cols(); ++c) {
      const double x = update(i, c);
      if (!std::isfinite(x)) {
        return absl::InvalidArgumentError(
            absl::StrCat("field 'matrix': non-finite value at row ", i, " column ", c));
      }
      if (x < 0) {
        return absl::InvalidArgumentError(absl::StrCat("field 'matrix': negative value at row ", i,
                                                       " (embeddings must be clipped)"));
      }
      norm2 += x * x;
    }
    if (norm2 > max_norm2) {
      return absl::InvalidArgumentError(absl::StrCat("field 'matrix': row ", i, " has norm^2 ",
                                                     norm2, " > R = ", config_.rating_max,
                                                     " (embeddings must be clipped)"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<RoundSummary> ServerSession::CloseRound() {
  if (phase_ != Phase::kRoundOpen) return absl::FailedPreconditionError("job is finished");
  RoundSummary summary;
  summary.round = round_;
  for (size_t k = 0; k < parties_.size(); ++k) {
    (updates_[k].has_value() ? summary.contributors : summary.missing)
        .push_back(static_cast<int32_t>(k));
  }
  if (summary.contributors.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("round ", round_, ": no party submitted an update"));
  }
  ASSIGN_OR_RETURN(mf::Matrix next, Aggregate(summary.contributors));
  shared_ = std::make_shared<const mf::Matrix>(mf::RoundedToFloat32(next));  // as released
  for (auto& u : updates_) u.reset();
  ++round_;
  if (round_ >= config_.EffectiveRounds()) phase_ = Phase::kFinished;
  return summary;
}

absl::StatusOr<mf::Matrix> ServerSession::Aggregate(
    const std::vector<int32_t>& contributors) const {
  if (coupling_.has_value()) {
    // Algorithm 1, lines 12-15: A adds the owners' noisy sums (in party
    // order) and takes the step; whoever missed the round adds nothing.
    mf::Matrix total = mf::Matrix::Zero(1, shared_->cols());
    for (int32_t k : contributors) total.noalias() += *updates_[k];
    mf::Matrix model = *shared_;
    RETURN_IF_ERROR(coupling::ApplyFlatStep(total, config_.EffectiveLearningRate(),
                                            config_.coupling_bound, *coupling_, &model));
    return model;
  }
  double total_weight = 0;
  mf::Matrix sum = mf::Matrix::Zero(shared_->rows(), shared_->cols());
  for (int32_t k : contributors) {
    sum.noalias() += parties_[k].weight * *updates_[k];
    total_weight += parties_[k].weight;
  }
  // Weighted average of feasible points stays feasible (the set is convex),
  // and rounding toward zero keeps it so.
  return mf::Matrix(sum / total_weight);
}

}  // namespace fedmf::fmf
