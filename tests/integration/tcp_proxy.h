// A test-only TCP proxy on loopback, to put real network faults between a
// daemon and the server it dials: connections reset mid-stream (RST to both
// sides, as after a NAT or middlebox drop), a server that is not there yet
// (every connection refused with an RST until Forward()) and one that accepts
// connections but never answers (Hold()), and a link frozen at a point the
// traffic itself fixes (PauseAfterDownstream()). The proxy is below
// TLS: the client's mTLS handshake is end to end with the server, so the
// server certificate is verified exactly as without it.
#ifndef FEDMF_TESTS_INTEGRATION_TCP_PROXY_H_
#define FEDMF_TESTS_INTEGRATION_TCP_PROXY_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace fedmf::it {

class TcpProxy {
 public:
  // Listens on an ephemeral 127.0.0.1 port. target_port 0: refuse every
  // connection until Forward().
  static absl::StatusOr<std::unique_ptr<TcpProxy>> Start(int target_port = 0);
  ~TcpProxy();  // stops accepting, resets what is left, joins every thread
  TcpProxy(const TcpProxy&) = delete;
  TcpProxy& operator=(const TcpProxy&) = delete;

  int port() const { return port_; }
  std::string address() const;  // 127.0.0.1:<port>

  // New connections are forwarded to 127.0.0.1:target_port from now on.
  void Forward(int target_port);
  // New connections are accepted and never answered (held until ResetAll or
  // the end): a peer whose TLS handshake stalls. Forward() ends it for new
  // connections only.
  void Hold();
  // Closes every live connection with SO_LINGER {1, 0}, so both the client
  // and the server get an RST; returns once they are closed, with how many.
  int ResetAll();

  // Freezes every connection once `bytes` more bytes have been relayed from
  // the target to the clients (counted from this call): no byte crosses in
  // either direction until Resume(), new connections included. A test holds
  // a job this way at a point of its progress that the traffic fixes (each
  // round moves the shared matrix down), not at one a status poll happens to
  // see, which on a fast machine may come after the job ended. ResetAll()
  // closes paused connections too.
  void PauseAfterDownstream(int64_t bytes);
  // Waits until the pause has hit; false if `timeout` passed first.
  bool WaitPaused(absl::Duration timeout);
  bool paused() const;
  // Ends a pause. A pause armed since (PauseAfterDownstream) stays armed.
  void Resume();
  // Waits until forwarded() >= n (a client dialed again); false on timeout.
  bool WaitForwarded(int64_t n, absl::Duration timeout);
  // Bytes relayed from the target to the clients.
  int64_t downstream_bytes() const { return downstream_; }

  // Connections accepted (whatever became of them), refused (no target yet,
  // or the target did not answer: closed with an RST), held, forwarded to
  // the target, and closed by ResetAll (held ones included).
  int64_t accepted() const { return accepted_; }
  int64_t refused() const { return refused_; }
  int64_t held() const { return held_; }
  int64_t forwarded() const { return forwarded_; }
  int64_t resets() const { return resets_; }

 private:
  struct Conn {
    int client = -1;
    int upstream = -1;
    int wake[2] = {-1, -1};  // a pipe: ResetAll / the destructor wake the pump
    bool reset = false;
    bool done = false;
    std::thread pump;
  };

  TcpProxy() = default;
  void AcceptLoop();
  void Pump(Conn* c);
  void Close(Conn* c, bool rst);    // with mu_ held
  void CountDownstream(int64_t n);  // takes mu_; hits a pending pause

  int listen_fd_ = -1;
  int stop_pipe_[2] = {-1, -1};
  int port_ = 0;
  std::atomic<int> target_port_{0};
  std::atomic<bool> hold_{false};
  std::atomic<int64_t> accepted_{0};
  std::atomic<int64_t> refused_{0};
  std::atomic<int64_t> held_{0};
  std::atomic<int64_t> forwarded_{0};
  std::atomic<int64_t> resets_{0};
  std::atomic<int64_t> downstream_{0};
  std::thread acceptor_;
  mutable std::mutex mu_;
  std::condition_variable closed_;
  int resets_pending_ = 0;  // marked by ResetAll, not yet closed
  // PauseAfterDownstream: the downstream_ count at which to pause (-1: none),
  // whether paused, and the signal for pumps / waiters (all under mu_).
  int64_t pause_at_ = -1;
  bool paused_ = false;
  std::condition_variable pause_changed_;
  std::list<Conn> conns_;  // stable addresses; pruned by the acceptor when done
  std::vector<int> held_fds_;
};

}  // namespace fedmf::it

#endif  // FEDMF_TESTS_INTEGRATION_TCP_PROXY_H_
