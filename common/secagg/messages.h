// The messages of secure aggregation (Bonawitz et al., CCS 2017; SecAgg+ of
// Bell et al., CCS 2020) as plain structs. No protobuf: the daemons convert
// wire messages to these at the edge, so every byte field here is still
// untrusted and is validated by the state machines (sizes included).
//
// Flow of one aggregation (U1 ⊇ U2 ⊇ U3 ⊇ U4 are the devices still in at the
// end of each phase; N(i) is i's neighbourhood in the session's graph):
//   device → server  AdvertiseKeys        (c_pk, s_pk)                   → U1
//   server → device  KeysBroadcast        keys of N(i) ∩ U1
//   device → server  ShareKeys            one AES-GCM ciphertext per j ∈ N(i) ∩ U1 → U2
//   server → device  MaskedInputRequest   the ciphertexts addressed to i from N(i) ∩ U2
//   device → server  MaskedInput          y_i                            → U3
//   server → device  ConsistencyCheckRequest  U3            (only if config.consistency_check)
//   device → server  ConsistencySignature  sig_i(aggregation, U3)        → U3' ⊆ U3
//   server → device  UnmaskingRequest     N(i) ∩ U3 and N(i) ∩ (U2 \ U3) [+ neighbours' signatures]
//   device → server  UnmaskingResponse    b-shares of survivors, s_sk-shares of dropped → U4
//   server → device  AbortNotice          when the server gives up
#ifndef FEDMF_COMMON_SECAGG_MESSAGES_H_
#define FEDMF_COMMON_SECAGG_MESSAGES_H_

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace fedmf::secagg {

using DeviceId = uint64_t;
// The server's address in message headers; never a device id.
inline constexpr DeviceId kServerId = ~uint64_t{0};

// The phase a message belongs to. A message whose tag disagrees with its type
// or with the receiver's current phase is rejected.
enum class Phase : uint8_t {
  kAdvertiseKeys = 0,
  kShareKeys = 1,
  kMaskedInput = 2,
  kUnmasking = 3,
  kAbort = 4,
  // Against an active server (Bonawitz et al. CCS'17 round 'ConsistencyCheck'):
  // every device signs the survivor set U3 before any unmasking share leaves.
  kConsistencyCheck = 5,
};
const char* PhaseName(Phase phase);

struct MessageHeader {
  uint64_t aggregation_id = 0;
  DeviceId sender = 0;
  DeviceId recipient = 0;
  Phase phase = Phase::kAdvertiseKeys;

  friend bool operator==(const MessageHeader&, const MessageHeader&) = default;
};

// ---- device → server ----

// In a session round after the setup (session.h) every key field is empty:
// the message only says "here for this aggregation".
//
// Two fresh X25519 public keys (32 bytes each): c_pk keys the channels that
// carry Shamir shares, s_pk the pairwise masks. Separate keys because s_sk is
// revealed when the device drops, and that must not open its channels.
//
// Against an active server (signing.h) the advertisement also carries the
// device's Ed25519 signing key, a credential certifying that key for this
// device (opaque here; checked by the receiving device's KeyCertifier), and an
// Ed25519 signature over AdvertisementStatement(aggregation, device, c_pk,
// s_pk). All three are empty in a semi-honest session.
struct AdvertiseKeys {
  MessageHeader header;
  std::vector<uint8_t> c_pk;
  std::vector<uint8_t> s_pk;
  std::vector<uint8_t> signing_key;
  std::vector<uint8_t> credential;
  std::vector<uint8_t> signature;
};

// A sealed share bundle; `peer` is the recipient in ShareKeys and the sender
// in MaskedInputRequest.
struct EncryptedShares {
  DeviceId peer = 0;
  std::vector<uint8_t> ciphertext;
};

// For every neighbour j ∈ N(i) ∩ U1, exactly one ciphertext: AES-GCM under
// HKDF(X25519(c_sk_i, c_pk_j)) of (i, j, share of s_sk_i, share of b_i).
// `b_commitment` binds b_i so that the server can tell a correct
// reconstruction from one corrupted by a lying share holder.
//
// In a session round (session.h) the bundle's first share is of the round's
// fresh recovery key e_i instead of s_sk_i, and two fields are added (both
// empty outside session rounds):
//   recovery_commitment  commits e_i as b_commitment commits b_i;
//   mask_pads            for every j ∈ N(i) ∩ U1: m_ij ⊕ HKDF(e_i, j), the
//                        round mask seed hidden under a pad only e_i opens.
// If i drops, the server recovers e_i from t shares and with it exactly the
// round's seeds m_ij, never the session's long-lived mask keys.
struct MaskPad {
  DeviceId peer = 0;
  std::vector<uint8_t> pad;
};
struct ShareKeys {
  MessageHeader header;
  std::vector<uint8_t> b_commitment;
  std::vector<EncryptedShares> shares;
  std::vector<uint8_t> recovery_commitment;
  std::vector<MaskPad> mask_pads;
};

// y_i = x_i + PRG(b_i) + Σ_{j<i} PRG(s_ij) − Σ_{j>i} PRG(s_ij)  (mod 2^bits),
// j over N(i) ∩ U2; every element < 2^bits.
struct MaskedInput {
  MessageHeader header;
  std::vector<uint64_t> masked;
};

// A serialized Shamir share (common/crypto/shamir.h) of `owner`'s secret.
struct RevealedShare {
  DeviceId owner = 0;
  std::vector<uint8_t> share;
};

// The device's Ed25519 signature over SurvivorSetStatement(aggregation, U3),
// U3 as the ConsistencyCheckRequest announced it.
struct ConsistencySignature {
  MessageHeader header;
  std::vector<uint8_t> signature;
};

// b-shares for the responder itself and every j in the request's survivors;
// s_sk-shares (in a session round: shares of e_j) for every j in its dropped
// list. Never both for one owner.
struct UnmaskingResponse {
  MessageHeader header;
  std::vector<RevealedShare> b_shares;
  std::vector<RevealedShare> s_sk_shares;
};

// ---- server → device ----

// The neighbour's advertisement, relayed as it was received (signing fields
// included, so the recipient can check them itself).
struct NeighbourKeys {
  DeviceId device = 0;
  std::vector<uint8_t> c_pk;
  std::vector<uint8_t> s_pk;
  std::vector<uint8_t> signing_key;
  std::vector<uint8_t> credential;
  std::vector<uint8_t> signature;
};

// Opens the ShareKeys phase: the keys of N(i) ∩ U1.
struct KeysBroadcast {
  MessageHeader header;
  std::vector<NeighbourKeys> neighbours;
};

// Opens the MaskedInput phase: the ciphertexts sealed to i by N(i) ∩ U2.
struct MaskedInputRequest {
  MessageHeader header;
  std::vector<EncryptedShares> shares;
};

// Opens the Unmasking phase, restricted to i's neighbourhood so it costs
// O(k): `survivors` = N(i) ∩ U3 \ {i}, `dropped` = N(i) ∩ (U2 \ U3).
// Opens the ConsistencyCheck phase: the full survivor set U3, sorted.
struct ConsistencyCheckRequest {
  MessageHeader header;
  std::vector<DeviceId> survivors;
};

struct DeviceSignature {
  DeviceId device = 0;
  std::vector<uint8_t> signature;
};

// With the consistency check, `signatures` are the ConsistencySignatures of
// i's neighbours that answered it (each over the same U3); empty otherwise.
struct UnmaskingRequest {
  MessageHeader header;
  std::vector<DeviceId> survivors;
  std::vector<DeviceId> dropped;
  std::vector<DeviceSignature> signatures;
};

struct AbortNotice {
  MessageHeader header;
  std::string reason;
};

using ClientMessage =
    std::variant<AdvertiseKeys, ShareKeys, MaskedInput, UnmaskingResponse, ConsistencySignature>;
using ServerMessage = std::variant<KeysBroadcast, MaskedInputRequest, UnmaskingRequest, AbortNotice,
                                   ConsistencyCheckRequest>;

const MessageHeader& HeaderOf(const ClientMessage& message);
const MessageHeader& HeaderOf(const ServerMessage& message);
// The phase a message of this type must carry.
Phase ExpectedPhase(const ClientMessage& message);
Phase ExpectedPhase(const ServerMessage& message);
const char* MessageName(const ClientMessage& message);
const char* MessageName(const ServerMessage& message);

}  // namespace fedmf::secagg

#endif  // FEDMF_COMMON_SECAGG_MESSAGES_H_
