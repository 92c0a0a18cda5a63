// Child processes for the local demo and the integration tests: spawn with a
// log file, signal, reap. POSIX only.
#ifndef FEDMF_TOOLS_CLUSTER_PROCESS_H_
#define FEDMF_TOOLS_CLUSTER_PROCESS_H_

#include <sys/types.h>
#include <sys/wait.h>

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace fedmf::cluster {

class ChildProcess {
 public:
  // Starts `argv[0]` with stdout+stderr appended to `log_path`. The child
  // gets SIGTERM when the thread that spawned it ends (PR_SET_PDEATHSIG), so
  // spawn from a thread that lives as long as the child should: a killed
  // demo leaves no daemons behind.
  static absl::StatusOr<ChildProcess> Spawn(const std::vector<std::string>& argv,
                                            const std::string& log_path);
  ChildProcess(ChildProcess&& o) noexcept;
  ChildProcess& operator=(ChildProcess&& o) noexcept;
  ChildProcess(const ChildProcess&) = delete;
  ~ChildProcess();  // SIGKILL + reap if still running

  pid_t pid() const { return pid_; }
  bool running();
  // After it ended: its exit code, or -1 if a signal ended it.
  int exit_code() const { return WIFEXITED(status_) ? WEXITSTATUS(status_) : -1; }
  // SIGTERM, then SIGKILL after `grace`; reaps. Returns the exit status.
  int Stop(absl::Duration grace = absl::Seconds(5));
  // Stop in two halves, so that several children stop at once (a federation
  // of 11 processes stopped one by one took 5 s): SIGTERM now, then wait
  // until `deadline` and SIGKILL if it is still running. Returns its status.
  void RequestStop();
  int WaitStopped(absl::Time deadline);
  // SIGKILL now (a crash, for fault tests); reaps.
  void Kill();
  const std::string& log_path() const { return log_path_; }

 private:
  ChildProcess(pid_t pid, std::string log) : pid_(pid), log_path_(std::move(log)) {}
  pid_t pid_ = -1;
  std::string log_path_;
  int status_ = 0;
};

// Waits until `path` exists and holds a positive integer (a port written by
// a daemon after it bound its socket), or the timeout passes.
absl::StatusOr<int> WaitForPortFile(const std::string& path, absl::Duration timeout,
                                    ChildProcess* owner = nullptr);

// The directory of the running executable (daemons are installed beside it).
std::string SelfDirectory();

}  // namespace fedmf::cluster

#endif  // FEDMF_TOOLS_CLUSTER_PROCESS_H_
