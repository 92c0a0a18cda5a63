#include "common/lfl/secagg_sum.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"
#include "common/lfl/lfl_device.h"
#include "common/secagg/simulate.h"

namespace fedmf::lfl {

absl::StatusOr<crypto::FixedPointCodec> MaxPrecisionCodec(int bits, double max_abs,
                                                          uint64_t summands) {
  if (bits < 2 || bits > 64) {
    return absl::InvalidArgumentError(
        absl::StrCat("fixed point: bits = ", bits, " must be in [2, 64]"));
  }
  if (!(max_abs >= 0) || !std::isfinite(max_abs)) {
    return absl::InvalidArgumentError(
        absl::StrCat("fixed point: bound ", max_abs, " must be finite"));
  }
  const double bound = max_abs > 0 ? max_abs : 1.0;
  // Create() enforces the no-wrap condition; the first f it accepts, going
  // down from the most precise, is the answer.
  for (int f = bits - 1; f >= 0; --f) {
    absl::StatusOr<crypto::FixedPointCodec> codec =
        crypto::FixedPointCodec::Create(bits, f, bound, summands);
    if (codec.ok()) return codec;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "fixed point: ", summands, " summands of magnitude <= ", bound, " wrap in ", bits,
      " bits even without fractional bits; raise --secagg-bits or lower the bound"));
}

absl::StatusOr<LflCodecs> ChooseLflCodecs(const TwoRoundParams& dp, double rating_max, int bits,
                                          double gradient_norm) {
  RETURN_IF_ERROR(ValidateTwoRoundParams(dp));
  if (!(rating_max > 0)) return absl::InvalidArgumentError("rating_max must be > 0");
  const uint64_t n = static_cast<uint64_t>(dp.num_devices);
  absl::StatusOr<crypto::FixedPointCodec> r1 =
      MaxPrecisionCodec(bits, Round1Bound(rating_max, dp, kNoiseTailSigmas, gradient_norm), n);
  if (!r1.ok()) return absl::InvalidArgumentError(absl::StrCat("round 1: ", r1.status().message()));
  absl::StatusOr<crypto::FixedPointCodec> r2 =
      MaxPrecisionCodec(bits, Round2Bound(dp, kNoiseTailSigmas), n);
  if (!r2.ok()) return absl::InvalidArgumentError(absl::StrCat("round 2: ", r2.status().message()));
  return LflCodecs{*std::move(r1), *std::move(r2)};
}

const char* AggregationName(secagg::GraphKind graph) {
  return graph == secagg::GraphKind::kHarary ? "secagg+" : "secagg";
}

namespace {

secagg::DropoutPlan PlanFor(const std::vector<DropPoint>& drops,
                            const std::vector<secagg::DeviceId>& roster) {
  secagg::DropoutPlan plan;
  for (size_t k = 0; k < drops.size(); ++k) {
    switch (drops[k]) {
      case DropPoint::kBeforeAdvertise: plan.before_advertise.push_back(roster[k]); break;
      case DropPoint::kAfterAdvertise: plan.after_advertise.push_back(roster[k]); break;
      case DropPoint::kAfterShareKeys: plan.after_share_keys.push_back(roster[k]); break;
      case DropPoint::kAfterMaskedInput: plan.after_masked_input.push_back(roster[k]); break;
      case DropPoint::kDuringUnmasking: plan.during_unmasking.push_back(roster[k]); break;
      case DropPoint::kNone: break;
    }
  }
  return plan;
}

class SecAggSum {
 public:
  SecAggSum(SecAggSumOptions options, random::Csprng rng)
      : options_(std::move(options)),
        rng_(std::make_shared<random::Csprng>(std::move(rng))),
        // A fork, so the main stream (aggregation seeds) is unchanged.
        signing_seed_(rng_->Fork("secagg-sum/signing-identities").NextU64()),
        credential_cache_(std::make_shared<secagg::CredentialCache>()) {}

