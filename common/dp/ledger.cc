// The per-party privacy ledger: refuse any charge that would overspend.
#include "common/dp/ledger.h"

#include <algorithm>
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

const char* LedgerUnitName(LedgerUnit unit) {
  switch (unit) {
    case LedgerUnit::kRating: return "rating";
    case LedgerUnit::kUser: return "user";
    case LedgerUnit::kUnrecorded: break;
  }
  return "unrecorded";
}

LedgerUnit LedgerUnitFromName(std::string_view name) {
  if (name == "rating") return LedgerUnit::kRating;
  if (name == "user") return LedgerUnit::kUser;
  return LedgerUnit::kUnrecorded;
}

PrivacyLedger::PrivacyLedger(double max_epsilon, double delta)
    : max_epsilon_(max_epsilon), delta_(delta) {}

std::vector<RdpAccountant*> PrivacyLedger::AccountantsOf(const LedgerEntry& entry,
                                                         RdpAccountant& rating,
                                                         RdpAccountant& user) {
  switch (entry.unit) {
    case LedgerUnit::kRating: return {&rating};
    case LedgerUnit::kUser: return {&user};
    case LedgerUnit::kUnrecorded: break;
  }
  return {&rating, &user};
}

absl::StatusOr<double> PrivacyLedger::LargerEpsilon(const RdpAccountant& rating,
                                                    const RdpAccountant& user) const {
  ASSIGN_OR_RETURN(EpsilonResult r, rating.GetEpsilon(delta_));
  ASSIGN_OR_RETURN(EpsilonResult u, user.GetEpsilon(delta_));
  return std::max(r.epsilon, u.epsilon);
}

absl::StatusOr<double> PrivacyLedger::SpentEpsilon(LedgerUnit unit) const {
  if (unit == LedgerUnit::kUnrecorded) return SpentEpsilon();
  ASSIGN_OR_RETURN(EpsilonResult r,
                   (unit == LedgerUnit::kUser ? user_ : rating_).GetEpsilon(delta_));
  return r.epsilon;
}

absl::StatusOr<double> PrivacyLedger::SpentEpsilon() const { return LargerEpsilon(rating_, user_); }

absl::StatusOr<double> PrivacyLedger::JobEpsilon(const std::string& job_id) const {
  auto it = by_job_.find(job_id);
  if (it == by_job_.end()) return 0.0;
  ASSIGN_OR_RETURN(EpsilonResult r, it->second.GetEpsilon(delta_));
  return r.epsilon;
}

absl::StatusOr<double> PrivacyLedger::EpsilonWith(const LedgerEntry& entry) const {
  return EpsilonWith(std::vector<LedgerEntry>{entry});
}

absl::StatusOr<double> PrivacyLedger::EpsilonWith(const std::vector<LedgerEntry>& entries) const {
  RdpAccountant rating = rating_, user = user_;
  for (const LedgerEntry& entry : entries) {
    RETURN_IF_ERROR(ValidateEntry(entry));
    for (RdpAccountant* a : AccountantsOf(entry, rating, user)) {
      a->AddSteps(entry.sample_rate, entry.noise_multiplier, entry.steps);
    }
  }
  return LargerEpsilon(rating, user);
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
  ASSIGN_OR_RETURN(double spent, SpentEpsilon(entry.unit));
  // Compose into copies; only a charge within budget replaces the state.
  RdpAccountant rating = rating_, user = user_;
  for (RdpAccountant* a : AccountantsOf(entry, rating, user)) {
    a->AddSteps(entry.sample_rate, entry.noise_multiplier, entry.steps);
  }
  // The entry's unit(s) against the budget (each unit is capped alone).
  double would_be = 0;
  if (entry.unit == LedgerUnit::kUnrecorded) {
    ASSIGN_OR_RETURN(would_be, LargerEpsilon(rating, user));
  } else {
    ASSIGN_OR_RETURN(EpsilonResult r,
                     (entry.unit == LedgerUnit::kUser ? user : rating).GetEpsilon(delta_));
    would_be = r.epsilon;
  }
  if (!(would_be <= max_epsilon_)) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "privacy budget exceeded: charging job '%s' round %d (q=%g, z=%g, steps=%d, per %s) "
        "would bring the per-%s epsilon from %.6g to %.6g, over the budget epsilon=%.6g at "
        "delta=%g",
        entry.job_id, entry.round, entry.sample_rate, entry.noise_multiplier, entry.steps,
        LedgerUnitName(entry.unit), LedgerUnitName(entry.unit), spent, would_be, max_epsilon_,
        delta_));
  }
  entries_.push_back(entry);
  rating_ = std::move(rating);
  user_ = std::move(user);
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
  for (RdpAccountant* a : AccountantsOf(entry, rating_, user_)) {
    a->AddSteps(entry.sample_rate, entry.noise_multiplier, entry.steps);
  }
  by_job_[entry.job_id].AddSteps(entry.sample_rate, entry.noise_multiplier, entry.steps);
  return absl::OkStatus();
}

}  // namespace fedmf::dp
