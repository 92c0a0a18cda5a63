// Signing keys for secure aggregation against an active server
// (common/secagg/signing.h), as a fedmf-device host issues and checks them.
//
// Chain of trust (docs/security.md): federation CA -> the host's mTLS device
// certificate -> (the host signs secagg::KeyBindingStatement(job, device,
// key) with that certificate's private key) -> the device's per-job Ed25519
// key -> its signature on every key advertisement and survivor set of the
// job. The credential travelling with an advertisement is a
// v1::SigningKeyCredential (certificate PEM + that signature).
// A share-holder accepts a neighbour's key only if the certificate chains to
// the CA, has the device role, its signature verifies, and its name is the
// host the job grants that device to; the name is then the "host" of the
// host-collusion rule.
#ifndef FEDMF_CLIENT_DEVICE_SECAGG_KEYS_H_
#define FEDMF_CLIENT_DEVICE_SECAGG_KEYS_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/crypto/ed25519.h"
#include "common/lfl/wire/lfl_job_codec.h"
#include "common/pki/tls_files.h"
#include "common/random/csprng.h"
#include "common/secagg/signing.h"

namespace fedmf::device {

// One device's signing identity for one job.
struct DeviceSigningIdentity {
  std::vector<uint8_t> seed;        // RFC 8032 seed of the Ed25519 key (secret)
  std::vector<uint8_t> credential;  // serialized v1::SigningKeyCredential
};

class HostKeyAuthority {
 public:
  // `files`: the host's own mTLS material (its certificate's name is the host).
  static absl::StatusOr<HostKeyAuthority> Create(pki::TlsFiles files);

  const std::string& host() const { return host_; }
  const std::string& ca_pem() const { return files_.ca_cert_pem; }

  // A fresh key for `device` in job `job_id` (from `rng`: OS-seeded in
  // production) and the host's credential for it.
  absl::StatusOr<DeviceSigningIdentity> Issue(const std::string& job_id, uint64_t device,
                                              random::Csprng& rng) const;

  // The ClientSigning of `identity` (a new key object per aggregation).
  absl::StatusOr<secagg::ClientSigning> Signing(const DeviceSigningIdentity& identity,
                                                const secagg::KeyCertifier& certifier) const;

 private:
  explicit HostKeyAuthority(pki::TlsFiles files, std::string host)
      : files_(std::move(files)), host_(std::move(host)) {}
  pki::TlsFiles files_;
  std::string host_;
};

// Checks a neighbour's credential against the federation CA `ca_pem` for job
// `job`: the certifying host's name, or kUnauthenticated naming what failed
// (not a SigningKeyCredential, certificate not from the CA or not a device
// certificate, signature invalid, or the host is not the one the job grants
// `device` to).
absl::StatusOr<std::string> CheckKeyCredential(const std::string& ca_pem,
                                               const net::LflJobConfig& job, uint64_t device,
                                               const crypto::Ed25519PublicKey& key,
                                               std::span<const uint8_t> credential);

// CheckKeyCredential behind a per-job CredentialCache.
secagg::KeyCertifier MakeKeyCertifier(std::string ca_pem, net::LflJobConfig job,
                                      secagg::CredentialCache& cache);

}  // namespace fedmf::device

#endif  // FEDMF_CLIENT_DEVICE_SECAGG_KEYS_H_
