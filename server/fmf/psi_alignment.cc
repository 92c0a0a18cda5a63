#include "server/fmf/psi_alignment.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/base/peer_text.h"
#include "common/base/status_macros.h"

namespace fedmf::server {
namespace {

absl::StatusOr<std::vector<psi::Point>> DecodePoints(const std::string& bytes,
                                                     const std::string& what) {
  if (bytes.size() % sizeof(psi::Point) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": ", bytes.size(), " bytes is not a whole number of 32-byte points"));
  }
  std::vector<psi::Point> out(bytes.size() / sizeof(psi::Point));
  for (size_t i = 0; i < out.size(); ++i) {
    std::copy_n(bytes.data() + i * sizeof(psi::Point), sizeof(psi::Point), out[i].begin());
  }
  return out;
}

std::string EncodePoints(const std::vector<psi::Point>& points) {
  std::string out;
  out.reserve(points.size() * sizeof(psi::Point));
  for (const psi::Point& p : points) out.append(reinterpret_cast<const char*>(p.data()), p.size());
  return out;
}

}  // namespace

absl::StatusOr<PsiAlignment> PsiAlignment::Create(std::vector<std::string> ring,
                                                  std::string session, int64_t mailbox_bytes,
                                                  int64_t fetch_bytes) {
  ASSIGN_OR_RETURN(psi::PsiRelay relay, psi::PsiRelay::Create(static_cast<int32_t>(ring.size()),
                                                              kMaxPsiSetSize, mailbox_bytes));
  return PsiAlignment(std::move(ring), std::move(session), std::move(relay), fetch_bytes);
}

PsiAlignment::PsiAlignment(std::vector<std::string> ring, std::string session, psi::PsiRelay relay,
                           int64_t fetch_bytes)
    : ring_(std::move(ring)),
      session_(std::move(session)),
      relay_(std::move(relay)),
      fetch_bytes_(fetch_bytes),
      certificates_(ring_.size()),
      sent_certificates_(ring_.size(), false),
      sent_intersection_(ring_.size(), false),
      sent_confirmations_(ring_.size(), false) {}

absl::StatusOr<int32_t> PsiAlignment::IndexOf(const std::string& party) const {
  auto it = std::find(ring_.begin(), ring_.end(), party);
  if (it == ring_.end()) {
    return absl::NotFoundError(absl::StrCat("party '", party, "' is not in this alignment"));
  }
  return static_cast<int32_t>(it - ring_.begin());
}

absl::Status PsiAlignment::Send(int32_t index, const v1::PsiSendRequest& request) {
  if (request.session() != session_) {
    return absl::FailedPreconditionError(absl::StrCat("PSI session '",
                                                      base::EscapePeerText(request.session(), 128),
                                                      "' is not the job's current one"));
  }
  switch (request.message_case()) {
    case v1::PsiSendRequest::kCertificatePem:
      if (request.certificate_pem().size() > kMaxPsiCertificateBytes) {
        return absl::InvalidArgumentError(
            absl::StrCat("PSI certificate over ", kMaxPsiCertificateBytes, " bytes"));
      }
      certificates_[index] = request.certificate_pem();
      return absl::OkStatus();
    case v1::PsiSendRequest::kList: {
      const v1::PsiList& l = request.list();
      psi::BlindedList list;
      list.origin = l.origin();
      list.step = l.step();
      list.signer = l.signer();
      ASSIGN_OR_RETURN(list.points, DecodePoints(l.points(), "PSI list"));
      list.signature.assign(l.signature().begin(), l.signature().end());
      return relay_.SubmitList(index, std::move(list));
    }
    case v1::PsiSendRequest::kTags: {
      psi::FinalTags tags;
      tags.party = index;
      ASSIGN_OR_RETURN(tags.tags, DecodePoints(request.tags(), "PSI tags"));
      return relay_.SubmitTags(index, std::move(tags));
    }
    case v1::PsiSendRequest::kConfirmation: {
      psi::Confirmation c;
      c.party = index;
      c.signature.assign(request.confirmation().begin(), request.confirmation().end());
      return relay_.SubmitConfirmation(index, std::move(c));
    }
    default: return absl::InvalidArgumentError("PSI message without content");
  }
}

v1::PsiFetchResponse PsiAlignment::Fetch(int32_t index) {
  v1::PsiFetchResponse out;
  int64_t budget = fetch_bytes_;
  const bool all_certificates = std::all_of(certificates_.begin(), certificates_.end(),
                                            [](const auto& c) { return c.has_value(); });
  if (all_certificates && !sent_certificates_[index]) {
    for (const auto& c : certificates_) {
      out.add_certificate_pem(*c);
      budget -= static_cast<int64_t>(c->size());
    }
    sent_certificates_[index] = true;
  }
  // Lists by size (one alone if larger than the answer may be): queued lists
  // are never all packed into one answer, which gRPC could refuse to send
  // after they were dequeued (two lists of 131k users exceed 8 MiB).
  if (budget > 0 || out.certificate_pem_size() == 0) {
    for (psi::BlindedList& l : relay_.TakeLists(index, std::max<int64_t>(budget, 1))) {
      v1::PsiList* w = out.add_lists();
      w->set_origin(l.origin);
      w->set_step(l.step);
      w->set_signer(l.signer);
      w->set_points(EncodePoints(l.points));
      w->set_signature(std::string(l.signature.begin(), l.signature.end()));
      budget -= static_cast<int64_t>(w->points().size() + w->signature().size());
    }
  }
  if (relay_.intersection().has_value() && !sent_intersection_[index]) {
    const int64_t bytes =
        static_cast<int64_t>(relay_.intersection()->tags.size() * sizeof(psi::Point));
    if (bytes <= budget || PsiAlignment::Empty(out)) {
      out.set_has_intersection(true);
      out.set_intersection(EncodePoints(relay_.intersection()->tags));
      sent_intersection_[index] = true;
      budget -= bytes;
    }
  }
  if (auto all = relay_.confirmations(); all.has_value() && !sent_confirmations_[index]) {
    for (const psi::Confirmation& c : *all) {
      out.add_confirmations(std::string(c.signature.begin(), c.signature.end()));
    }
    sent_confirmations_[index] = true;
  }
  out.set_more(relay_.HasLists(index) ||
               (relay_.intersection().has_value() && !sent_intersection_[index]));
  return out;
}

std::optional<int64_t> PsiAlignment::intersection_size() const {
  if (!relay_.intersection().has_value()) return std::nullopt;
  return static_cast<int64_t>(relay_.intersection()->tags.size());
}

std::vector<int64_t> PsiAlignment::set_sizes() const {
  std::vector<int64_t> out;
  for (const auto& [party, size] : relay_.set_sizes()) out.push_back(size);
  return out;
}

}  // namespace fedmf::server
