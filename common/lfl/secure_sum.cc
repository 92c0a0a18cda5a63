#include "common/lfl/secure_sum.h"

#include <algorithm>
#include <utility>

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

void UseInputVectors(SecureSumRequest& request, std::vector<const std::vector<double>*> inputs) {
  request.length = 0;
  for (const std::vector<double>* x : inputs) {
    if (x != nullptr) {
      request.length = x->size();
      break;
    }
  }
  request.input = [inputs = std::move(inputs)](size_t k) -> absl::StatusOr<std::vector<double>> {
    if (k >= inputs.size() || inputs[k] == nullptr) {
      return absl::InvalidArgumentError("the request holds no input for it");
    }
    return *inputs[k];
  };
}

absl::StatusOr<size_t> ValidateSecureSumRequest(const SecureSumRequest& r) {
  if (r.round != 1 && r.round != 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("secure sum: round ", r.round, " is not 1 or 2"));
  }
  if (r.min_survivors < 1) return absl::InvalidArgumentError("secure sum: min_survivors < 1");
  const bool anyone_submits = std::any_of(r.drops.begin(), r.drops.end(), Submits);
  if (anyone_submits && !r.input) {
    return absl::InvalidArgumentError("secure sum: participants submit but no input is given");
  }
  return r.length;
}

absl::StatusOr<std::vector<double>> SecureSumInput(const SecureSumRequest& r, size_t k) {
  if (k >= r.drops.size() || !Submits(r.drops[k])) {
    return absl::InternalError(absl::StrCat("secure sum: asked for the input of participant ", k,
                                            ", which never submits"));
  }
  absl::StatusOr<std::vector<double>> x = r.input(k);
  if (!x.ok()) {
    return absl::Status(x.status().code(), absl::StrCat("secure sum: participant ", k,
                                                        "'s input: ", x.status().message()));
  }
  if (x->size() != r.length) {
    return absl::InvalidArgumentError(
        absl::StrCat("secure sum: input ", k, " has length ", x->size(), ", expected ", r.length));
  }
  return x;
}

absl::StatusOr<SecureSumOutcome> IdealSum(const SecureSumRequest& r) {
  ASSIGN_OR_RETURN(size_t length, ValidateSecureSumRequest(r));
  SecureSumOutcome out;
  out.cost.aggregations = 1;
  int64_t remaining = 0;
  for (DropPoint d : r.drops) remaining += d == DropPoint::kNone ? 1 : 0;
  if (IdealAborts(r.drops.size(), remaining, r.min_survivors)) {
    // As SecAggSum: a one-device "sum" is its input.
    out.aborted = true;
    out.abort_reason = r.drops.size() < 2
                           ? std::string("fewer than 2 participants")
                           : absl::StrCat(remaining, " devices left, fewer than ", r.min_survivors);
    return out;
  }
  out.sum.assign(length, 0.0);
  for (size_t k = 0; k < r.drops.size(); ++k) {
    if (!Submits(r.drops[k])) continue;
    ASSIGN_OR_RETURN(const std::vector<double> x, SecureSumInput(r, k));
    out.included.push_back(k);
    for (size_t e = 0; e < length; ++e) out.sum[e] += x[e];
  }
  return out;
}

}  // namespace fedmf::lfl
