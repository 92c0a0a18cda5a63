#include "common/secagg/simulate.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>

#include "absl/functional/function_ref.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/base/parallel_for.h"
#include "common/base/status_macros.h"
#include "common/crypto/ed25519.h"
#include "common/crypto/mod2k.h"
#include "common/random/csprng.h"
#include "common/secagg/signing.h"

namespace fedmf::secagg {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

// When a device stops: it takes part in phase p iff stage > p (and in the
// unmasking phase its response is delivered iff stage > kDuring).
enum Stage : int {
  kBefore = 0,
  kAfterAdvertise = 1,
  kAfterShareKeys = 2,
  kAfterMaskedInput = 3,
  kDuring = 4,
  kNever = 5,
};

constexpr uint64_t kHeaderBytes = 25;  // agg id, sender, recipient, phase

uint64_t PayloadBytes(const ClientMessage& message, int bits) {
  return kHeaderBytes +
         std::visit(
             [bits](const auto& m) -> uint64_t {
               using T = std::decay_t<decltype(m)>;
               if constexpr (std::is_same_v<T, AdvertiseKeys>) {
                 return m.c_pk.size() + m.s_pk.size() + m.signing_key.size() + m.credential.size() +
                        m.signature.size();
               } else if constexpr (std::is_same_v<T, ConsistencySignature>) {
                 return m.signature.size();
               } else if constexpr (std::is_same_v<T, ShareKeys>) {
                 uint64_t b = m.b_commitment.size() + m.recovery_commitment.size();
                 for (const auto& es : m.shares) b += 8 + es.ciphertext.size();
                 for (const auto& p : m.mask_pads) b += 8 + p.pad.size();
                 return b;
               } else if constexpr (std::is_same_v<T, MaskedInput>) {
                 return m.masked.size() * static_cast<uint64_t>((bits + 7) / 8);  // packed
               } else {
                 uint64_t b = 0;
                 for (const auto& rs : m.b_shares) b += 8 + rs.share.size();
                 for (const auto& rs : m.s_sk_shares) b += 8 + rs.share.size();
                 return b;
               }
             },
             message);
}

uint64_t PayloadBytes(const ServerMessage& message) {
  return kHeaderBytes + std::visit(
                            [](const auto& m) -> uint64_t {
                              using T = std::decay_t<decltype(m)>;
                              if constexpr (std::is_same_v<T, KeysBroadcast>) {
                                uint64_t b = 0;
                                for (const auto& nk : m.neighbours) {
                                  b += 8 + nk.c_pk.size() + nk.s_pk.size() + nk.signing_key.size() +
                                       nk.credential.size() + nk.signature.size();
                                }
                                return b;
                              } else if constexpr (std::is_same_v<T, ConsistencyCheckRequest>) {
                                return 8 * m.survivors.size();
                              } else if constexpr (std::is_same_v<T, MaskedInputRequest>) {
                                uint64_t b = 0;
                                for (const auto& es : m.shares) b += 8 + es.ciphertext.size();
                                return b;
                              } else if constexpr (std::is_same_v<T, UnmaskingRequest>) {
                                uint64_t b = 8 * (m.survivors.size() + m.dropped.size());
                                for (const auto& ds : m.signatures) b += 8 + ds.signature.size();
                                return b;
                              } else {
                                return m.reason.size();
                              }
                            },
                            message);
}

absl::StatusOr<std::vector<int>> Stages(const std::vector<DeviceId>& roster,
                                        const DropoutPlan& plan) {
  std::vector<int> stage(roster.size(), kNever);
  const std::pair<const std::vector<DeviceId>*, Stage> lists[] = {
      {&plan.before_advertise, kBefore},
      {&plan.after_advertise, kAfterAdvertise},
      {&plan.after_share_keys, kAfterShareKeys},
      {&plan.after_masked_input, kAfterMaskedInput},
      {&plan.during_unmasking, kDuring}};
  for (const auto& [ids, s] : lists) {
    for (DeviceId id : *ids) {
      const auto it = std::lower_bound(roster.begin(), roster.end(), id);
      if (it == roster.end() || *it != id) {
        return absl::InvalidArgumentError(absl::StrCat("dropout plan names unknown device ", id));
      }
      int& slot = stage[static_cast<size_t>(it - roster.begin())];
      if (slot != kNever) {
        return absl::InvalidArgumentError(absl::StrCat("device ", id, " drops out twice"));
      }
      slot = s;
    }
  }
  return stage;
}

class Simulation {
 public:
  Simulation(const SimulationSpec& spec, SessionConfig config, ServerStateMachine server,
             std::vector<int> stage)
      : spec_(spec),
        config_(std::move(config)),
        server_(std::move(server)),
        stage_(std::move(stage)),
        n_(config_.roster.size()),
        clients_(n_),
        inbox_(n_) {
    server_.set_threads(spec_.num_threads);
    if (spec_.signing) {
      random::Csprng rng = random::Csprng::FromSeed(spec_.signing_seed.value_or(spec_.seed))
                               .Fork("simulate/authority");
      authority_.emplace(*crypto::Ed25519PrivateKey::Generate(rng));
    }
  }

