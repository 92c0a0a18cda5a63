// The relay's side of the multi-party PSI (common/psi/party.h): fedmf-server
// routes the blinded lists around the ring, intersects the parties' tag sets
// and hands out the confirmations. It holds no key and sees no id; what it
// does learn (set sizes, the tag sets' overlaps) is listed in party.h.
//
// Transport-free: the daemon feeds it what parties send and asks what each
// party should get next.
#ifndef FEDMF_COMMON_PSI_RELAY_H_
#define FEDMF_COMMON_PSI_RELAY_H_

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/psi/messages.h"

namespace fedmf::psi {

class PsiRelay {
 public:
  // num_parties >= 2; lists and tag sets above max_list_size are refused, and
  // a list that would make the queued lists' points exceed max_queued_bytes
  // (32 bytes a point) is refused with RESOURCE_EXHAUSTED.
  static absl::StatusOr<PsiRelay> Create(int32_t num_parties, int64_t max_list_size,
                                         int64_t max_queued_bytes = INT64_MAX);

  // A list sent by party `from` (its Start or a hop). Queued for its next hop.
  // Each party sends exactly one list per origin in a run (its own, then one
  // hop of every other party's): a second one for the same origin is
  // refused (FailedPrecondition), so one sender can queue at most
  // num_parties lists. The same list again (same signature: a resend after a
  // lost answer) is answered OK and not queued twice.
  absl::Status SubmitList(int32_t from, BlindedList list);
  // The lists waiting for `party`, oldest first; taking them removes them.
  std::vector<BlindedList> TakeLists(int32_t party);
  // As many of them, oldest first, as fit in `max_bytes` of points (at least
  // one, whatever its size); the rest stay queued.
  std::vector<BlindedList> TakeLists(int32_t party, int64_t max_bytes);
  bool HasLists(int32_t party) const;
  int64_t queued_bytes() const { return queued_bytes_; }

  // A party's sorted final tags. Once all s are in, the intersection exists.
  absl::Status SubmitTags(int32_t from, FinalTags tags);
  std::optional<Intersection> intersection() const { return intersection_; }

  // A party's confirmation; once all s are in, confirmations() has them.
  absl::Status SubmitConfirmation(int32_t from, Confirmation confirmation);
  std::optional<std::vector<Confirmation>> confirmations() const;

  // The sizes the relay learns, for logs and tests: each set's size (from
  // the tag sets) and the intersection's.
  std::map<int32_t, int64_t> set_sizes() const;

 private:
  PsiRelay(int32_t num_parties, int64_t max_list_size, int64_t max_queued_bytes)
      : num_parties_(num_parties),
        max_list_size_(max_list_size),
        max_queued_bytes_(max_queued_bytes) {}
  absl::Status CheckParty(int32_t from) const;

  int32_t num_parties_;
  int64_t max_list_size_;
  int64_t max_queued_bytes_;
  int64_t queued_bytes_ = 0;
  std::map<int32_t, std::deque<BlindedList>> mailbox_;
  // (sender, origin) -> the signature of the list taken
  std::map<std::pair<int32_t, int32_t>, std::vector<uint8_t>> sent_;
  std::map<int32_t, FinalTags> tags_;
  std::optional<Intersection> intersection_;
  std::map<int32_t, Confirmation> confirmations_;
};

}  // namespace fedmf::psi

#endif  // FEDMF_COMMON_PSI_RELAY_H_
