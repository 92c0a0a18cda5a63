#include "common/psi/party.h"

#include <algorithm>
#include <numeric>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"
#include "common/psi/internal/multiply.h"

namespace fedmf::psi {
namespace {

// Hash domain: a new protocol version must change it.
constexpr std::string_view kHashDomain = "fedmf-psi-v1 id";

bool SortedDistinct(const std::vector<Point>& points) {
  return std::adjacent_find(points.begin(), points.end(), [](const Point& a, const Point& b) {
           return !(a < b);
         }) == points.end();
}

}  // namespace

PsiParty::PsiParty(std::vector<std::string> ids, const PartyOptions& options, random::Csprng rng,
                   crypto::RistrettoScalar key, crypto::RistrettoScalar blind, const Signer* signer,
                   const Verifier* verifier)
    : ids_(std::move(ids)),
      options_(options),
      rng_(std::move(rng)),
      key_(std::move(key)),
      blind_(std::move(blind)),
      signer_(signer),
      verifier_(verifier) {}

absl::StatusOr<std::unique_ptr<PsiParty>> PsiParty::Create(std::vector<std::string> ids,
                                                           const PartyOptions& options,
                                                           random::Csprng& rng,
                                                           const Signer* signer,
                                                           const Verifier* verifier) {
  if (options.num_parties < 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("a PSI needs at least 2 parties, got ", options.num_parties));
  }
  if (options.index < 0 || options.index >= options.num_parties) {
    return absl::InvalidArgumentError(
        absl::StrCat("PSI party index ", options.index, " outside [0, ", options.num_parties, ")"));
  }
  if (options.session.empty()) return absl::InvalidArgumentError("PSI session id is empty");
  if (signer == nullptr || verifier == nullptr) {
    return absl::InvalidArgumentError("PSI party needs a signer and a verifier");
  }
  if (ids.empty()) return absl::InvalidArgumentError("PSI party has no ids");
  if (static_cast<int64_t>(ids.size()) > options.max_list_size) {
    return absl::InvalidArgumentError(
        absl::StrCat(ids.size(), " ids exceed max_list_size ", options.max_list_size));
  }
  std::vector<std::string> sorted = ids;
  std::sort(sorted.begin(), sorted.end());
  if (auto dup = std::adjacent_find(sorted.begin(), sorted.end()); dup != sorted.end()) {
    return absl::InvalidArgumentError(absl::StrCat("PSI id '", *dup, "' appears twice"));
  }
  random::Csprng own = rng.Fork(absl::StrCat("psi/", options.session, "/", options.index));
  ASSIGN_OR_RETURN(crypto::RistrettoScalar key, crypto::RistrettoScalar::Random(own));
  ASSIGN_OR_RETURN(crypto::RistrettoScalar blind, crypto::RistrettoScalar::Random(own));
  return std::unique_ptr<PsiParty>(new PsiParty(
      std::move(ids), options, std::move(own), std::move(key), std::move(blind), signer, verifier));
}

absl::StatusOr<BlindedList> PsiParty::Sign(BlindedList list) const {
  ASSIGN_OR_RETURN(list.signature, signer_->Sign(SignedBytes(options_.session, list)));
  return list;
}

absl::StatusOr<BlindedList> PsiParty::Start() {
  if (state_ != State::kCreated) return absl::FailedPreconditionError("PSI already started");
  // The shuffle hides the order of the own ids (e.g. sorted) from everyone who
  // sees the list; only this party keeps the permutation.
  order_.resize(ids_.size());
  std::iota(order_.begin(), order_.end(), 0);
  std::shuffle(order_.begin(), order_.end(), rng_);
  std::vector<std::string> shuffled(ids_.size());
  for (size_t p = 0; p < order_.size(); ++p) shuffled[p] = ids_[order_[p]];
  BlindedList list;
  list.origin = options_.index;
  list.step = 0;
  list.signer = options_.index;
  ASSIGN_OR_RETURN(list.points,
                   internal::HashAndMultiply(blind_, kHashDomain, shuffled, options_.threads));
  state_ = State::kStarted;
  return Sign(std::move(list));
}

