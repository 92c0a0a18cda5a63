#include "common/psi/signing.h"

#include <sodium.h>

#include "absl/strings/str_cat.h"

namespace fedmf::psi {
namespace {

void AppendU32(std::vector<uint8_t>* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<uint8_t>(v >> (8 * i)));
}

void AppendBytes(std::vector<uint8_t>* out, std::string_view s) {
  AppendU32(out, static_cast<uint32_t>(s.size()));
  out->insert(out->end(), s.begin(), s.end());
}

void AppendDigest(std::vector<uint8_t>* out, const std::vector<Point>& points) {
  crypto_hash_sha256_state state;
  crypto_hash_sha256_init(&state);
  for (const Point& p : points) crypto_hash_sha256_update(&state, p.data(), p.size());
  uint8_t digest[crypto_hash_sha256_BYTES];
  crypto_hash_sha256_final(&state, digest);
  AppendU32(out, static_cast<uint32_t>(points.size()));
  out->insert(out->end(), digest, digest + sizeof(digest));
}

}  // namespace

absl::StatusOr<std::vector<uint8_t>> Ed25519Signer::Sign(std::span<const uint8_t> message) const {
  return key_->Sign(message);
}

absl::Status Ed25519Verifier::Verify(int32_t party, std::span<const uint8_t> message,
                                     std::span<const uint8_t> signature) const {
  if (party < 0 || party >= static_cast<int32_t>(keys_.size())) {
    return absl::UnauthenticatedError(absl::StrCat("no key for PSI party ", party));
  }
  return crypto::Ed25519Verify(keys_[party], message, signature);
}

std::vector<uint8_t> SignedBytes(const std::string& session, const BlindedList& list) {
  std::vector<uint8_t> out;
  AppendBytes(&out, "fedmf-psi-v1 list");
  AppendBytes(&out, session);
  AppendU32(&out, static_cast<uint32_t>(list.origin));
  AppendU32(&out, static_cast<uint32_t>(list.step));
  AppendU32(&out, static_cast<uint32_t>(list.signer));
  AppendDigest(&out, list.points);
  return out;
}

std::vector<uint8_t> SignedBytes(const std::string& session, const Intersection& intersection) {
  std::vector<uint8_t> out;
  AppendBytes(&out, "fedmf-psi-v1 intersection");
  AppendBytes(&out, session);
  AppendDigest(&out, intersection.tags);
  return out;
}

}  // namespace fedmf::psi
