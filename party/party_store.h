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

  // Every job this party was admitted to, by id, with the SHA-256 of its spec:
  // a job id names one job for good (a local noise seed's stream is the
  // job's), so an id offered again with another spec is a second job the
  // party refuses. The digest a job was first admitted with, if any.
  absl::StatusOr<std::optional<std::string>> JobSpecDigest(const std::string& job_id) const;
  // Records (job_id, digest) unless the id is known; AlreadyExists if it is
  // known with another digest.
  absl::Status RecordJob(const std::string& job_id, const std::string& digest,
                         int64_t unix_seconds);

  // The private set intersections this party started (align_users jobs), one
  // row each, written before its first list leaves: the partners (the
  // roster without this party, PartySetKey), the sizes it saw and how it
  // ended. For the policy's daily limit and the party's own audit.
  struct AlignmentRecord {
    int64_t seq = 0;
    std::string job_id;
    int64_t started_unix = 0;
    std::string partners;       // sorted, comma-joined certificate names
    int64_t own_size = 0;       // this party's distinct user ids
    std::string partner_sizes;  // "name=size,..." as their lists showed
    int64_t shared = -1;        // the intersection's size; -1: not reached
    std::string outcome;        // "started" | "aligned" | "failed: <rule>"
  };
  absl::StatusOr<int64_t> BeginAlignment(const std::string& job_id, int64_t started_unix,
                                         const std::string& partners, int64_t own_size);
  absl::Status EndAlignment(int64_t seq, const std::string& partner_sizes, int64_t shared,
                            const std::string& outcome);
  // Alignments with exactly this partner set started at or after `since_unix`.
  absl::StatusOr<int64_t> AlignmentsSince(const std::string& partners, int64_t since_unix) const;
  absl::StatusOr<std::vector<AlignmentRecord>> Alignments() const;

 private:
  explicit PartyStore(std::unique_ptr<store::Database> db) : db_(std::move(db)) {}
  absl::Status InsertEntry(const dp::LedgerEntry& entry);

  std::unique_ptr<store::Database> db_;
};

}  // namespace fedmf::party

#endif  // FEDMF_PARTY_PARTY_STORE_H_
