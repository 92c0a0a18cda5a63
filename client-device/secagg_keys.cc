#include "client-device/secagg_keys.h"

#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"
#include "common/pki/certificate_signature.h"
#include "common/pki/identity.h"
#include "fedmf/v1/device.pb.h"

namespace fedmf::device {

absl::StatusOr<HostKeyAuthority> HostKeyAuthority::Create(pki::TlsFiles files) {
  ASSIGN_OR_RETURN(pki::PeerIdentity id, pki::IdentityFromCertificatePem(files.cert_pem));
  if (id.role != pki::Role::kDevice) {
    return absl::InvalidArgumentError(absl::StrCat(
        "certificate '", id.name, "' does not have the device role: it cannot certify ",
        "secure-aggregation keys (issue a device certificate with `fedmf ca issue`)"));
  }
  std::string host = id.name;
  return HostKeyAuthority(std::move(files), std::move(host));
}

absl::StatusOr<DeviceSigningIdentity> HostKeyAuthority::Issue(const std::string& job_id,
                                                              uint64_t device,
                                                              random::Csprng& rng) const {
  DeviceSigningIdentity out;
  out.seed.resize(crypto::kEd25519PrivateKeyBytes);
  rng.FillBytes(out.seed.data(), out.seed.size());
  ASSIGN_OR_RETURN(crypto::Ed25519PrivateKey key, crypto::Ed25519PrivateKey::FromSeed(out.seed));
  absl::StatusOr<std::vector<uint8_t>> sig = pki::SignWithCertificateKey(
      files_.key_pem, secagg::KeyBindingStatement(job_id, device, key.public_key()));
  if (!sig.ok()) return sig.status();
  v1::SigningKeyCredential c;
  c.set_host_certificate(files_.cert_pem);
  c.set_binding_signature(std::string(sig->begin(), sig->end()));
  const std::string bytes = c.SerializeAsString();
  out.credential.assign(bytes.begin(), bytes.end());
  return out;
}

absl::StatusOr<secagg::ClientSigning> HostKeyAuthority::Signing(
    const DeviceSigningIdentity& identity, const secagg::KeyCertifier& certifier) const {
  absl::StatusOr<crypto::Ed25519PrivateKey> key =
      crypto::Ed25519PrivateKey::FromSeed(identity.seed);
  if (!key.ok()) return key.status();
  return secagg::ClientSigning{*std::move(key), identity.credential, certifier, host_};
}

absl::StatusOr<std::string> CheckKeyCredential(const std::string& ca_pem,
                                               const net::LflJobConfig& job, uint64_t device,
                                               const crypto::Ed25519PublicKey& key,
                                               std::span<const uint8_t> credential) {
  v1::SigningKeyCredential c;
  if (!c.ParseFromArray(credential.data(), static_cast<int>(credential.size()))) {
    return absl::UnauthenticatedError(
        absl::StrCat("device ", device, ": credential is not a SigningKeyCredential"));
  }
  const std::string& sig = c.binding_signature();
  absl::StatusOr<pki::PeerIdentity> id = pki::VerifyCertificateSignature(
      c.host_certificate(), ca_pem, pki::Role::kDevice,
      secagg::KeyBindingStatement(job.job_id, device, key),
      std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(sig.data()), sig.size()));
  if (!id.ok()) {
    return absl::UnauthenticatedError(absl::StrCat("device ", device, ": ", id.status().message()));
  }
  const std::optional<std::string> granted = net::GrantedHost(job, device);
  if (!granted.has_value() || *granted != id->name) {
    return absl::UnauthenticatedError(absl::StrCat(
        "device ", device, ": its key is certified by host '", id->name, "', but job '", job.job_id,
        "' grants it to ", granted.has_value() ? "'" + *granted + "'" : "no host"));
  }
  return id->name;
}

secagg::KeyCertifier MakeKeyCertifier(std::string ca_pem, net::LflJobConfig job,
                                      secagg::CredentialCache& cache) {
  return cache.Wrap([ca = std::move(ca_pem), job = std::move(job)](
                        secagg::DeviceId device, const crypto::Ed25519PublicKey& key,
                        std::span<const uint8_t> credential) -> absl::StatusOr<std::string> {
    return CheckKeyCredential(ca, job, device, key, credential);
  });
}

}  // namespace fedmf::device
