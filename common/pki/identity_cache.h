#ifndef FEDMF_COMMON_PKI_IDENTITY_CACHE_H_
#define FEDMF_COMMON_PKI_IDENTITY_CACHE_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "common/pki/identity.h"

namespace fedmf::pki {

// Memoizes IdentityFromCertificatePem by the certificate's exact PEM bytes.
//
// Why: a server authorizes every RPC by the peer certificate gRPC reports for
// the connection, and parsing it with OpenSSL 3's decoders took 43% of
// fedmf-server's request-thread CPU in the 10-party HFL demo (5 RPCs per
// party and round). The identity is a pure function of those bytes and the
// handshake already verified the chain, so answering from the memo changes no
// decision: a lookup compares the whole PEM, not a hash of it. Refusals are
// not memoized (a server sees them rarely; each is parsed and reported anew).
//
// Bounded: holding `max_entries` certificates, the next new one clears the
// memo first (a federation has a handful of certificates per host; the bound
// only keeps a stream of distinct certificates from growing memory).
// Thread-safe.
class IdentityCache {
 public:
  explicit IdentityCache(size_t max_entries);

  IdentityCache(const IdentityCache&) = delete;
  IdentityCache& operator=(const IdentityCache&) = delete;

  // IdentityFromCertificatePem(pem), from the memo when `pem` was seen.
  absl::StatusOr<PeerIdentity> Lookup(absl::string_view pem) ABSL_LOCKS_EXCLUDED(mu_);

  // Certificates held now, and parses so far (one per miss): for tests and
  // metrics.
  size_t size() const ABSL_LOCKS_EXCLUDED(mu_);
  int64_t parses() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  const size_t max_entries_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, PeerIdentity> memo_ ABSL_GUARDED_BY(mu_);
  int64_t parses_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace fedmf::pki

#endif  // FEDMF_COMMON_PKI_IDENTITY_CACHE_H_