  absl::StatusOr<SecureSumOutcome> operator()(const SecureSumRequest& request) const {
    ASSIGN_OR_RETURN(size_t length, ValidateSecureSumRequest(request));
    if (request.codec == nullptr) return absl::InvalidArgumentError("secure sum: no codec");
    const size_t n = request.drops.size();
    SecureSumOutcome out;
    if (n < 2 || length == 0) {
      // One device's "sum" is its input: never run an aggregation for it.
      out.aborted = true;
      out.abort_reason = absl::StrCat(n, " participants, ", length,
                                      " entries: nothing a secure aggregation may reveal");
      return out;
    }
    // Participant k is session device index_of[k]; `m` devices in all.
    std::vector<size_t> index_of(n);
    for (size_t k = 0; k < n; ++k) index_of[k] = k;
    size_t m = n;
    secagg::GraphParameters params;
    if (options_.session && session_->setup.has_value() && request.round == 1 &&
        KeySessionLost(request)) {
      *session_ = secagg::SimulatedSession{};  // set up anew, with everyone asked now
    }
    if (options_.session && session_->setup.has_value()) {
      m = session_->devices.size();
      if (!request.device_ids.empty()) {
        if (request.device_ids.size() != n) {
          return absl::InvalidArgumentError("secure sum: device_ids and drops differ in size");
        }
        std::vector<char> seen(m, 0);
        for (size_t k = 0; k < n; ++k) {
          const int64_t d = request.device_ids[k];
          if (d < 0 || static_cast<size_t>(d) >= m || seen[static_cast<size_t>(d)]) {
            return absl::InvalidArgumentError(absl::StrCat(
                "secure sum: device id ", d, " is not a distinct device of the session's ", m));
          }
          seen[static_cast<size_t>(d)] = 1;
          index_of[k] = static_cast<size_t>(d);
        }
      } else if (n != m) {
        return absl::InvalidArgumentError(absl::StrCat(
            "secure sum: ", n, " participants without device_ids in a session of ", m));
      }
      params = *session_params_;
      params.min_survivors =
          static_cast<int>(std::max<int64_t>(request.min_survivors, session_params_->threshold));
    } else {
      ASSIGN_OR_RETURN(params, Parameters(n, request.min_survivors));
      if (options_.session) *session_params_ = params;
    }

    secagg::SimulationSpec spec;
    spec.num_devices = m;
    spec.vector_length = length;
    spec.bits = request.codec->bits();
    spec.parameters = params;
    spec.seed = rng_->NextU64();  // fresh aggregation id, keys and masks
    spec.num_threads = options_.num_threads;
    spec.signing = options_.active;
    // One SecAggSum is one job: its devices keep their signing keys across
    // aggregations and check each credential once.
    spec.signing_seed = signing_seed_;
    spec.credential_cache = credential_cache_;
    if (options_.session) spec.session = session_;
    const std::vector<secagg::DeviceId> roster = secagg::SimulationRoster(m);
    // Session devices not in this request never show up.
    std::vector<DropPoint> drops(m, DropPoint::kBeforeAdvertise);
    std::vector<size_t> position(m, n);  // session index -> request position (n: absent)
    for (size_t k = 0; k < n; ++k) {
      drops[index_of[k]] = request.drops[k];
      position[index_of[k]] = k;
    }
    spec.dropouts = PlanFor(drops, roster);
    spec.compute_expected_sum = false;  // only the protocol's sum is used
    // The devices compute and encode their own inputs when the masking
    // phase reaches them (in the simulator's worker threads, each just
    // before it masks); a failure is kept per device and reported after the
    // run.
    std::vector<absl::Status> encode_errors(n);
    spec.input = [&](size_t session_index, secagg::DeviceId) -> std::vector<uint64_t> {
      const size_t index = position[session_index];
      if (index == n) return {};  // absent devices are never asked (kBeforeAdvertise)
      absl::StatusOr<std::vector<double>> x = SecureSumInput(request, index);
      if (!x.ok()) {
        encode_errors[index] = x.status();
        return {};
      }
      absl::StatusOr<std::vector<uint64_t>> e = request.codec->EncodeVector(*x);
      if (!e.ok()) {
        encode_errors[index] = e.status();
        return {};
      }
      return *std::move(e);
    };
    ASSIGN_OR_RETURN(secagg::SimulationResult sim, secagg::Simulate(spec));
    for (size_t k = 0; k < n; ++k) {
      if (!encode_errors[k].ok()) {
        return absl::Status(
            encode_errors[k].code(),
            absl::StrCat("round ", request.round, " device ", k, ": ", encode_errors[k].message()));
      }
    }
    out.cost.aggregations = 1;
    out.cost.client_seconds = sim.client_seconds;
    out.cost.server_seconds = sim.server_seconds;
    out.cost.upload_bytes = sim.upload_bytes;
    out.cost.download_bytes = sim.download_bytes;
    if (sim.server_state != secagg::ServerState::kCompleted) {
      out.aborted = true;
      out.abort_reason = std::string(sim.abort_reason.message());
      return out;
    }
    out.sum = request.codec->DecodeSumVector(sim.sum);
    out.included.reserve(sim.included.size());
    for (secagg::DeviceId id : sim.included) {
      out.included.push_back(position[static_cast<size_t>(
          std::lower_bound(roster.begin(), roster.end(), id) - roster.begin())]);
    }
    std::sort(out.included.begin(), out.included.end());
    return out;
  }

