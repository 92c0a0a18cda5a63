#include "party/psi_client.h"

#include <algorithm>
#include <set>
#include <utility>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"
#include "common/log/log.h"
#include "common/net/client_context.h"
#include "common/net/credentials.h"
#include "common/pki/certificate_signature.h"
#include "common/pki/role.h"
#include "common/psi/party.h"
#include "common/random/csprng.h"

namespace fedmf::party {
namespace {

class CertificateSigner final : public psi::Signer {
 public:
  explicit CertificateSigner(std::string key_pem) : key_pem_(std::move(key_pem)) {}
  absl::StatusOr<std::vector<uint8_t>> Sign(std::span<const uint8_t> message) const override {
    return pki::SignWithCertificateKey(key_pem_, message);
  }

 private:
  std::string key_pem_;
};

class CertificateVerifier final : public psi::Verifier {
 public:
  CertificateVerifier(std::string ca_pem, std::vector<std::string> ring,
                      std::vector<std::string> certificates)
      : ca_pem_(std::move(ca_pem)),
        ring_(std::move(ring)),
        certificates_(std::move(certificates)) {}
  absl::Status Verify(int32_t party, std::span<const uint8_t> message,
                      std::span<const uint8_t> signature) const override {
    if (party < 0 || party >= static_cast<int32_t>(ring_.size())) {
      return absl::UnauthenticatedError(absl::StrCat("no PSI party ", party));
    }
    ASSIGN_OR_RETURN(pki::PeerIdentity id,
                     pki::VerifyCertificateSignature(certificates_[party], ca_pem_,
                                                     pki::Role::kParty, message, signature));
    if (id.name != ring_[party]) {
      return absl::UnauthenticatedError(absl::StrCat("ring position ", party, " is '", ring_[party],
                                                     "' but the certificate names '", id.name,
                                                     "'"));
    }
    return absl::OkStatus();
  }

 private:
  std::string ca_pem_;
  std::vector<std::string> ring_;
  std::vector<std::string> certificates_;
};

// --insecure only: no certificates exist to sign with.
class NoSigner final : public psi::Signer {
 public:
  absl::StatusOr<std::vector<uint8_t>> Sign(std::span<const uint8_t>) const override {
    return std::vector<uint8_t>{};
  }
};
class NoVerifier final : public psi::Verifier {
 public:
  absl::Status Verify(int32_t, std::span<const uint8_t>, std::span<const uint8_t>) const override {
    return absl::OkStatus();
  }
};

std::string Encode(const std::vector<psi::Point>& points) {
  std::string out;
  out.reserve(points.size() * sizeof(psi::Point));
  for (const psi::Point& p : points) out.append(reinterpret_cast<const char*>(p.data()), p.size());
  return out;
}

absl::StatusOr<std::vector<psi::Point>> Decode(const std::string& bytes) {
  if (bytes.size() % sizeof(psi::Point) != 0) {
    return absl::InvalidArgumentError("PSI points: not a whole number of 32-byte encodings");
  }
  std::vector<psi::Point> out(bytes.size() / sizeof(psi::Point));
  for (size_t i = 0; i < out.size(); ++i) {
    std::copy_n(bytes.data() + i * sizeof(psi::Point), sizeof(psi::Point), out[i].begin());
  }
  return out;
}

// The ring must be the roster the party accepted: every name once, itself at
// its index. (A server adding a name needs a certificate for it, which it
// cannot make; dropping one would align with fewer parties than offered.)
absl::Status CheckRing(const PsiClientOptions& o) {
  std::multiset<std::string> ring(o.ring.begin(), o.ring.end());
  std::multiset<std::string> roster(o.roster.begin(), o.roster.end());
  if (ring != roster) {
    return absl::InvalidArgumentError("the alignment's parties are not the job's roster: refused");
  }
  if (o.index < 0 || o.index >= static_cast<int32_t>(o.ring.size()) || o.ring[o.index] != o.party) {
    return absl::InvalidArgumentError(
        absl::StrCat("the alignment puts this party at position ", o.index, ": refused"));
  }
  return absl::OkStatus();
}

class Exchange {
 public:
  Exchange(v1::Coordinator::StubInterface* stub, const PsiClientOptions& o)
      : stub_(stub), o_(o), end_(absl::Now() + o.deadline) {}

  absl::Status Send(v1::PsiSendRequest request) {
    request.set_party(o_.party);
    request.set_job_id(o_.job_id);
    request.set_session(o_.session);
    auto ctx = net::DeadlineContext(absl::Seconds(60));
    v1::Ack ack;
    return net::FromGrpc(stub_->PsiSend(ctx.get(), request, &ack));
  }

  absl::StatusOr<v1::PsiFetchResponse> Fetch() {
    if (absl::Now() > end_) {
      return absl::DeadlineExceededError("the private set intersection took too long");
    }
    v1::PsiFetchRequest request;
    request.set_party(o_.party);
    request.set_job_id(o_.job_id);
    request.set_session(o_.session);
    auto ctx = net::DeadlineContext(absl::Seconds(60));
    v1::PsiFetchResponse response;
    RETURN_IF_ERROR(net::FromGrpc(stub_->PsiFetch(ctx.get(), request, &response)));
    if (!response.error().empty()) {
      return absl::AbortedError(absl::StrCat("the alignment failed: ", response.error()));
    }
    return response;
  }

