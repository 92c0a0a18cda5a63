// The per-party privacy ledger: refuse any charge that would overspend.
#include "common/dp/ledger.h"

#include <cmath>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "common/base/status_macros.h"

namespace fedmf::dp {
namespace {

absl::Status ValidateEntry(const LedgerEntry& e) {
  if (e.job_id.empty()) return absl::InvalidArgumentError("ledger entry has an empty job_id");
  if (e.round < 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("ledger entry round must be >= 0, got %d", e.round));
  }
  if (!(e.sample_rate >= 0 && e.sample_rate <= 1)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("ledger entry sample rate must be in [0, 1], got %g", e.sample_rate));
  }
  // z == 0 (no noise) is valid input: it costs infinite epsilon and is then
  // refused by the budget check like any other overspend.
  if (!(e.noise_multiplier >= 0)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("ledger entry noise multiplier must be >= 0, got %g", e.noise_multiplier));
  }
  if (e.steps < 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("ledger entry steps must be >= 0, got %d", e.steps));
  }
  return absl::OkStatus();
}

}  // namespace

PrivacyLedger::PrivacyLedger(double max_epsilon, double delta)
    : max_epsilon_(max_epsilon), delta_(delta) {}

absl::StatusOr<double> PrivacyLedger::SpentEpsilon() const {
  ASSIGN_OR_RETURN(EpsilonResult r, accountant_.GetEpsilon(delta_));
  return r.epsilon;
}

absl::StatusOr<double> PrivacyLedger::JobEpsilon(const std::string& job_id) const {
  auto it = by_job_.find(job_id);
  if (it == by_job_.end()) return 0.0;
  ASSIGN_OR_RETURN(EpsilonResult r, it->second.GetEpsilon(delta_));
  return r.epsilon;
}

absl::StatusOr<double> PrivacyLedger::EpsilonWith(const LedgerEntry& entry) const {
  RETURN_IF_ERROR(ValidateEntry(entry));
  RdpAccountant with = accountant_;
  with.AddSteps(entry.sample_rate, entry.noise_multiplier, entry.steps);
  ASSIGN_OR_RETURN(EpsilonResult r, with.GetEpsilon(delta_));
  return r.epsilon;
}

absl::StatusOr<double> PrivacyLedger::EpsilonWith(const std::vector<LedgerEntry>& entries) const {
  RdpAccountant with = accountant_;
  for (const LedgerEntry& entry : entries) {
    RETURN_IF_ERROR(ValidateEntry(entry));
    with.AddSteps(entry.sample_rate, entry.noise_multiplier, entry.steps);
  }
  ASSIGN_OR_RETURN(EpsilonResult r, with.GetEpsilon(delta_));
  return r.epsilon;
}

absl::Status PrivacyLedger::Charge(const LedgerEntry& entry) {
  if (!(max_epsilon_ >= 0) || !std::isfinite(max_epsilon_)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("privacy budget epsilon must be finite and >= 0, got %g", max_epsilon_));
  }
  RETURN_IF_ERROR(ValidateEntry(entry));
  // A replayed (job, round) must not be charged twice -- nor silently
  // accepted: the caller is re-running a release it already made.
  for (const LedgerEntry& e : entries_) {
    if (e.job_id == entry.job_id && e.round == entry.round) {
      return absl::AlreadyExistsError(absl::StrFormat(
          "privacy ledger already charged job '%s' round %d", entry.job_id, entry.round));
    }
  }
  ASSIGN_OR_RETURN(double spent, SpentEpsilon());
  // Compose into a copy; only a charge within budget replaces the state.
  RdpAccountant with = accountant_;
  with.AddSteps(entry.sample_rate, entry.noise_multiplier, entry.steps);
  absl::StatusOr<EpsilonResult> would_be_result = with.GetEpsilon(delta_);
  if (!would_be_result.ok()) return would_be_result.status();
  const double* would_be = &would_be_result->epsilon;
  if (!(*would_be <= max_epsilon_)) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "privacy budget exceeded: charging job '%s' round %d (q=%g, z=%g, steps=%d) would bring "
        "spent epsilon from %.6g to %.6g, over the budget epsilon=%.6g at delta=%g",
        entry.job_id, entry.round, entry.sample_rate, entry.noise_multiplier, entry.steps, spent,
        *would_be, max_epsilon_, delta_));
  }
  entries_.push_back(entry);
  accountant_ = std::move(with);
  by_job_[entry.job_id].AddSteps(entry.sample_rate, entry.noise_multiplier, entry.steps);
  return absl::OkStatus();
}

absl::Status PrivacyLedger::Restore(const LedgerEntry& entry) {
  RETURN_IF_ERROR(ValidateEntry(entry));
  for (const LedgerEntry& e : entries_) {
    if (e.job_id == entry.job_id && e.round == entry.round) {
      return absl::AlreadyExistsError(absl::StrFormat(
          "privacy ledger already holds job '%s' round %d", entry.job_id, entry.round));
    }
  }
  entries_.push_back(entry);
  accountant_.AddSteps(entry.sample_rate, entry.noise_multiplier, entry.steps);
  by_job_[entry.job_id].AddSteps(entry.sample_rate, entry.noise_multiplier, entry.steps);
  return absl::OkStatus();
}

}  // namespace fedmf::dp
