#include "common/secagg/client_state_machine.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"
#include "common/crypto/mod2k.h"
#include "common/secagg/graph.h"
#include "common/secagg/internal/client_phases.h"

namespace fedmf::secagg {

const char* ClientStateName(ClientState state) {
  switch (state) {
    case ClientState::kR0AdvertiseKeys: return "R0AdvertiseKeys";
    case ClientState::kR1ShareKeys: return "R1ShareKeys";
    case ClientState::kR2MaskedInput: return "R2MaskedInput";
    case ClientState::kR3Unmasking: return "R3Unmasking";
    case ClientState::kCompleted: return "Completed";
    case ClientState::kAborted: return "Aborted";
    case ClientState::kConsistencyCheck: return "ConsistencyCheck";
  }
  return "Unknown";
}

ClientStateMachine::ClientStateMachine(std::unique_ptr<internal::ClientContext> ctx,
                                       std::unique_ptr<internal::ClientPhase> phase)
    : ctx_(std::move(ctx)), phase_(std::move(phase)) {}
ClientStateMachine::ClientStateMachine(ClientStateMachine&&) noexcept = default;
ClientStateMachine& ClientStateMachine::operator=(ClientStateMachine&&) noexcept = default;
ClientStateMachine::~ClientStateMachine() = default;

absl::StatusOr<ClientStateMachine> ClientStateMachine::Create(
    SessionConfig config, DeviceId self, random::Csprng rng, std::optional<ClientSigning> signing) {
  // Validates the config and that `self` is in the roster.
  ASSIGN_OR_RETURN(std::vector<DeviceId> neighbours,
                   NeighbourhoodGraph::NeighboursOf(config, self));
  return WithNeighbours(std::move(config), self, std::move(neighbours), std::move(rng),
                        std::move(signing));
}

absl::StatusOr<ClientStateMachine> ClientStateMachine::WithNeighbours(
    SessionConfig config, DeviceId self, std::vector<DeviceId> neighbours, random::Csprng rng,
    std::optional<ClientSigning> signing) {
  if (signing.has_value() && !signing->certifier) {
    return absl::InvalidArgumentError("ClientSigning without a certifier");
  }
  auto ctx =
      std::make_unique<internal::ClientContext>(internal::ClientContext{std::move(config),
                                                                        self,
                                                                        std::move(neighbours),
                                                                        std::move(rng),
                                                                        std::nullopt,
                                                                        std::move(signing),
                                                                        {},
                                                                        nullptr});
  return ClientStateMachine(std::move(ctx), internal::MakeClientInitialPhase());
}

absl::StatusOr<ClientStateMachine> ClientStateMachine::CreateInSession(
    SessionConfig config, DeviceId self, random::Csprng rng, std::shared_ptr<ClientSession> session,
    std::optional<ClientSigning> signing) {
  if (session == nullptr) return absl::InvalidArgumentError("CreateInSession without a session");
  RETURN_IF_ERROR(session->CheckRound(config, signing.has_value()));
  const uint64_t aggregation_id = config.aggregation_id;
  absl::StatusOr<ClientStateMachine> made;
  if (session->established()) {
    // CheckRound held the roster, graph and degree to the setup's, so N(self)
    // is the one the setup computed.
    if (self != session->self()) {
      return absl::InvalidArgumentError(
          absl::StrCat("the session belongs to device ", session->self(), ", not ", self));
    }
    RETURN_IF_ERROR(ValidateSessionConfig(config));
    made = WithNeighbours(std::move(config), self, session->neighbours(), std::move(rng),
                          std::move(signing));
  } else {
    made = Create(std::move(config), self, std::move(rng), std::move(signing));
  }
  ASSIGN_OR_RETURN(ClientStateMachine client, std::move(made));
  if (session->established()) client.ctx_->peer_signing_keys = session->peer_signing_keys();
  session->MarkStarted(aggregation_id);
  client.ctx_->session = std::move(session);
  return client;
}

DeviceId ClientStateMachine::id() const { return ctx_->self; }

const std::vector<DeviceId>& ClientStateMachine::neighbours() const { return ctx_->neighbours; }

absl::Status ClientStateMachine::SetInput(std::vector<uint64_t> input) {
  if (state_ != ClientState::kR0AdvertiseKeys && state_ != ClientState::kR1ShareKeys &&
      state_ != ClientState::kR2MaskedInput) {
    return absl::FailedPreconditionError(
        absl::StrCat("SetInput in state ", ClientStateName(state_)));
  }
  if (input.size() != ctx_->config.vector_length) {
    return absl::InvalidArgumentError(absl::StrCat(
        "input has ", input.size(), " elements, expected ", ctx_->config.vector_length));
  }
  const uint64_t mask = crypto::LowBitsMask(ctx_->config.bits);
  // One branch-free pass (it vectorizes); the search for the culprit only
  // when there is one.
  uint64_t high_bits = 0;
  for (uint64_t v : input) high_bits |= v & ~mask;
  if (high_bits != 0) {
    const size_t i = static_cast<size_t>(
        std::find_if(input.begin(), input.end(), [mask](uint64_t v) { return (v & ~mask) != 0; }) -
        input.begin());
    return absl::InvalidArgumentError(
        absl::StrCat("input element ", i, " is not below 2^", ctx_->config.bits));
  }
  ctx_->input = std::move(input);
  return absl::OkStatus();
}

absl::Status ClientStateMachine::Abort(absl::Status reason) {
  state_ = ClientState::kAborted;
  phase_.reset();  // drops every secret the phase held
  ctx_->input.reset();
  abort_reason_ = reason;
  return reason;
}

absl::StatusOr<ClientMessage> ClientStateMachine::Start() {
  if (phase_ == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("Start() in state ", ClientStateName(state_)));
  }
  absl::StatusOr<internal::ClientTransition> t = phase_->Start(*ctx_);
  if (!t.ok()) {
    // Starting twice is the caller's bug, not the server's: no abort.
    if (state_ != ClientState::kR0AdvertiseKeys) return t.status();
    return Abort(t.status());
  }
  phase_ = std::move(t->next);
  state_ = phase_->state();
  return std::move(*t->out);
}

