#include "common/secagg/messages.h"

#include <type_traits>

namespace fedmf::secagg {
namespace {

// Every message struct carries `header`; one visitor serves both variants.
template <typename Variant>
const MessageHeader& HeaderOfVariant(const Variant& message) {
  return std::visit([](const auto& m) -> const MessageHeader& { return m.header; }, message);
}

template <typename T>
constexpr Phase PhaseOfType() {
  if constexpr (std::is_same_v<T, AdvertiseKeys>) return Phase::kAdvertiseKeys;
  if constexpr (std::is_same_v<T, KeysBroadcast> || std::is_same_v<T, ShareKeys>) {
    return Phase::kShareKeys;
  }
  if constexpr (std::is_same_v<T, MaskedInputRequest> || std::is_same_v<T, MaskedInput>) {
    return Phase::kMaskedInput;
  }
  if constexpr (std::is_same_v<T, UnmaskingRequest> || std::is_same_v<T, UnmaskingResponse>) {
    return Phase::kUnmasking;
  }
  if constexpr (std::is_same_v<T, ConsistencyCheckRequest> ||
                std::is_same_v<T, ConsistencySignature>) {
    return Phase::kConsistencyCheck;
  }
  return Phase::kAbort;
}

template <typename T>
constexpr const char* NameOfType() {
  if constexpr (std::is_same_v<T, AdvertiseKeys>) return "AdvertiseKeys";
  if constexpr (std::is_same_v<T, ShareKeys>) return "ShareKeys";
  if constexpr (std::is_same_v<T, MaskedInput>) return "MaskedInput";
  if constexpr (std::is_same_v<T, UnmaskingResponse>) return "UnmaskingResponse";
  if constexpr (std::is_same_v<T, KeysBroadcast>) return "KeysBroadcast";
  if constexpr (std::is_same_v<T, MaskedInputRequest>) return "MaskedInputRequest";
  if constexpr (std::is_same_v<T, UnmaskingRequest>) return "UnmaskingRequest";
  if constexpr (std::is_same_v<T, ConsistencyCheckRequest>) return "ConsistencyCheckRequest";
  if constexpr (std::is_same_v<T, ConsistencySignature>) return "ConsistencySignature";
  return "AbortNotice";
}

template <typename Variant>
Phase ExpectedPhaseOfVariant(const Variant& message) {
  return std::visit([](const auto& m) { return PhaseOfType<std::decay_t<decltype(m)>>(); },
                    message);
}

template <typename Variant>
const char* NameOfVariant(const Variant& message) {
  return std::visit([](const auto& m) { return NameOfType<std::decay_t<decltype(m)>>(); }, message);
}

}  // namespace

const char* PhaseName(Phase phase) {
  switch (phase) {
    case Phase::kAdvertiseKeys: return "AdvertiseKeys";
    case Phase::kShareKeys: return "ShareKeys";
    case Phase::kMaskedInput: return "MaskedInput";
    case Phase::kUnmasking: return "Unmasking";
    case Phase::kAbort: return "Abort";
    case Phase::kConsistencyCheck: return "ConsistencyCheck";
  }
  return "Unknown";
}

const MessageHeader& HeaderOf(const ClientMessage& message) { return HeaderOfVariant(message); }
const MessageHeader& HeaderOf(const ServerMessage& message) { return HeaderOfVariant(message); }
Phase ExpectedPhase(const ClientMessage& message) { return ExpectedPhaseOfVariant(message); }
Phase ExpectedPhase(const ServerMessage& message) { return ExpectedPhaseOfVariant(message); }
const char* MessageName(const ClientMessage& message) { return NameOfVariant(message); }
const char* MessageName(const ServerMessage& message) { return NameOfVariant(message); }

}  // namespace fedmf::secagg
