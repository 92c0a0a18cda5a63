#include "client-device/lfl_role.h"

#include <atomic>
#include <cmath>
#include <limits>
#include <thread>

#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"
#include "common/dp/calibration.h"
#include "common/dp/rdp_accountant.h"
#include "common/lfl/wire/secagg_codec.h"
#include "common/log/log.h"

namespace fedmf::device {
namespace {

// fn(i) for i in [0, n) on up to `threads` threads; each i touches one device.
void ParallelFor(size_t n, int threads, const std::function<void(size_t)>& fn) {
  if (threads <= 1 || n < 2) {
    for (size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next.fetch_add(1); i < n; i = next.fetch_add(1)) fn(i);
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < std::min<size_t>(static_cast<size_t>(threads), n); ++t) {
    pool.emplace_back(worker);
  }
  worker();
  for (auto& th : pool) th.join();
}

// Whether a device that vanishes at `drop` still sends its message of `phase`.
bool Sends(lfl::DropPoint drop, secagg::Phase phase) {
  switch (phase) {
    case secagg::Phase::kAdvertiseKeys: return drop != lfl::DropPoint::kBeforeAdvertise;
    case secagg::Phase::kShareKeys: return drop >= lfl::DropPoint::kAfterShareKeys;
    case secagg::Phase::kMaskedInput: return lfl::Submits(drop);
    case secagg::Phase::kUnmasking:
    case secagg::Phase::kConsistencyCheck: return drop == lfl::DropPoint::kNone;
    default: return false;
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<LflRole>> LflRole::Create(
    const LflRoleOptions& options, const net::LflJobConfig& job, int64_t n,
    std::vector<std::pair<uint64_t, data::PartyData>> devices, DeviceLedger* ledger) {
  std::unique_ptr<LflRole> role(new LflRole(options, job, n, ledger));
  double eps = 0;
  ASSIGN_OR_RETURN(double sigma, lfl::CalibrateSigmaV(job.config, &role->noise_multiplier_, &eps));
  const lfl::TwoRoundParams dp{n, job.config.omega, sigma};
  RETURN_IF_ERROR(lfl::ValidateTwoRoundParams(dp));
  absl::StatusOr<lfl::LflCodecs> codecs =
      lfl::ChooseLflCodecs(dp, job.config.device.rating_max, job.config.secagg_bits,
                           job.config.device.GradientNormBound());
  if (!codecs.ok()) return codecs.status();
  role->codecs_.emplace(*std::move(codecs));
  role->expect_ = {n, job.config.omega, options.require_active_secagg, job.secagg_session};
  if (options.require_active_secagg && !job.active_secagg) {
    return absl::FailedPreconditionError(
        absl::StrCat("job '", job.job_id,
                     "' runs semi-honest secure aggregation "
                     "(lfl.semi_honest_secagg); this host's policy requires the active-server "
                     "defence (require_active_secagg)"));
  }
  std::optional<random::Csprng> key_rng;
  if (job.active_secagg) {
    if (options.key_authority == nullptr) {
      return absl::FailedPreconditionError(
          absl::StrCat("job '", job.job_id,
                       "' runs active secure aggregation, but this host has no device "
                       "certificate to certify its devices' signing keys (--insecure?)"));
    }
    role->certifier_ =
        MakeKeyCertifier(options.key_authority->ca_pem(), job, role->credential_cache_);
    key_rng.emplace(options.seed.has_value()
                        ? random::Csprng::FromSeed(*options.seed).Fork("secagg-signing-keys")
                        : random::Csprng::FromOsEntropy());
  }
  if (options.seed.has_value()) {
    role->dropout_rng_ = random::Csprng::FromSeed(*options.seed).Fork("dropout");
  }
  lfl::LflDeviceOptions device_options = job.config.device;
  device_options.dim = job.config.dim;
  // Training noise: OS entropy, or (test mode) the host's own --seed, which
  // fedmf demo/train pass equal to the job's seed to reproduce
  // lfl::SimulateLfl. Nothing the server sends seeds a device.
  const bool seeded = options.seed.has_value();
  const random::Csprng root =
      seeded ? random::Csprng::FromSeed(*options.seed) : random::Csprng::FromOsEntropy();
  for (auto& [id, data] : devices) {
    if (data.num_items() != job.num_items) {
      return absl::InvalidArgumentError(absl::StrCat(
          "device ", id, ": its data has ", data.num_items(), " items, the job has ", job.num_items,
          " (lfl.num_items must match the catalogue of --devices-from)"));
    }
    Device d;
    d.id = id;
    if (key_rng.has_value()) {
      absl::StatusOr<DeviceSigningIdentity> identity =
          options.key_authority->Issue(job.job_id, id, *key_rng);
      if (!identity.ok()) return identity.status();
      d.signing.emplace(*std::move(identity));
    }
    d.lfl = std::make_unique<lfl::LflDevice>(
        std::move(data), device_options, dp,
        seeded ? root.Fork(absl::StrCat("device-", id)) : random::Csprng::FromOsEntropy());
    role->devices_.emplace(id, std::move(d));
  }
  return role;
}

LflRole::Device* LflRole::Find(uint64_t id) {
  auto it = devices_.find(id);
  return it == devices_.end() ? nullptr : &it->second;
}

absl::StatusOr<mf::ErrorMetrics> LflRole::Pretrain(const mf::Matrix& v0) {
  std::vector<Device*> all;
  for (auto& [id, d] : devices_) all.push_back(&d);
  std::vector<absl::Status> errors(all.size());
  std::vector<mf::ErrorMetrics> parts(all.size());
  // One copy shared by the host's devices: each keeps it as its fallback.
  auto shared = std::make_shared<const mf::Matrix>(v0);
  ParallelFor(all.size(), options_.threads, [&](size_t k) {
    errors[k] = all[k]->lfl->Pretrain(shared);
    if (errors[k].ok()) parts[k] = all[k]->lfl->EvaluateTest();
  });
  for (const absl::Status& s : errors) {
    if (!s.ok()) return s;
  }
  return mf::Combine(parts);
}

absl::StatusOr<std::vector<v1::DeviceMessage>> LflRole::OpenRound(
    int32_t iteration, int round, const v1::SecAggSession& session, int64_t round1_survivors,
    const std::vector<uint64_t>& devices, const mf::Matrix* v) {
  ASSIGN_OR_RETURN(secagg::SessionConfig config, net::SessionFromProto(session));
  const uint64_t key_session = session.key_session();
  if (std::string why = SessionRefusal(expect_, round, config, round1_survivors, key_session != 0);
      !why.empty()) {
    // Every device of this host sits the round out (the server sees them
    // silent); nothing is computed or sent.
    spdlog::error("job '{}' iteration {} round {}: REFUSED aggregation {}: {}", job_.job_id,
                  iteration, round, config.aggregation_id, why);
    for (uint64_t id : devices) {
      if (Device* d = Find(id)) d->client.reset();
    }
    return std::vector<v1::DeviceMessage>{};
  }
  if (config.consistency_check && !certifier_) {
    spdlog::error(
        "job '{}': aggregation {} is active but this job was admitted without signing "
        "keys; sitting it out",
        job_.job_id, config.aggregation_id);
    return std::vector<v1::DeviceMessage>{};
  }
  own_min_survivors_ = OwnMinSurvivors(
      expect_,
      static_cast<size_t>(RoundParticipants(round, config, round1_survivors, key_session != 0)));
  if (iteration != iteration_) {
    // A new iteration: whoever still waits for round 2 of the last one left it.
    for (auto& [id, d] : devices_) d.lfl->AbandonIteration();
    iteration_ = iteration;
  }
  if (round == 1) {
    if (v == nullptr) return absl::InvalidArgumentError("round 1 needs V(t)");
    v_ = *v;
  }
  round_ = round;
  aggregation_id_ = config.aggregation_id;
  round1_survivors_ = round1_survivors;
  const double p = round == 1 ? options_.dropout_round1 : options_.dropout_round2;
  std::vector<Device*> asked;
  for (uint64_t id : devices) {
    Device* d = Find(id);
    if (d == nullptr) continue;  // not ours: the server's task is wrong, ignore it
    d->client.reset();
    d->drop = lfl::SampleDropPoint(dropout_rng_, p);  // serial: reproducible under --seed
    if (key_session != 0 && d->key_session_id != key_session) {
      // A new key session: this aggregation is its setup for this device.
      d->key_session = std::make_shared<secagg::ClientSession>();
      d->key_session_id = key_session;
    }
    asked.push_back(d);
  }
  std::vector<std::optional<v1::DeviceMessage>> out(asked.size());
  std::vector<absl::Status> errors(asked.size());
  ParallelFor(asked.size(), options_.threads, [&](size_t k) {
    Device& d = *asked[k];
    if (!Sends(d.drop, secagg::Phase::kAdvertiseKeys)) return;
    random::Csprng rng = options_.seed.has_value()
                             ? random::Csprng::FromSeed(*options_.seed)
                                   .Fork(absl::StrCat("secagg/", config.aggregation_id, "/", d.id))
                             : random::Csprng::FromOsEntropy();
    std::optional<secagg::ClientSigning> signing;
    if (config.consistency_check) {
      if (!d.signing.has_value()) {
        errors[k] = absl::FailedPreconditionError("no signing key for this job");
        return;
      }
      absl::StatusOr<secagg::ClientSigning> sg =
          options_.key_authority->Signing(*d.signing, certifier_);
      if (!sg.ok()) {
        errors[k] = sg.status();
        return;
      }
      signing.emplace(*std::move(sg));
    }
    absl::StatusOr<secagg::ClientStateMachine> c =
        key_session != 0
            ? secagg::ClientStateMachine::CreateInSession(config, d.id, std::move(rng),
                                                          d.key_session, std::move(signing))
            : secagg::ClientStateMachine::Create(config, d.id, std::move(rng), std::move(signing));
    if (!c.ok()) {
      errors[k] = c.status();
      return;
    }
    d.client.emplace(*std::move(c));
    absl::StatusOr<secagg::ClientMessage> m = d.client->Start();
    if (!m.ok()) {
      errors[k] = m.status();
      return;
    }
    out[k] = net::ClientMessageToProto(*m, config.bits);
  });
  std::vector<v1::DeviceMessage> msgs;
  for (size_t k = 0; k < asked.size(); ++k) {
    if (!errors[k].ok()) {
      // The server sent a session this device cannot take part in: it sits
      // this round out (the server drops it), the others go on.
      spdlog::warn("device {}: cannot open aggregation {}: {}", asked[k]->id, config.aggregation_id,
                   errors[k].message());
      continue;
    }
    if (out[k].has_value()) msgs.push_back(std::move(*out[k]));
  }
  return msgs;
}

absl::StatusOr<std::vector<uint64_t>> LflRole::Input(Device& d) {
  absl::StatusOr<std::vector<double>> x =
      round_ == 1 ? d.lfl->Round1(v_) : d.lfl->Round2(round1_survivors_);
  if (!x.ok()) return x.status();
  const crypto::FixedPointCodec& codec = round_ == 1 ? codecs_->round1 : codecs_->round2;
  return codec.EncodeVector(*x);
}

absl::StatusOr<std::vector<v1::DeviceMessage>> LflRole::Answer(
    const std::vector<v1::InboxMessage>& inbox) {
  std::vector<Device*> targets(inbox.size(), nullptr);
  std::vector<secagg::ServerMessage> decoded(inbox.size());
  std::vector<bool> send(inbox.size(), false);
  std::vector<uint64_t> releasing;
  for (size_t k = 0; k < inbox.size(); ++k) {
    Device* d = Find(inbox[k].device());
    if (d == nullptr || !d->client.has_value()) continue;
    absl::StatusOr<secagg::ServerMessage> m =
        net::ServerMessageFromProto(inbox[k], aggregation_id_);
    if (!m.ok()) {
      spdlog::warn("device {}: malformed server message: {}", d->id, m.status().message());
      continue;
    }
    if (const auto* cc = std::get_if<secagg::ConsistencyCheckRequest>(&*m)) {
      // |U3| of this aggregation is LFL's U1 of this round: below this
      // device's own minimum nothing may be unmasked (secagg_guard.h).
      if (std::string why = SurvivorRefusal(round_, cc->survivors.size(), own_min_survivors_);
          !why.empty()) {
        spdlog::error("device {}: ABORTS aggregation {}: {}", d->id, aggregation_id_, why);
        d->client.reset();
        continue;
      }
    }
    targets[k] = d;
    send[k] = Sends(d->drop, secagg::HeaderOf(*m).phase);
    if (send[k] && round_ == 1 && std::holds_alternative<secagg::MaskedInputRequest>(*m)) {
      releasing.push_back(d->id);
    }
    decoded[k] = *std::move(m);
  }
  // The ledger is charged before any round-1 input leaves a device.
  if (!releasing.empty()) {
    absl::StatusOr<std::vector<uint64_t>> charged =
        ledger_->Charge(releasing, job_.job_id, iteration_, noise_multiplier_);
    if (!charged.ok()) return charged.status();
    const std::set<uint64_t> ok(charged->begin(), charged->end());
    for (size_t k = 0; k < inbox.size(); ++k) {
      if (targets[k] != nullptr && send[k] &&
          std::holds_alternative<secagg::MaskedInputRequest>(decoded[k]) &&
          ok.count(targets[k]->id) == 0) {
        spdlog::warn("device {}: already released iteration {} of job '{}'; sitting it out",
                     targets[k]->id, iteration_, job_.job_id);
        send[k] = false;
      }
    }
  }
  std::vector<std::optional<v1::DeviceMessage>> out(inbox.size());
  const int bits = codecs_->round1.bits();
  ParallelFor(inbox.size(), options_.threads, [&](size_t k) {
    Device* d = targets[k];
    if (d == nullptr) return;
    if (!send[k] && !std::holds_alternative<secagg::AbortNotice>(decoded[k])) {
      d->client.reset();  // vanished: it takes no further part in this round
      return;
    }
    if (std::holds_alternative<secagg::MaskedInputRequest>(decoded[k])) {
      absl::StatusOr<std::vector<uint64_t>> x = Input(*d);
      if (!x.ok() || !d->client->SetInput(*std::move(x)).ok()) {
        spdlog::warn("device {}: no input this round: {}", d->id,
                     x.ok() ? "SetInput refused" : x.status().message());
        d->client.reset();
        return;
      }
    }
    absl::StatusOr<std::optional<secagg::ClientMessage>> reply = d->client->Handle(decoded[k]);
    if (!reply.ok()) {
      spdlog::warn("device {}: left aggregation {}: {}", d->id, aggregation_id_,
                   reply.status().message());
      return;
    }
    if (reply->has_value()) out[k] = net::ClientMessageToProto(**reply, bits);
  });
  std::vector<v1::DeviceMessage> msgs;
  for (auto& m : out) {
    if (m.has_value()) msgs.push_back(std::move(*m));
  }
  return msgs;
}

absl::StatusOr<mf::ErrorMetrics> LflRole::Finish(const mf::Matrix& v) {
  std::vector<Device*> all;
  for (auto& [id, d] : devices_) {
    d.lfl->AbandonIteration();
    d.client.reset();
    all.push_back(&d);
  }
  std::vector<absl::Status> errors(all.size());
  std::vector<mf::ErrorMetrics> parts(all.size());
  auto shared = std::make_shared<const mf::Matrix>(v);
  ParallelFor(all.size(), options_.threads, [&](size_t k) {
    errors[k] = all[k]->lfl->Finish(shared);
    if (errors[k].ok()) parts[k] = all[k]->lfl->EvaluateTest();
  });
  for (const absl::Status& s : errors) {
    if (!s.ok()) return s;
  }
  return mf::Combine(parts);
}

absl::StatusOr<double> LflRole::EpsilonSpent() const {
  ASSIGN_OR_RETURN(int64_t releases, ledger_->MaxReleases(job_.job_id));
  if (releases == 0) return 0.0;
  if (noise_multiplier_ <= 0) return std::numeric_limits<double>::infinity();
  return dp::ComputeEpsilon(1.0, noise_multiplier_, releases, job_.config.delta);
}

}  // namespace fedmf::device