absl::Status ClientStateMachine::CheckHeader(const ServerMessage& message) const {
  const MessageHeader& h = HeaderOf(message);
  if (h.aggregation_id != ctx_->config.aggregation_id) {
    return absl::InvalidArgumentError(absl::StrCat(MessageName(message), " for aggregation ",
                                                   h.aggregation_id, ", expected ",
                                                   ctx_->config.aggregation_id));
  }
  if (h.sender != kServerId || h.recipient != ctx_->self) {
    return absl::InvalidArgumentError(absl::StrCat(MessageName(message), " addressed ", h.sender,
                                                   " -> ", h.recipient, ", expected server -> ",
                                                   ctx_->self));
  }
  if (h.phase != ExpectedPhase(message)) {
    return absl::InvalidArgumentError(
        absl::StrCat(MessageName(message), " tagged with phase ", PhaseName(h.phase)));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<ClientMessage>> ClientStateMachine::Handle(
    const ServerMessage& message) {
  if (phase_ == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat("client ", ctx_->self, " is ",
                                                      ClientStateName(state_), "; ignoring ",
                                                      MessageName(message)));
  }
  if (absl::Status s = CheckHeader(message); !s.ok()) return Abort(s);
  if (const auto* notice = std::get_if<AbortNotice>(&message)) {
    return Abort(absl::AbortedError(absl::StrCat("server aborted: ", notice->reason)));
  }
  absl::StatusOr<internal::ClientTransition> t = phase_->Handle(*ctx_, message);
  if (!t.ok()) return Abort(t.status());
  phase_ = std::move(t->next);
  state_ = phase_ == nullptr ? ClientState::kCompleted : phase_->state();
  return std::move(t->out);
}

}  // namespace fedmf::secagg
