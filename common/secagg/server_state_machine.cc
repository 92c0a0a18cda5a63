#include "common/secagg/server_state_machine.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"
#include "common/secagg/internal/server_phases.h"

namespace fedmf::secagg {

const char* ServerStateName(ServerState state) {
  switch (state) {
    case ServerState::kR0AdvertiseKeys: return "R0AdvertiseKeys";
    case ServerState::kR1ShareKeys: return "R1ShareKeys";
    case ServerState::kR2MaskedInput: return "R2MaskedInput";
    case ServerState::kR3Unmasking: return "R3Unmasking";
    case ServerState::kConsistencyCheck: return "ConsistencyCheck";
    case ServerState::kCompleted: return "Completed";
    case ServerState::kAborted: return "Aborted";
  }
  return "Unknown";
}

ServerStateMachine::ServerStateMachine(std::unique_ptr<internal::ServerContext> ctx,
                                       std::unique_ptr<internal::ServerPhase> phase)
    : ctx_(std::move(ctx)), phase_(std::move(phase)) {}
ServerStateMachine::ServerStateMachine(ServerStateMachine&&) noexcept = default;
ServerStateMachine& ServerStateMachine::operator=(ServerStateMachine&&) noexcept = default;
ServerStateMachine::~ServerStateMachine() = default;

absl::StatusOr<ServerStateMachine> ServerStateMachine::Create(SessionConfig config,
                                                              random::Csprng rng) {
  ASSIGN_OR_RETURN(NeighbourhoodGraph graph, NeighbourhoodGraph::Create(config));
  const size_t n = config.roster.size();
  std::unique_ptr<internal::ServerPhase> phase = internal::MakeServerInitialPhase(config);
  auto ctx = std::unique_ptr<internal::ServerContext>(
      new internal::ServerContext{std::move(config),
                                  std::move(graph),
                                  std::move(rng),
                                  {},
                                  {},
                                  {},
                                  std::vector<crypto::X25519PublicKey>(n),
                                  std::vector<crypto::X25519PublicKey>(n),
                                  std::vector<std::vector<uint8_t>>(n),
                                  std::vector<std::vector<uint8_t>>(n),
                                  std::vector<std::vector<uint8_t>>(n),
                                  std::vector<std::vector<uint8_t>>(n),
                                  {},
                                  {},
                                  std::nullopt,
                                  nullptr,
                                  {},
                                  {}});
  return ServerStateMachine(std::move(ctx), std::move(phase));
}

absl::StatusOr<ServerStateMachine> ServerStateMachine::CreateInSession(
    SessionConfig config, random::Csprng rng, std::shared_ptr<ServerSession> session,
    const std::vector<DeviceId>& absent) {
  if (session == nullptr) return absl::InvalidArgumentError("CreateInSession without a session");
  RETURN_IF_ERROR(session->CheckRound(config));
  const uint64_t aggregation_id = config.aggregation_id;
  ASSIGN_OR_RETURN(ServerStateMachine server, Create(std::move(config), std::move(rng)));
  internal::ServerContext& ctx = *server.ctx_;
  const size_t n = ctx.config.roster.size();
  ctx.recovery_commitment.resize(n);
  ctx.mask_pads.resize(n);
  internal::DeviceSet eligible(n, 1);
  if (session->established()) {
    ctx.signing_key = session->signing_keys();
    eligible = session->members();
  }
  for (DeviceId d : absent) {
    const std::optional<size_t> i = ctx.graph.IndexOf(d);
    if (!i.has_value()) {
      return absl::InvalidArgumentError(absl::StrCat("absent device ", d, " is not in the roster"));
    }
    eligible[*i] = 0;
  }
  server.phase_ = internal::MakeAdvertisePhase(std::move(eligible), session->established());
  session->MarkStarted(aggregation_id);
  ctx.session = std::move(session);
  return server;
}

const SessionConfig& ServerStateMachine::config() const { return ctx_->config; }

void ServerStateMachine::set_threads(int threads) { ctx_->threads = std::max(threads, 1); }

absl::Status ServerStateMachine::Reject(DeviceId device, absl::Status reason, bool drop) {
  ctx_->rejections.push_back(
      {device, phase_ != nullptr ? phase_->phase() : Phase::kAbort, reason, drop});
  return reason;
}

absl::Status ServerStateMachine::Receive(const ClientMessage& message) {
  const MessageHeader& h = HeaderOf(message);
  if (phase_ == nullptr) {
    return Reject(
        h.sender,
        absl::FailedPreconditionError(absl::StrCat(
            MessageName(message), " after the aggregation ended (", ServerStateName(state_), ")")),
        false);
  }
  const std::optional<size_t> index = ctx_->graph.IndexOf(h.sender);
  if (!index.has_value()) {
    return Reject(h.sender,
                  absl::PermissionDeniedError(
                      absl::StrCat(MessageName(message), " from a device not in the roster")),
                  false);
  }
  // Wrong before the contents matter: the sender is dropped for it.
  absl::Status malformed;
  if (h.aggregation_id != ctx_->config.aggregation_id) {
    malformed = absl::InvalidArgumentError(absl::StrCat(MessageName(message), " for aggregation ",
                                                        h.aggregation_id, ", this is ",
                                                        ctx_->config.aggregation_id));
  } else if (h.recipient != kServerId) {
    malformed = absl::InvalidArgumentError(
        absl::StrCat(MessageName(message), " addressed to ", h.recipient, ", not the server"));
  } else if (h.phase != ExpectedPhase(message)) {
    malformed = absl::InvalidArgumentError(
        absl::StrCat(MessageName(message), " tagged with phase ", PhaseName(h.phase)));
  } else if (ExpectedPhase(message) != phase_->phase()) {
    malformed = absl::FailedPreconditionError(absl::StrCat(
        MessageName(message), " out of phase: the server is in ", PhaseName(phase_->phase())));
  }
  const internal::Verdict verdict = malformed.ok()
                                        ? phase_->Receive(*ctx_, *index, message)
                                        : phase_->Penalize(*ctx_, *index, std::move(malformed));
  if (verdict.status.ok()) return verdict.status;
  return Reject(h.sender, verdict.status, verdict.dropped);
}

bool ServerStateMachine::AllExpectedReceived() const {
  return phase_ != nullptr && phase_->AllExpectedReceived();
}

absl::StatusOr<std::vector<ServerMessage>> ServerStateMachine::ClosePhase() {
  if (phase_ == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("ClosePhase in state ", ServerStateName(state_)));
  }
  absl::StatusOr<internal::ServerTransition> t = phase_->Close(*ctx_);
  if (!t.ok()) {
    // Only local failures (OpenSSL) get here; the aggregation cannot go on.
    ctx_->abort_reason = t.status();
    phase_.reset();
    state_ = ServerState::kAborted;
    return t.status();
  }
  phase_ = std::move(t->next);
  if (phase_ != nullptr) {
    state_ = phase_->state();
  } else {
    state_ = ctx_->abort_reason.ok() ? ServerState::kCompleted : ServerState::kAborted;
  }
  return std::move(t->out);
}

const std::vector<Rejection>& ServerStateMachine::rejections() const { return ctx_->rejections; }
const absl::Status& ServerStateMachine::abort_reason() const { return ctx_->abort_reason; }

std::vector<DeviceId> ServerStateMachine::Survivors(Phase phase) const {
  std::vector<DeviceId> out;
  const size_t p = static_cast<size_t>(phase);
  if (p >= ctx_->survivors.size() || !ctx_->survivors[p].has_value()) return out;
  const internal::DeviceSet& set = *ctx_->survivors[p];
  for (size_t i = 0; i < set.size(); ++i) {
    if (set[i]) out.push_back(ctx_->config.roster[i]);
  }
  return out;
}

absl::StatusOr<AggregationResult> ServerStateMachine::Result() const {
  if (state_ != ServerState::kCompleted || !ctx_->result.has_value()) {
    return absl::FailedPreconditionError(
        absl::StrCat("no result in state ", ServerStateName(state_)));
  }
  return *ctx_->result;
}

}  // namespace fedmf::secagg