  absl::StatusOr<SimulationResult> Run() {
    result_.config = config_;
    // Phase 0: each device builds its neighbourhood and keys.
    std::vector<std::optional<ClientMessage>> out(n_);
    const auto c0 = Clock::now();
    std::vector<absl::Status> errors(n_);
    base::ParallelFor(n_, spec_.num_threads, [&](size_t i) {
      if (stage_[i] == kBefore) return;
      random::Csprng rng =
          random::Csprng::FromSeed(spec_.seed).Fork(absl::StrCat("device/", config_.roster[i]));
      std::optional<ClientSigning> signing;
      if (spec_.signing) {
        random::Csprng key_rng = spec_.signing_seed.has_value()
                                     ? random::Csprng::FromSeed(*spec_.signing_seed)
                                           .Fork(absl::StrCat("signing/", config_.roster[i]))
                                     : rng.Fork("signing");
        absl::StatusOr<crypto::Ed25519PrivateKey> key =
            crypto::Ed25519PrivateKey::Generate(key_rng);
        if (!key.ok()) {
          errors[i] = key.status();
          return;
        }
        absl::StatusOr<std::vector<uint8_t>> credential = authority_->Sign(
            KeyBindingStatement(kSimulatedJob, config_.roster[i], key->public_key()));
        if (!credential.ok()) {
          errors[i] = credential.status();
          return;
        }
        signing = ClientSigning{std::move(*key), std::move(*credential),
                                spec_.credential_cache != nullptr
                                    ? spec_.credential_cache->Wrap(Certifier())
                                    : Certifier(),
                                absl::StrCat("host/", config_.roster[i])};
      }
      absl::StatusOr<ClientStateMachine> c =
          spec_.session != nullptr
              ? ClientStateMachine::CreateInSession(config_, config_.roster[i], std::move(rng),
                                                    spec_.session->devices[i], std::move(signing))
              : ClientStateMachine::Create(config_, config_.roster[i], std::move(rng),
                                           std::move(signing));
      if (!c.ok()) {
        errors[i] = c.status();
        return;
      }
      clients_[i].emplace(std::move(*c));
      absl::StatusOr<ClientMessage> m = clients_[i]->Start();
      if (m.ok()) out[i] = std::move(*m);
    });
    for (const absl::Status& e : errors) {
      if (!e.ok()) return e;
    }
    result_.client_seconds[kKeyAgreement] += Seconds(c0, Clock::now());
    RETURN_IF_ERROR(DeliverAndClose(kKeyAgreement, out));

    for (size_t phase : {kSharing, kMasking, kUnmasking}) {
      if (server_.state() == ServerState::kAborted) break;
      if (phase == kMasking) {
        RETURN_IF_ERROR(RunMaskingPhase());
        if (spec_.signing && server_.state() != ServerState::kAborted) {
          RETURN_IF_ERROR(RunConsistencyCheck());
        }
        continue;
      }
      if (phase == kSharing) {
        // Every device first, then the server, as before RunAndDeliver:
        // streaming this phase's small messages made it slower at n = 1000
        // (median of ten interleaved pairs: 302 ms streamed, 258 ms not; cause not
        // pinned down), unlike the masking and unmasking phases.
        const auto c = Clock::now();
        base::ParallelFor(n_, spec_.num_threads, [&](size_t i) { out[i] = Act(i, phase); });
        result_.client_seconds[phase] += Seconds(c, Clock::now());
        RETURN_IF_ERROR(DeliverAndClose(phase, out));
        continue;
      }
      RETURN_IF_ERROR(RunAndDeliver(
          phase,
          [&](size_t i) {
            return Done{Act(i, phase), {}};
          },
          [](size_t, const Done&) { return absl::OkStatus(); }));
    }
    return Finish();
  }

