// One party's side of a multi-party ECDH private set intersection over
// ristretto255, relayed by a server that never sees an id (the relay is
// common/psi/relay.h). Used to align VFL's shared users without revealing
// anyone's user list.
//
// s parties, ring indices 0..s-1, each with a secret key k_i. With H the
// hash to the group and K = k_0 * ... * k_{s-1}, an id x of any party ends as
// the tag H(x)^K, so equal ids give equal tags and nothing else does.
//
//   1. Start: party i blinds its ids with a one-time scalar r_i, shuffles
//      them, and sends the list [H(x)^{r_i}] (signed) to the relay.
//   2. Hop: every other party j, in ring order i+1, i+2, ..., applies k_j
//      (order kept) and passes the list on (signed).
//   3. Finish: the list comes back to i, which applies k_i / r_i and so is the
//      only one to see its own tags next to its ids; it sends the sorted tags.
//   4. The relay intersects the s tag sets and returns the common tags,
//      sorted: every party maps them to its own ids, in the same order.
//   5. Confirm: each party signs the intersection it got and checks the
//      others' signatures over the same bytes before using it.
//
// What each role learns (semi-honest parties; the relay may be malicious):
//  - A party: the shared ids (its own that are in every set), in the
//    canonical order, and the other sets' sizes (the list lengths it hops).
//    The lists it hops are blinded by the origin's r: random group elements
//    under DDH, unlinkable to ids, to tags, or to each other across parties.
//  - The relay: every set's size and the s sorted tag sets. For s = 2 that is
//    exactly |X_0 ∩ X_1|; for s >= 3 it also sees how many tags lie in each
//    region of the sets' Venn diagram (e.g. |X_0 ∩ X_1 \ X_2|), never an id:
//    without the keys a tag is a random element, and the relay cannot
//    evaluate H(x)^K for a guess x because a list it made up carries no
//    party's signature, and every party refuses an unsigned, replayed,
//    duplicated or misrouted list.
//  - A malicious party learns, for any list it brings (made-up ids
//    included), which of those ids every other party holds: the intersection
//    is the point. max_list_ratio bounds the list it may bring.
//  - The relay can still drop parties (the run fails) or hand out a wrong
//    intersection: a tag the party does not hold is refused, and different
//    intersections to different parties fail the confirmation.
#ifndef FEDMF_COMMON_PSI_PARTY_H_
#define FEDMF_COMMON_PSI_PARTY_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/crypto/ristretto255.h"
#include "common/psi/messages.h"
#include "common/psi/signing.h"
#include "common/random/csprng.h"

namespace fedmf::psi {

struct PartyOptions {
  std::string session;      // binds every signature to this run (the job id)
  int32_t index = 0;        // this party's ring index
  int32_t num_parties = 2;  // s >= 2
  // Lists longer than this are refused (a relay must not make a party do
  // unbounded work).
  int64_t max_list_size = 50'000'000;
  // Another party's list may hold at most this many times as many ids as this
  // party's own (> 0; 0: no bound). It is checked when the list arrives,
  // before this party's key touches it: a partner that brings a list of
  // made-up candidates learns which of them are this party's users only for
  // the ids it hops through this party, so the bound caps how many it can
  // probe per alignment (ResourceExhausted, naming the origin and the sizes).
  double max_list_ratio = 0;
  int32_t threads = 1;  // for the scalar multiplications (results do not depend on it)
};

class PsiParty {
 public:
  // `ids` are this party's own external ids (distinct, non-empty). The keys
  // and the shuffle come from `rng` (production: an OS-seeded stream). The
  // signer and verifier are not owned and must outlive the party.
  static absl::StatusOr<std::unique_ptr<PsiParty>> Create(std::vector<std::string> ids,
                                                          const PartyOptions& options,
                                                          random::Csprng& rng, const Signer* signer,
                                                          const Verifier* verifier);

  // Step 1 (once): this party's blinded, shuffled, signed list.
  absl::StatusOr<BlindedList> Start();
  // Step 2 (once per other party) or 3 (the own list back): the signed list
  // for the next hop, or std::nullopt when it was this party's own list
  // (then FinalTags() is ready).
  absl::StatusOr<std::optional<BlindedList>> Receive(const BlindedList& list);
  // Step 3's output: this party's sorted tags for the relay.
  absl::StatusOr<FinalTags> Final() const;
  // Step 4: accepts the relay's intersection (sorted, distinct, all held by
  // this party) and returns this party's confirmation signature.
  absl::StatusOr<Confirmation> Accept(const Intersection& intersection);
  // Step 5: every party's confirmation over the same intersection; then
  // SharedIds() is the result.
  absl::Status Confirm(const std::vector<Confirmation>& confirmations);

  // The shared ids in the canonical (tag) order, after Confirm.
  absl::StatusOr<std::vector<std::string>> SharedIds() const;
  // Each other party's set size, from the lists it hopped (after all hops).
  const std::map<int32_t, int64_t>& other_set_sizes() const { return other_sizes_; }

 private:
  enum class State { kCreated, kStarted, kFinished, kAccepted, kConfirmed };
  PsiParty(std::vector<std::string> ids, const PartyOptions& options, random::Csprng rng,
           crypto::RistrettoScalar key, crypto::RistrettoScalar blind, const Signer* signer,
           const Verifier* verifier);
  absl::StatusOr<BlindedList> Sign(BlindedList list) const;
  absl::Status CheckIncoming(const BlindedList& list) const;

  std::vector<std::string> ids_;
  PartyOptions options_;
  random::Csprng rng_;
  crypto::RistrettoScalar key_;    // k_i: kept for the whole run
  crypto::RistrettoScalar blind_;  // r_i: hides this party's list from the others
  const Signer* signer_;
  const Verifier* verifier_;

  State state_ = State::kCreated;
  std::vector<int32_t> order_;                // list position -> index into ids_
  std::map<Point, int32_t> tag_to_id_;        // after Finish
  std::map<int32_t, int64_t> other_sizes_;    // origin -> list length hopped
  std::optional<Intersection> intersection_;  // after Accept
};

}  // namespace fedmf::psi

#endif  // FEDMF_COMMON_PSI_PARTY_H_
