// Signatures on the PSI's messages: each party signs every list it sends and
// the intersection it accepts, bound to the session (the job) and to the
// list's place in the ring, so the relay can neither inject lists of its own
// (a dictionary attack: route H(guess) around the ring and compare) nor replay
// one from another session or step.
#ifndef FEDMF_COMMON_PSI_SIGNING_H_
#define FEDMF_COMMON_PSI_SIGNING_H_

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/crypto/ed25519.h"
#include "common/psi/messages.h"

namespace fedmf::psi {

// Signs as this party. Daemons may back it with their certificate's key.
class Signer {
 public:
  virtual ~Signer() = default;
  virtual absl::StatusOr<std::vector<uint8_t>> Sign(std::span<const uint8_t> message) const = 0;
};

// Checks a signature as coming from `party` (its ring index); kUnauthenticated
// if it does not.
class Verifier {
 public:
  virtual ~Verifier() = default;
  virtual absl::Status Verify(int32_t party, std::span<const uint8_t> message,
                              std::span<const uint8_t> signature) const = 0;
};

// Ed25519 keys known to every party in advance (in-process runs, tests).
class Ed25519Signer final : public Signer {
 public:
  explicit Ed25519Signer(const crypto::Ed25519PrivateKey* key) : key_(key) {}  // not owned
  absl::StatusOr<std::vector<uint8_t>> Sign(std::span<const uint8_t> message) const override;

 private:
  const crypto::Ed25519PrivateKey* key_;
};

class Ed25519Verifier final : public Verifier {
 public:
  explicit Ed25519Verifier(std::vector<crypto::Ed25519PublicKey> keys) : keys_(std::move(keys)) {}
  absl::Status Verify(int32_t party, std::span<const uint8_t> message,
                      std::span<const uint8_t> signature) const override;

 private:
  std::vector<crypto::Ed25519PublicKey> keys_;  // by ring index
};

// The bytes signed for a list: a domain tag, the session, the ring position
// (origin, step, signer) and SHA-256 of the points.
std::vector<uint8_t> SignedBytes(const std::string& session, const BlindedList& list);
// The bytes signed for an accepted intersection.
std::vector<uint8_t> SignedBytes(const std::string& session, const Intersection& intersection);

}  // namespace fedmf::psi

#endif  // FEDMF_COMMON_PSI_SIGNING_H_
