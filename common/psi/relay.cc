#include "common/psi/relay.h"

#include <algorithm>
#include <iterator>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"

namespace fedmf::psi {

absl::StatusOr<PsiRelay> PsiRelay::Create(int32_t num_parties, int64_t max_list_size,
                                          int64_t max_queued_bytes) {
  if (num_parties < 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("a PSI needs at least 2 parties, got ", num_parties));
  }
  if (max_list_size < 1) return absl::InvalidArgumentError("PSI max_list_size must be >= 1");
  if (max_queued_bytes < 1) return absl::InvalidArgumentError("PSI max_queued_bytes must be >= 1");
  return PsiRelay(num_parties, max_list_size, max_queued_bytes);
}

absl::Status PsiRelay::CheckParty(int32_t from) const {
  if (from < 0 || from >= num_parties_) {
    return absl::InvalidArgumentError(
        absl::StrCat("PSI party ", from, " outside [0, ", num_parties_, ")"));
  }
  return absl::OkStatus();
}

absl::Status PsiRelay::SubmitList(int32_t from, BlindedList list) {
  RETURN_IF_ERROR(CheckParty(from));
  // A party may only send what it signed itself, at a place in the ring it
  // can be at; the parties check the signatures, the relay the routing.
  if (list.signer != from || list.origin < 0 || list.origin >= num_parties_ || list.step < 0 ||
      list.step > num_parties_ - 1 || (list.origin + list.step) % num_parties_ != from) {
    return absl::InvalidArgumentError(absl::StrCat("PSI list from party ", from, " (origin ",
                                                   list.origin, ", step ", list.step, ", signer ",
                                                   list.signer, ") is not one it can send"));
  }
  if (list.points.empty() || static_cast<int64_t>(list.points.size()) > max_list_size_) {
    return absl::InvalidArgumentError(absl::StrCat("PSI list of ", list.points.size(),
                                                   " elements (allowed 1..", max_list_size_, ")"));
  }
  if (auto it = sent_.find({from, list.origin}); it != sent_.end()) {
    if (it->second == list.signature) return absl::OkStatus();  // a resend: already queued
    return absl::FailedPreconditionError(absl::StrCat("PSI list from party ", from, " for origin ",
                                                      list.origin, " was already sent"));
  }
  const int64_t bytes = static_cast<int64_t>(list.points.size() * sizeof(Point));
  if (queued_bytes_ + bytes > max_queued_bytes_) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "PSI relay holds ", queued_bytes_, " bytes of lists not yet fetched; this one (", bytes,
        " bytes) would exceed ", max_queued_bytes_, ": retry once the next party has fetched"));
  }
  sent_.emplace(std::make_pair(from, list.origin), list.signature);
  queued_bytes_ += bytes;
  mailbox_[NextHop(list, num_parties_)].push_back(std::move(list));
  return absl::OkStatus();
}

std::vector<BlindedList> PsiRelay::TakeLists(int32_t party) { return TakeLists(party, INT64_MAX); }

std::vector<BlindedList> PsiRelay::TakeLists(int32_t party, int64_t max_bytes) {
  std::vector<BlindedList> out;
  auto it = mailbox_.find(party);
  if (it == mailbox_.end()) return out;
  int64_t taken = 0;
  std::deque<BlindedList>& queue = it->second;
  while (!queue.empty()) {
    const int64_t bytes = static_cast<int64_t>(queue.front().points.size() * sizeof(Point));
    if (!out.empty() && taken + bytes > max_bytes) break;
    taken += bytes;
    queued_bytes_ -= bytes;
    out.push_back(std::move(queue.front()));
    queue.pop_front();
  }
  if (queue.empty()) mailbox_.erase(it);
  return out;
}

bool PsiRelay::HasLists(int32_t party) const {
  auto it = mailbox_.find(party);
  return it != mailbox_.end() && !it->second.empty();
}

absl::Status PsiRelay::SubmitTags(int32_t from, FinalTags tags) {
  RETURN_IF_ERROR(CheckParty(from));
  if (tags.party != from) {
    return absl::InvalidArgumentError(
        absl::StrCat("PSI tags from party ", from, " claim party ", tags.party));
  }
  if (tags_.contains(from)) {
    return absl::FailedPreconditionError(absl::StrCat("PSI tags from party ", from, " twice"));
  }
  if (static_cast<int64_t>(tags.tags.size()) > max_list_size_ ||
      !std::is_sorted(tags.tags.begin(), tags.tags.end())) {
    return absl::InvalidArgumentError(
        absl::StrCat("PSI tags from party ", from, " are not a sorted set within the size bound"));
  }
  tags_.emplace(from, std::move(tags));
  if (static_cast<int32_t>(tags_.size()) == num_parties_) {
    std::vector<Point> common = tags_.begin()->second.tags;
    for (const auto& [party, set] : tags_) {
      std::vector<Point> next;
      std::set_intersection(common.begin(), common.end(), set.tags.begin(), set.tags.end(),
                            std::back_inserter(next));
      common = std::move(next);
    }
    common.erase(std::unique(common.begin(), common.end()), common.end());
    intersection_ = Intersection{std::move(common)};
  }
  return absl::OkStatus();
}

absl::Status PsiRelay::SubmitConfirmation(int32_t from, Confirmation confirmation) {
  RETURN_IF_ERROR(CheckParty(from));
  if (!intersection_.has_value()) {
    return absl::FailedPreconditionError("PSI confirmation before the intersection");
  }
  if (confirmation.party != from) {
    return absl::InvalidArgumentError(
        absl::StrCat("PSI confirmation from party ", from, " claims party ", confirmation.party));
  }
  confirmations_[from] = std::move(confirmation);
  return absl::OkStatus();
}

std::optional<std::vector<Confirmation>> PsiRelay::confirmations() const {
  if (static_cast<int32_t>(confirmations_.size()) != num_parties_) return std::nullopt;
  std::vector<Confirmation> out;
  for (const auto& [party, c] : confirmations_) out.push_back(c);
  return out;
}

std::map<int32_t, int64_t> PsiRelay::set_sizes() const {
  std::map<int32_t, int64_t> out;
  for (const auto& [party, set] : tags_) out[party] = static_cast<int64_t>(set.tags.size());
  return out;
}

}  // namespace fedmf::psi