 private:
  // As fedmf-server (server/lfl/lfl_job.cc), before a round 1: out of the
  // session are the devices that missed its setup (in process no device
  // loses its keys).
  bool KeySessionLost(const SecureSumRequest& request) const {
    int64_t out = 0;
    for (const auto& d : session_->devices) out += d->established() ? 0 : 1;
    return secagg::SessionShouldBeRenewed(out, static_cast<int64_t>(session_->devices.size()),
                                          request.min_survivors);
  }

  // k and t from the security analysis; the abort threshold m from the LFL
  // skip rule (t <= m, since every survivor holds at most one share of a
  // secret and the complete graph's t is its m).
  absl::StatusOr<secagg::GraphParameters> Parameters(size_t n, int64_t min_survivors) const {
    secagg::SecurityRequirements req = options_.requirements;
    // Signing devices refuse thresholds with 2t <= holders (client_phases.cc).
    if (options_.active) {
      req.adversary = secagg::AdversaryModel::kSemiMalicious;
      // The simulated devices are one host each: a colluding host is one
      // corrupt neighbour, which they count (secagg::HostCollusionBound).
      req.corrupt_rate = std::max(req.corrupt_rate, 1.0 / static_cast<double>(n));
    }
    absl::StatusOr<secagg::GraphParameters> p = options_.graph == secagg::GraphKind::kHarary
                                                    ? secagg::ChooseSecAggPlusParameters(n, req)
                                                    : secagg::ChooseCompleteGraphParameters(n, req);
    if (!p.ok()) return p.status();
    if (min_survivors > static_cast<int64_t>(n)) {
      return absl::InvalidArgumentError(
          absl::StrCat("secure sum: min_survivors ", min_survivors, " > ", n, " participants"));
    }
    p->min_survivors = static_cast<int>(min_survivors);
    p->threshold = std::min(p->threshold, p->min_survivors);
    return p;
  }

  SecAggSumOptions options_;
  std::shared_ptr<random::Csprng> rng_;  // shared by copies of the SecureSumFn
  // options_.session: the session and the k, t of its setup (shared by copies).
  std::shared_ptr<secagg::SimulatedSession> session_ = std::make_shared<secagg::SimulatedSession>();
  std::shared_ptr<secagg::GraphParameters> session_params_ =
      std::make_shared<secagg::GraphParameters>();
  uint64_t signing_seed_;  // options_.active: the job's device identities
  std::shared_ptr<secagg::CredentialCache> credential_cache_;
};

}  // namespace

SecureSumFn MakeSecAggSum(SecAggSumOptions options, random::Csprng rng) {
  return SecAggSum(std::move(options), std::move(rng));
}

}  // namespace fedmf::lfl