 private:
  // Device i's answer to its pending server message in `phase`, if it is
  // still around and has one.
  std::optional<ClientMessage> Act(size_t i, size_t phase) {
    if (stage_[i] <= static_cast<int>(phase) || !clients_[i].has_value() ||
        !inbox_[i].has_value()) {
      return std::nullopt;
    }
    absl::StatusOr<std::optional<ClientMessage>> reply = clients_[i]->Handle(*inbox_[i]);
    inbox_[i].reset();
    if (!reply.ok() || !reply->has_value()) return std::nullopt;
    // A response computed during unmasking by a device that then vanishes.
    if (phase == kUnmasking && stage_[i] == kDuring) return std::nullopt;
    return std::move(**reply);
  }

  static constexpr const char* kSimulatedJob = "simulate";

  // One host per device, named after it; the authority stands in for the
  // host certificate chain.
  KeyCertifier Certifier() const {
    const crypto::Ed25519PublicKey ca = authority_->public_key();
    return [ca](DeviceId device, const crypto::Ed25519PublicKey& key,
                std::span<const uint8_t> credential) -> absl::StatusOr<std::string> {
      if (absl::Status s = crypto::Ed25519Verify(
              ca, KeyBindingStatement(kSimulatedJob, device, key), credential);
          !s.ok()) {
        return s;
      }
      return absl::StrCat("host/", device);
    };
  }

  // Devices gone after their masked input do not sign; those that vanish
  // during unmasking still do.
  absl::Status RunConsistencyCheck() {
    std::vector<std::optional<ClientMessage>> out(n_);
    const auto c = Clock::now();
    base::ParallelFor(n_, spec_.num_threads, [&](size_t i) {
      if (stage_[i] <= static_cast<int>(kAfterMaskedInput) || !clients_[i].has_value() ||
          !inbox_[i].has_value()) {
        return;
      }
      absl::StatusOr<std::optional<ClientMessage>> reply = clients_[i]->Handle(*inbox_[i]);
      inbox_[i].reset();
      if (reply.ok() && reply->has_value()) out[i] = std::move(**reply);
    });
    result_.consistency_client_seconds += Seconds(c, Clock::now());
    const double before = result_.server_seconds[kMasking];
    absl::Status s = DeliverAndClose(kMasking, out);
    result_.consistency_server_seconds += result_.server_seconds[kMasking] - before;
    result_.server_seconds[kMasking] = before;
    return s;
  }

  // A device's message of one phase, and (masking only) the input it masked,
  // kept for expected_sum.
  struct Done {
    std::optional<ClientMessage> message;
    std::vector<uint64_t> input;
  };

  // Every device computes its input and masks it on the worker threads; the
  // simulation's own records (the clear check sum, the masked vectors) take
  // every input the server accepted.
  absl::Status RunMaskingPhase() {
    if (spec_.compute_expected_sum) result_.expected_sum.assign(config_.vector_length, 0);
    const auto record = [&](size_t k, const Done& accepted) -> absl::Status {
      if (spec_.record_masked_inputs) {
        result_.masked_inputs[config_.roster[k]] = std::get<MaskedInput>(*accepted.message).masked;
      }
      if (!spec_.compute_expected_sum) return absl::OkStatus();
      return crypto::AddMod2k(result_.expected_sum, accepted.input, config_.bits);
    };
    return RunAndDeliver(
        kMasking,
        [&](size_t i) {
          Done d;
          if (stage_[i] > static_cast<int>(kMasking) && clients_[i].has_value()) {
            std::vector<uint64_t> input =
                spec_.input ? spec_.input(i, config_.roster[i])
                            : SimulationInput(spec_.seed, config_.roster[i], config_.vector_length,
                                              config_.bits);
            if (!input.empty()) {
              if (spec_.compute_expected_sum) d.input = input;
              if (clients_[i]->SetInput(std::move(input)).ok()) d.message = Act(i, kMasking);
            }
          }
          return d;
        },
        record);
  }

