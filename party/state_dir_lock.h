// One fedmf-party process per state directory: two processes on the same
// ledger would each charge their own copy of the budget (and race on the
// SQLite file). The lock is an flock(2) on STATE_DIR/party.lock, held for the
// life of the process and released by the kernel when it exits, however it
// exits, so a crash never leaves a stale lock.
#ifndef FEDMF_PARTY_STATE_DIR_LOCK_H_
#define FEDMF_PARTY_STATE_DIR_LOCK_H_

#include <string>

#include "absl/status/statusor.h"

namespace fedmf::party {

class StateDirLock {
 public:
  // FailedPrecondition naming the directory and the holder's pid if another
  // process holds it.
  static absl::StatusOr<StateDirLock> Acquire(const std::string& state_dir);

  StateDirLock(StateDirLock&& other) noexcept;
  StateDirLock& operator=(StateDirLock&& other) noexcept;
  StateDirLock(const StateDirLock&) = delete;
  StateDirLock& operator=(const StateDirLock&) = delete;
  ~StateDirLock();  // releases the lock

 private:
  explicit StateDirLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace fedmf::party

#endif  // FEDMF_PARTY_STATE_DIR_LOCK_H_