absl::Status PsiParty::CheckIncoming(const BlindedList& list) const {
  const int32_t s = options_.num_parties;
  if (list.origin < 0 || list.origin >= s || list.step < 0 || list.step > s - 1) {
    return absl::InvalidArgumentError(absl::StrCat("PSI list with origin ", list.origin,
                                                   " and step ", list.step,
                                                   " is outside the ring of ", s, " parties"));
  }
  if (NextHop(list, s) != options_.index) {
    return absl::InvalidArgumentError(absl::StrCat("PSI list (origin ", list.origin, ", step ",
                                                   list.step, ") is not routed to party ",
                                                   options_.index));
  }
  // The one party that may have produced it: the origin at step 0, else the
  // step-th party after it.
  const int32_t expected_signer = (list.origin + list.step) % s;
  if (list.signer != expected_signer) {
    return absl::InvalidArgumentError(absl::StrCat("PSI list (origin ", list.origin, ", step ",
                                                   list.step, ") names signer ", list.signer,
                                                   ", expected ", expected_signer));
  }
  if (static_cast<int64_t>(list.points.size()) > options_.max_list_size || list.points.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "PSI list of ", list.points.size(), " elements (allowed 1..", options_.max_list_size, ")"));
  }
  if (absl::Status v =
          verifier_->Verify(list.signer, SignedBytes(options_.session, list), list.signature);
      !v.ok()) {
    return absl::UnauthenticatedError(absl::StrCat("PSI list (origin ", list.origin, ", step ",
                                                   list.step, ") is not signed by party ",
                                                   list.signer, ": refused (", v.message(), ")"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<BlindedList>> PsiParty::Receive(const BlindedList& list) {
  if (state_ == State::kCreated) return absl::FailedPreconditionError("PSI not started");
  RETURN_IF_ERROR(CheckIncoming(list));
  if (list.origin == options_.index) {
    // The own list, every other key applied: remove the blind, apply k_i.
    if (state_ != State::kStarted) {
      return absl::FailedPreconditionError("PSI: the own list came back twice");
    }
    if (list.points.size() != ids_.size()) {
      return absl::InvalidArgumentError(absl::StrCat("PSI: the own list came back with ",
                                                     list.points.size(), " elements, sent ",
                                                     ids_.size()));
    }
    ASSIGN_OR_RETURN(crypto::RistrettoScalar unblind, blind_.Inverse());
    ASSIGN_OR_RETURN(std::vector<Point> tags,
                     internal::MultiplyAll(key_.Times(unblind), list.points, options_.threads));
    for (size_t p = 0; p < tags.size(); ++p) {
      if (!tag_to_id_.emplace(tags[p], order_[p]).second) {
        return absl::InvalidArgumentError("PSI: two own ids ended with the same tag");
      }
    }
    state_ = State::kFinished;
    return std::nullopt;
  }
  // Each other party's list is hopped exactly once: a second copy would let
  // the relay probe this party's key with lists of its own choosing.
  if (other_sizes_.contains(list.origin)) {
    return absl::InvalidArgumentError(
        absl::StrCat("PSI: a second list from origin ", list.origin, ": refused"));
  }
  other_sizes_[list.origin] = static_cast<int64_t>(list.points.size());
  if (options_.max_list_ratio > 0 &&
      static_cast<double>(list.points.size()) >
          options_.max_list_ratio * static_cast<double>(ids_.size())) {
    // Before the key is applied: the oversized list learns nothing here.
    return absl::ResourceExhaustedError(absl::StrCat(
        "PSI: the list of party ", list.origin, " holds ", list.points.size(), " ids, more than ",
        options_.max_list_ratio, " x this party's ", ids_.size(), " (max_list_ratio): refused"));
  }
  BlindedList next;
  next.origin = list.origin;
  next.step = list.step + 1;
  next.signer = options_.index;
  ASSIGN_OR_RETURN(next.points, internal::MultiplyAll(key_, list.points, options_.threads));
  ASSIGN_OR_RETURN(BlindedList signed_next, Sign(std::move(next)));
  return std::optional<BlindedList>(std::move(signed_next));
}

absl::StatusOr<FinalTags> PsiParty::Final() const {
  if (state_ == State::kCreated || state_ == State::kStarted) {
    return absl::FailedPreconditionError("PSI: the own list has not come back yet");
  }
  FinalTags out;
  out.party = options_.index;
  out.tags.reserve(tag_to_id_.size());
  for (const auto& [tag, id] : tag_to_id_) out.tags.push_back(tag);  // map order = sorted
  return out;
}

absl::StatusOr<Confirmation> PsiParty::Accept(const Intersection& intersection) {
  if (state_ != State::kFinished) {
    return absl::FailedPreconditionError("PSI: an intersection before this party's tags were sent");
  }
  if (!SortedDistinct(intersection.tags)) {
    return absl::InvalidArgumentError("PSI intersection is not sorted and distinct: refused");
  }
  for (const Point& t : intersection.tags) {
    if (!tag_to_id_.contains(t)) {
      return absl::InvalidArgumentError(
          "PSI intersection holds a tag this party does not have: refused");
    }
  }
  ASSIGN_OR_RETURN(std::vector<uint8_t> sig,
                   signer_->Sign(SignedBytes(options_.session, intersection)));
  intersection_ = intersection;
  state_ = State::kAccepted;
  return Confirmation{options_.index, std::move(sig)};
}

absl::Status PsiParty::Confirm(const std::vector<Confirmation>& confirmations) {
  if (state_ != State::kAccepted) {
    return absl::FailedPreconditionError("PSI: confirmations before an accepted intersection");
  }
  const std::vector<uint8_t> bytes = SignedBytes(options_.session, *intersection_);
  std::set<int32_t> seen;
  for (const Confirmation& c : confirmations) {
    if (absl::Status v = verifier_->Verify(c.party, bytes, c.signature); !v.ok()) {
      return absl::UnauthenticatedError(
          absl::StrCat("PSI: party ", c.party, " did not confirm the intersection this party got (",
                       v.message(), "): the relay gave different parties different intersections"));
    }
    seen.insert(c.party);
  }
  for (int32_t p = 0; p < options_.num_parties; ++p) {
    if (!seen.contains(p)) {
      return absl::FailedPreconditionError(absl::StrCat("PSI: no confirmation from party ", p));
    }
  }
  state_ = State::kConfirmed;
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::string>> PsiParty::SharedIds() const {
  if (state_ != State::kConfirmed) {
    return absl::FailedPreconditionError("PSI: the intersection is not confirmed yet");
  }
  std::vector<std::string> out;
  out.reserve(intersection_->tags.size());
  for (const Point& t : intersection_->tags) out.push_back(ids_[tag_to_id_.at(t)]);
  return out;
}

}  // namespace fedmf::psi
