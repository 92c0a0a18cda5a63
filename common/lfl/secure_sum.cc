#include "common/lfl/secure_sum.h"

#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"

namespace fedmf::lfl {

DropPoint SampleDropPoint(random::Csprng& rng, double p) {
  if (!rng.Bernoulli(p)) return DropPoint::kNone;
  return static_cast<DropPoint>(rng.UniformInt(kNumDropPoints));
}

void SecureSumCost::Add(const SecureSumCost& other) {
  for (size_t p = 0; p < 4; ++p) {
    client_seconds[p] += other.client_seconds[p];
    server_seconds[p] += other.server_seconds[p];
  }
  upload_bytes += other.upload_bytes;
  download_bytes += other.download_bytes;
  aggregations += other.aggregations;
}

absl::StatusOr<size_t> ValidateSecureSumRequest(const SecureSumRequest& r) {
  if (r.inputs.size() != r.drops.size()) {
    return absl::InvalidArgumentError(absl::StrCat("secure sum: ", r.inputs.size(), " inputs but ",
                                                   r.drops.size(), " drop points"));
  }
  if (r.round != 1 && r.round != 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("secure sum: round ", r.round, " is not 1 or 2"));
  }
  if (r.min_survivors < 1) return absl::InvalidArgumentError("secure sum: min_survivors < 1");
  size_t length = 0;
  bool have_length = false;
  for (size_t k = 0; k < r.inputs.size(); ++k) {
    if ((r.inputs[k] != nullptr) != Submits(r.drops[k])) {
      return absl::InvalidArgumentError(absl::StrCat(
          "secure sum: participant ", k,
          (r.inputs[k] ? " has an input but never submits it" : " submits but has no input")));
    }
    if (r.inputs[k] == nullptr) continue;
    if (!have_length) {
      length = r.inputs[k]->size();
      have_length = true;
    } else if (r.inputs[k]->size() != length) {
      return absl::InvalidArgumentError(absl::StrCat("secure sum: input ", k, " has length ",
                                                     r.inputs[k]->size(), ", expected ", length));
    }
  }
  return length;
}

absl::StatusOr<SecureSumOutcome> IdealSum(const SecureSumRequest& r) {
  ASSIGN_OR_RETURN(size_t length, ValidateSecureSumRequest(r));
  SecureSumOutcome out;
  out.cost.aggregations = 1;
  int64_t remaining = 0;
  for (DropPoint d : r.drops) remaining += d == DropPoint::kNone ? 1 : 0;
  if (IdealAborts(r.inputs.size(), remaining, r.min_survivors)) {
    // As SecAggSum: a one-device "sum" is its input.
    out.aborted = true;
    out.abort_reason = r.inputs.size() < 2
                           ? std::string("fewer than 2 participants")
                           : absl::StrCat(remaining, " devices left, fewer than ", r.min_survivors);
    return out;
  }
  out.sum.assign(length, 0.0);
  for (size_t k = 0; k < r.inputs.size(); ++k) {
    if (r.inputs[k] == nullptr) continue;
    out.included.push_back(k);
    for (size_t e = 0; e < length; ++e) out.sum[e] += (*r.inputs[k])[e];
  }
  return out;
}

}  // namespace fedmf::lfl