  // Runs act(i) for every device on the worker threads. The server receives
  // the messages in roster order as they become ready (whichever worker
  // completes the next one in order delivers it), so it works while devices
  // still do and only a few messages are alive at once; then the phase
  // closes. The outcome is that of delivering all of them in order after
  // the devices finished, with any number of threads. `on_accepted(k, done)`
  // runs (under the lock) for each message the server accepted; its first
  // error stops the delivery and is returned.
  absl::Status RunAndDeliver(size_t phase, absl::FunctionRef<Done(size_t)> act,
                             absl::FunctionRef<absl::Status(size_t, const Done&)> on_accepted) {
    // server_ and result_ are touched only under `mu` during the phase.
    struct Delivery {
      absl::Mutex mu;
      std::vector<std::optional<Done>> done ABSL_GUARDED_BY(mu);
      size_t next ABSL_GUARDED_BY(mu) = 0;  // first device not yet delivered
      absl::Status failure ABSL_GUARDED_BY(mu);
      double server_seconds ABSL_GUARDED_BY(mu) = 0;
    } delivery;
    {
      absl::MutexLock lock(&delivery.mu);
      delivery.done.resize(n_);
    }
    // Records device i's outcome, then delivers every completed device from
    // `next` on, in roster order.
    const auto complete = [&](size_t i, Done d) {
      absl::MutexLock lock(&delivery.mu);
      delivery.done[i] = std::move(d);
      for (size_t& k = delivery.next; k < n_ && delivery.done[k].has_value(); ++k) {
        Done ready = *std::move(delivery.done[k]);
        delivery.done[k].reset();
        if (!ready.message.has_value() || !delivery.failure.ok()) continue;
        result_.upload_bytes += PayloadBytes(*ready.message, config_.bits);
        const auto r0 = Clock::now();
        // Rejections are in server_.rejections().
        const bool accepted = server_.Receive(*ready.message).ok();
        delivery.server_seconds += Seconds(r0, Clock::now());
        if (accepted) delivery.failure = on_accepted(k, ready);
      }
    };
    const auto c = Clock::now();
    base::ParallelFor(n_, spec_.num_threads, [&](size_t i) { complete(i, act(i)); });
    const double wall = Seconds(c, Clock::now());
    {
      absl::MutexLock lock(&delivery.mu);
      RETURN_IF_ERROR(delivery.failure);
      result_.server_seconds[phase] += delivery.server_seconds;
      result_.client_seconds[phase] += wall - delivery.server_seconds;
    }
    std::vector<std::optional<ClientMessage>> none;
    return DeliverAndClose(phase, none);
  }

  absl::Status DeliverAndClose(size_t phase, std::vector<std::optional<ClientMessage>>& out) {
    const auto s0 = Clock::now();
    for (std::optional<ClientMessage>& m : out) {
      if (!m.has_value()) continue;
      result_.upload_bytes += PayloadBytes(*m, config_.bits);
      server_.Receive(*m).IgnoreError();  // rejections are in server_.rejections()
      m.reset();
    }
    absl::StatusOr<std::vector<ServerMessage>> next = server_.ClosePhase();
    result_.server_seconds[phase] += Seconds(s0, Clock::now());
    if (!next.ok()) return next.status();
    for (ServerMessage& m : *next) {
      result_.download_bytes += PayloadBytes(m);
      const DeviceId to = HeaderOf(m).recipient;
      const size_t i =
          static_cast<size_t>(std::lower_bound(config_.roster.begin(), config_.roster.end(), to) -
                              config_.roster.begin());
      if (std::holds_alternative<AbortNotice>(m)) {
        // Only devices still around hear it.
        if (stage_[i] > static_cast<int>(phase) && clients_[i].has_value()) {
          clients_[i]->Handle(m).IgnoreError();
        }
        continue;
      }
      inbox_[i] = std::move(m);
    }
    return absl::OkStatus();
  }

  absl::StatusOr<SimulationResult> Finish() {
    result_.server_state = server_.state();
    result_.abort_reason = server_.abort_reason();
    result_.rejections = server_.rejections();
    for (size_t p = 0; p < 4; ++p) result_.survivors[p] = server_.Survivors(static_cast<Phase>(p));
    for (size_t i = 0; i < n_; ++i) {
      result_.client_states[config_.roster[i]] =
          clients_[i].has_value() ? clients_[i]->state() : ClientState::kR0AdvertiseKeys;
    }
    // Each device's state is thousands of small blocks: free them on every
    // thread, not serially after the last phase.
    base::ParallelFor(n_, spec_.num_threads, [&](size_t i) { clients_[i].reset(); });
    if (server_.state() == ServerState::kCompleted) {
      ASSIGN_OR_RETURN(AggregationResult r, server_.Result());
      result_.sum = std::move(r.sum);
      result_.included = std::move(r.included);
    }
    return std::move(result_);
  }