 private:
  v1::Coordinator::StubInterface* stub_;
  const PsiClientOptions& o_;
  absl::Time end_;
};

v1::PsiSendRequest ListMessage(const psi::BlindedList& l) {
  v1::PsiSendRequest r;
  v1::PsiList* w = r.mutable_list();
  w->set_origin(l.origin);
  w->set_step(l.step);
  w->set_signer(l.signer);
  w->set_points(Encode(l.points));
  w->set_signature(std::string(l.signature.begin(), l.signature.end()));
  return r;
}

}  // namespace

absl::StatusOr<std::vector<std::string>> RunPsiClient(
    v1::Coordinator::StubInterface* stub, const PsiClientOptions& o,
    std::vector<std::string> own_ids, std::map<std::string, int64_t>* partner_sizes) {
  RETURN_IF_ERROR(CheckRing(o));
  Exchange exchange(stub, o);
  const int32_t s = static_cast<int32_t>(o.ring.size());
  // 1. Certificates: mine out, everyone's in.
  v1::PsiSendRequest hello;
  hello.set_certificate_pem(o.tls.has_value() ? o.tls->cert_pem : std::string());
  RETURN_IF_ERROR(exchange.Send(hello));
  std::vector<std::string> certificates;
  std::vector<v1::PsiList> early;  // lists that arrive with the certificates
  while (certificates.empty()) {
    ASSIGN_OR_RETURN(v1::PsiFetchResponse r, exchange.Fetch());
    if (r.certificate_pem_size() > 0) {
      if (r.certificate_pem_size() != s) {
        return absl::InvalidArgumentError("the server sent certificates for another ring");
      }
      certificates.assign(r.certificate_pem().begin(), r.certificate_pem().end());
    }
    for (const v1::PsiList& l : r.lists()) early.push_back(l);
  }
  std::unique_ptr<psi::Signer> signer;
  std::unique_ptr<psi::Verifier> verifier;
  if (o.tls.has_value()) {
    signer = std::make_unique<CertificateSigner>(o.tls->key_pem);
    verifier = std::make_unique<CertificateVerifier>(o.tls->ca_cert_pem, o.ring, certificates);
  } else {
    spdlog::warn(
        "job '{}': private set intersection without certificates (--insecure): the "
        "server could inject lists; never in production",
        o.job_id);
    signer = std::make_unique<NoSigner>();
    verifier = std::make_unique<NoVerifier>();
  }
  psi::PartyOptions options;
  options.session = o.session;
  options.index = o.index;
  options.num_parties = s;
  options.threads = o.threads;
  options.max_list_ratio = o.max_list_ratio;
  // Keys, blind and shuffle: always OS entropy (no seed reaches a PSI).
  random::Csprng rng = random::Csprng::FromOsEntropy();
  ASSIGN_OR_RETURN(auto party, psi::PsiParty::Create(std::move(own_ids), options, rng, signer.get(),
                                                     verifier.get()));
  // However the run ends: the sizes the partners' lists showed.
  absl::Cleanup report_sizes = [&] {
    if (partner_sizes == nullptr) return;
    for (const auto& [origin, size] : party->other_set_sizes()) {
      (*partner_sizes)[o.ring[origin]] = size;
    }
  };
  // 2. Start, hop the others' lists, finish the own one.
  ASSIGN_OR_RETURN(psi::BlindedList start, party->Start());
  RETURN_IF_ERROR(exchange.Send(ListMessage(start)));
  bool finished = false;
  std::optional<psi::Intersection> intersection;
  auto handle_list = [&](const v1::PsiList& l) -> absl::Status {
    psi::BlindedList in;
    in.origin = l.origin();
    in.step = l.step();
    in.signer = l.signer();
    ASSIGN_OR_RETURN(in.points, Decode(l.points()));
    in.signature.assign(l.signature().begin(), l.signature().end());
    ASSIGN_OR_RETURN(std::optional<psi::BlindedList> out, party->Receive(in));
    if (out.has_value()) return exchange.Send(ListMessage(*out));
    ASSIGN_OR_RETURN(psi::FinalTags tags, party->Final());
    v1::PsiSendRequest r;
    r.set_tags(Encode(tags.tags));
    finished = true;
    return exchange.Send(r);
  };
  for (const v1::PsiList& l : early) RETURN_IF_ERROR(handle_list(l));
  // 3. Until the intersection: more lists (the own one back among them).
  while (!intersection.has_value()) {
    ASSIGN_OR_RETURN(v1::PsiFetchResponse r, exchange.Fetch());
    for (const v1::PsiList& l : r.lists()) RETURN_IF_ERROR(handle_list(l));
    if (r.has_intersection()) {
      if (!finished)
        return absl::FailedPreconditionError("an intersection before this party's tags");
      ASSIGN_OR_RETURN(std::vector<psi::Point> tags, Decode(r.intersection()));
      intersection = psi::Intersection{std::move(tags)};
    }
  }
  // 4. Accept (sign), 5. check everyone signed the same intersection.
  ASSIGN_OR_RETURN(psi::Confirmation mine, party->Accept(*intersection));
  v1::PsiSendRequest confirm;
  confirm.set_confirmation(std::string(mine.signature.begin(), mine.signature.end()));
  RETURN_IF_ERROR(exchange.Send(confirm));
  std::vector<psi::Confirmation> all;
  while (all.empty()) {
    ASSIGN_OR_RETURN(v1::PsiFetchResponse r, exchange.Fetch());
    if (r.confirmations_size() > 0) {
      if (r.confirmations_size() != s) {
        return absl::InvalidArgumentError("the server sent confirmations for another ring");
      }
      for (int32_t k = 0; k < s; ++k) {
        const std::string& sig = r.confirmations(k);
        all.push_back({k, std::vector<uint8_t>(sig.begin(), sig.end())});
      }
    }
  }
  RETURN_IF_ERROR(party->Confirm(all));
  ASSIGN_OR_RETURN(std::vector<std::string> shared, party->SharedIds());
  spdlog::info("job '{}': users aligned with {} other parties: {} shared", o.job_id, s - 1,
               shared.size());
  return shared;
}

}  // namespace fedmf::party
