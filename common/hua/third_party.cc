#include "common/hua/third_party.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/hua/zp_codec.h"

namespace fedmf::hua {

absl::StatusOr<ThirdParty> ThirdParty::Create(Scenario scenario, int32_t dim, random::Csprng rng) {
  if (scenario != Scenario::kUntrustedThirdParty && scenario != Scenario::kDynamic) {
    return absl::InvalidArgumentError("the third party only takes part in S2-TP and S3");
  }
  if (dim < 1) return absl::InvalidArgumentError("dim must be >= 1");
  return ThirdParty(scenario, dim, std::move(rng));
}

absl::Status ThirdParty::Begin(const AggregationPlan& plan) {
  if (plan_.has_value()) return absl::FailedPreconditionError("a round is still open");
  if (gaussian_.has_value() && *gaussian_ != plan.gaussian) {
    return absl::InvalidArgumentError("a plan of the other mechanism in the same job");
  }
  if (plan.phase == Phase::kInit && (scenario_ != Scenario::kDynamic || plan.gaussian)) {
    return absl::InvalidArgumentError(
        "initialization rounds are S3 with the paper's mechanism only");
  }
  if (plan.phase == Phase::kIteration) {
    if (plan.round < last_iteration_) {
      return absl::InvalidArgumentError(
          absl::StrCat("plan for iteration ", plan.round, " after iteration ", last_iteration_));
    }
    for (const PlannedItem& it : plan.items) {
      if (plan.round == last_iteration_ && forwarded_.count(it.item)) {
        return absl::InvalidArgumentError(absl::StrCat("item ", it.item, ": its sum of iteration ",
                                                       plan.round, " was already forwarded"));
      }
    }
  }
  pending_.clear();
  for (const PlannedItem& it : plan.items) {
    if (it.users.empty()) return absl::InvalidArgumentError("planned item without users");
    if (plan.phase == Phase::kIteration && scenario_ == Scenario::kDynamic && !plan.gaussian &&
        !alpha_.count(it.item)) {
      return absl::FailedPreconditionError(
          absl::StrCat("item ", it.item, " has no alpha_j: it was never initialized"));
    }
    Pending& p = pending_[it.item];
    p.expected.insert(it.users.begin(), it.users.end());
    p.sum.assign(dim_, 0);
  }
  gaussian_ = plan.gaussian;
  if (plan.phase == Phase::kIteration && plan.round > last_iteration_) {
    last_iteration_ = plan.round;
    forwarded_.clear();
  }
  plan_ = AggregationPlan{plan.phase, plan.round, plan.pass, {}, plan.gaussian};
  return absl::OkStatus();
}

absl::Status ThirdParty::Accept(const MaskedReport& r) {
  if (!plan_.has_value()) return absl::FailedPreconditionError("no open round");
  if (r.phase != plan_->phase || r.round != plan_->round || r.pass != plan_->pass) {
    return absl::InvalidArgumentError(
        absl::StrCat("report from user ", r.user, " for another round"));
  }
  // Validate everything before touching a sum, so a bad report changes nothing.
  for (const MaskedValue& v : r.items) {
    auto it = pending_.find(v.item);
    if (it == pending_.end() || !it->second.expected.count(r.user)) {
      return absl::PermissionDeniedError(
          absl::StrCat("user ", r.user, " is not planned for item ", v.item));
    }
    if (it->second.received.count(r.user)) {
      return absl::AlreadyExistsError(
          absl::StrCat("user ", r.user, " already reported item ", v.item));
    }
    if (v.value.size() != static_cast<size_t>(dim_)) {
      return absl::InvalidArgumentError("masked value has the wrong size");
    }
    if (v.shares != static_cast<int32_t>(it->second.expected.size())) {
      return absl::InvalidArgumentError(absl::StrCat("user ", r.user, " split item ", v.item,
                                                     "'s noise ", v.shares, " ways, the plan has ",
                                                     it->second.expected.size(), " users"));
    }
  }
  for (const MaskedValue& v : r.items) {
    Pending& p = pending_[v.item];
    ZpCodec::Add(p.sum, v.value);
    p.received.insert(r.user);
  }
  return absl::OkStatus();
}

absl::StatusOr<AggregateForward> ThirdParty::Flush() {
  if (!plan_.has_value()) return absl::FailedPreconditionError("no open round");
  AggregateForward out{plan_->phase, plan_->round, plan_->pass, {}, {}, {}};
  std::set<int32_t> missing;
  for (auto& [item, p] : pending_) {
    if (p.received.size() != p.expected.size()) {
      // A partial sum would carry too little rho~ (and in S3 miss a tau^
      // share); withholding it keeps one decodable sum per (t, j).
      out.incomplete_items.push_back(item);
      for (int32_t u : p.expected) {
        if (!p.received.count(u)) missing.insert(u);
      }
      continue;
    }
    if (plan_->phase == Phase::kIteration) forwarded_.insert(item);
    if (pads()) {
      if (plan_->phase == Phase::kInit) {
        // A fresh pad for every (re)initialization: tau~_j = alpha_j + sum tau.
        std::vector<uint64_t> alpha = ZpCodec::RandomMask(rng_, dim_);
        ZpCodec::Add(p.sum, alpha);
        alpha_[item] = std::move(alpha);
      } else {
        ZpCodec::Sub(p.sum, alpha_.at(item));
      }
    }
    out.items.push_back({item, static_cast<int32_t>(p.received.size()), std::move(p.sum)});
  }
  out.missing_users.assign(missing.begin(), missing.end());
  pending_.clear();
  plan_.reset();
  return out;
}

}  // namespace fedmf::hua