  const SimulationSpec& spec_;
  SessionConfig config_;
  ServerStateMachine server_;
  std::vector<int> stage_;
  size_t n_;
  std::vector<std::optional<ClientStateMachine>> clients_;
  std::vector<std::optional<ServerMessage>> inbox_;
  std::optional<crypto::Ed25519PrivateKey> authority_;
  SimulationResult result_;
};

}  // namespace

std::vector<DeviceId> SimulationRoster(size_t n) {
  std::vector<DeviceId> roster(n);
  for (size_t i = 0; i < n; ++i) roster[i] = 1000 + 7919 * static_cast<DeviceId>(i);
  return roster;
}

std::vector<uint64_t> SimulationInput(uint64_t seed, DeviceId id, size_t length, int bits) {
  random::Csprng rng = random::Csprng::FromSeed(seed).Fork(absl::StrCat("input/", id));
  std::vector<uint64_t> x(length);
  rng.FillBytes(reinterpret_cast<uint8_t*>(x.data()), x.size() * sizeof(uint64_t));
  const uint64_t mask = crypto::LowBitsMask(bits);
  for (uint64_t& v : x) v &= mask;
  return x;
}

absl::StatusOr<SimulationResult> Simulate(const SimulationSpec& spec) {
  if (spec.num_devices < 2) return absl::InvalidArgumentError("simulate: need >= 2 devices");
  SecurityRequirements req = spec.requirements;
  if (spec.signing) {
    // One host per simulated device: a host colluding with the server is one
    // corrupt neighbour, which signing devices count (HostCollusionBound).
    req.corrupt_rate = std::max(req.corrupt_rate, 1.0 / static_cast<double>(spec.num_devices));
  }
  absl::StatusOr<GraphParameters> params =
      spec.parameters.has_value() ? absl::StatusOr<GraphParameters>(*spec.parameters)
                                  : (spec.graph == GraphKind::kHarary
                                         ? ChooseSecAggPlusParameters(spec.num_devices, req)
                                         : ChooseCompleteGraphParameters(spec.num_devices, req));
  if (!params.ok()) return params.status();

  random::Csprng master = random::Csprng::FromSeed(spec.seed);
  SessionConfig config;
  config.aggregation_id = master.Fork("simulate/aggregation-id").NextU64();
  config.roster = SimulationRoster(spec.num_devices);
  ApplyParameters(*params, config);
  config.graph_seed = master.Fork("simulate/graph-seed").NextU64();
  config.vector_length = spec.vector_length;
  config.bits = spec.bits;
  config.consistency_check = spec.signing;

  ASSIGN_OR_RETURN(std::vector<int> stage, Stages(config.roster, spec.dropouts));
  SimulatedSession* session = spec.session.get();
  if (session != nullptr) {
    if (!session->setup.has_value()) {
      // The setup: ids well below 2^63, so a session never runs out of them.
      config.aggregation_id >>= 1;
      session->devices.clear();
      for (size_t i = 0; i < config.roster.size(); ++i) {
        session->devices.push_back(std::make_shared<ClientSession>());
      }
      session->setup = config;
    } else {
      if (session->devices.size() != config.roster.size()) {
        return absl::InvalidArgumentError("simulate: the session has a different roster size");
      }
      const SessionConfig& setup = *session->setup;
      config.aggregation_id = session->last_aggregation_id + 1;
      config.graph_seed = setup.graph_seed;
      config.degree = setup.degree;
      config.threshold = setup.threshold;
      config.min_survivors = std::max(config.min_survivors, setup.threshold);
      config.graph = setup.graph;
      for (size_t i = 0; i < stage.size(); ++i) {
        if (!session->devices[i]->established()) stage[i] = kBefore;
      }
    }
    session->last_aggregation_id = config.aggregation_id;
  }
  absl::StatusOr<ServerStateMachine> server =
      session != nullptr ? ServerStateMachine::CreateInSession(
                               config, master.Fork("simulate/server"), session->server)
                         : ServerStateMachine::Create(config, master.Fork("simulate/server"));
  if (!server.ok()) return server.status();
  Simulation sim(spec, std::move(config), std::move(*server), std::move(stage));
  return sim.Run();
}

absl::StatusOr<SimulationResult> Simulate(size_t n, size_t vector_length, int bits,
                                          const DropoutPlan& dropouts, uint64_t seed) {
  SimulationSpec spec;
  spec.num_devices = n;
  spec.vector_length = vector_length;
  spec.bits = bits;
  spec.dropouts = dropouts;
  spec.seed = seed;
  return Simulate(spec);
}

}  // namespace fedmf::secagg
