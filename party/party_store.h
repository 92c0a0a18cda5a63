// A party's durable state (SQLite, WAL): its privacy ledger and the exact
// bytes of each released update. Charge and release are one transaction, so
// after a crash the party either never charged the round (nothing was
// released, recomputing is safe) or resends the identical upload (never a
// second noisy release of the same round, never a second charge).
#ifndef FEDMF_PARTY_PARTY_STORE_H_
#define FEDMF_PARTY_PARTY_STORE_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/dp/ledger.h"
#include "common/mf/embeddings.h"
#include "common/store/sqlite.h"

namespace fedmf::party {

class PartyStore {
 public:
  static absl::StatusOr<std::unique_ptr<PartyStore>> Open(const std::string& path);

  absl::StatusOr<std::vector<dp::LedgerEntry>> LoadLedger() const;
  // The ledger entry and the update it paid for, atomically.
  absl::Status CommitRelease(const dp::LedgerEntry& entry, const mf::Matrix& update);
  // A charge with nothing to resend (VFL Stage 3 fine-tuning).
  absl::Status CommitCharge(const dp::LedgerEntry& entry);
  // The update released for (job, round), if any.
  absl::StatusOr<std::optional<mf::Matrix>> Released(const std::string& job_id,
                                                     int32_t round) const;
  // An align_users job's shared users (the party's own ids in the
  // intersection, in the canonical order), kept so a party restarted during
  // the job rejoins it without a new private set intersection. Replaces an
  // earlier alignment of the same job.
  absl::Status SaveAlignment(const std::string& job_id, const std::vector<std::string>& ids);
  absl::StatusOr<std::optional<std::vector<std::string>>> Alignment(
      const std::string& job_id) const;

 private:
  explicit PartyStore(std::unique_ptr<store::Database> db) : db_(std::move(db)) {}
  absl::Status InsertEntry(const dp::LedgerEntry& entry);

  std::unique_ptr<store::Database> db_;
};

}  // namespace fedmf::party

#endif  // FEDMF_PARTY_PARTY_STORE_H_
