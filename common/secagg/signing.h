// Secure aggregation against an active server: what is signed, and how a
// device learns that a peer's signing key really belongs to that peer.
//
// Bonawitz et al. (CCS'17, §4 "active adversary") add two things to the
// semi-honest protocol, and so do we:
//   * every AdvertiseKeys is signed by the device's long-term signing key, so
//     the server cannot substitute the keys a device encrypts its shares to
//     (which would let it decrypt both share sets of that device and unmask
//     it);
//   * a ConsistencyCheck round: each device signs the survivor set U3 the
//     server announced, and releases unmasking shares only after seeing
//     >= threshold valid signatures (its own and its neighbours') over the
//     same U3, so a server that tells holders different stories about who
//     dropped is caught before any share is released.
// The signing key itself is certified outside this library (it has no PKI):
// the caller passes a KeyCertifier that checks a peer's credential (in the
// daemons: the device host's certificate chain to the federation CA and the
// host's signature binding (job, device, signing key); docs/security.md).
// Whether a device insists on all this is ITS decision (ClientSigning given
// to ClientStateMachine::Create), never the server's.
#ifndef FEDMF_COMMON_SECAGG_SIGNING_H_
#define FEDMF_COMMON_SECAGG_SIGNING_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/crypto/ed25519.h"
#include "common/secagg/config.h"
#include "common/secagg/messages.h"

namespace fedmf::secagg {

// The name of the host that certified `signing_key` as device `device`'s key
// for this job, if `credential` proves it; an error otherwise. Called on
// untrusted bytes relayed by the server.
using KeyCertifier = std::function<absl::StatusOr<std::string>(
    DeviceId device, const crypto::Ed25519PublicKey& signing_key,
    std::span<const uint8_t> credential)>;

// Remembers the credentials a certifier accepted, so that a host checks each
// device's credential once per job (signing keys and credentials are per job)
// instead of once per neighbour and aggregation. Only successes are kept, keyed
// by the exact (device, key, credential) bytes. Thread-safe; share one per
// host and job.
class CredentialCache {
 public:
  KeyCertifier Wrap(KeyCertifier inner);

 private:
  struct State;
  std::shared_ptr<State> state_;
};

// Collusion in hosts: one fedmf-device host runs many devices and holds all
// of their keys and shares. A host that colludes with the server must not
// reach t shares of a device of ANOTHER host, so a signing client refuses to
// share its secrets (aborts at the key broadcast) when more than t-1 of its
// live neighbours were certified by any single host other than its own. (Its
// own host already holds its input; shares held there reveal nothing new.)
// With the server equivocating about dropouts the colluding host's c holders
// give b- AND s_sk-shares, so the honest holders need only reach t - c in
// each of the two groups the server splits them into: the client also
// refuses unless 2t > holders + c (HostCollusionBound) for every other host.
struct ClientSigning {
  crypto::Ed25519PrivateKey key;
  std::vector<uint8_t> credential;  // certifies key.public_key() for this device
  KeyCertifier certifier;           // checks the neighbours' credentials
  std::string host;                 // the host that certified this device
};

// The bytes a device signs in AdvertiseKeys: a domain label, the aggregation,
// the device, both X25519 keys and the signing key (so a signature cannot be
// moved to another aggregation, device or key pair).
std::vector<uint8_t> AdvertisementStatement(uint64_t aggregation_id, DeviceId device,
                                            std::span<const uint8_t> c_pk,
                                            std::span<const uint8_t> s_pk,
                                            std::span<const uint8_t> signing_key);

// The bytes a device signs in the consistency check: a domain label, the
// aggregation and the sorted survivor set U3.
std::vector<uint8_t> SurvivorSetStatement(uint64_t aggregation_id,
                                          std::span<const DeviceId> survivors);

// The configuration-time form of the host rule above, for whoever builds a
// session and knows which host runs each device (`host_of`: roster order):
// refuses, naming the device, the host and the count, any configuration in
// which some device has c neighbours on one host other than its own with
// !HostCollusionBound(threshold, neighbours + 1, c). Devices enforce the same
// rule themselves on certified keys.
absl::Status CheckHostCollusion(const SessionConfig& config,
                                const std::vector<std::string>& host_of);

// Whether a device with `holders` share holders (itself included), `c` of
// them on one other host colluding with an equivocating server, keeps both
// of its secrets below t shares: c < t and 2t > holders + c.
inline bool HostCollusionBound(size_t t, size_t holders, size_t c) {
  return c < t && 2 * t > holders + c;
}

// What a device's certifier signs to bind a signing key to a device of a job
// (in the daemons: the fedmf-device host, with its device-certificate key;
// docs/security.md): a domain label, the job, the device and the key.
std::vector<uint8_t> KeyBindingStatement(std::string_view job, DeviceId device,
                                         std::span<const uint8_t> signing_key);

}  // namespace fedmf::secagg

#endif  // FEDMF_COMMON_SECAGG_SIGNING_H_
