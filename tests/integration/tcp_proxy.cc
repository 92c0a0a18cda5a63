#include "tests/integration/tcp_proxy.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace fedmf::it {
namespace {

sockaddr_in Loopback(int port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

// SO_LINGER {1, 0}: close() sends an RST instead of a FIN.
void CloseWithRst(int fd) {
  if (fd < 0) return;
  linger l{1, 0};
  setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
  close(fd);
}

void CloseFd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

// Writes all of `data` to `fd`, unless `wake` becomes readable first (a reset
// or shutdown is asked for: the pump must not stay blocked on a full socket).
bool WriteAll(int fd, const char* data, size_t n, int wake) {
  while (n > 0) {
    pollfd p[2] = {{fd, POLLOUT, 0}, {wake, POLLIN, 0}};
    if (poll(p, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (p[1].revents != 0) return false;
    const ssize_t w = send(fd, data, n, MSG_NOSIGNAL);
    if (w < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return false;
    }
    data += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

}  // namespace

absl::StatusOr<std::unique_ptr<TcpProxy>> TcpProxy::Start(int target_port) {
  std::unique_ptr<TcpProxy> p(new TcpProxy());
  p->target_port_ = target_port;
  p->listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (p->listen_fd_ < 0) return absl::InternalError(absl::StrCat("socket: ", strerror(errno)));
  const int one = 1;
  setsockopt(p->listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in a = Loopback(0);
  if (bind(p->listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 ||
      listen(p->listen_fd_, 64) != 0) {
    return absl::InternalError(absl::StrCat("bind/listen: ", strerror(errno)));
  }
  socklen_t len = sizeof(a);
  if (getsockname(p->listen_fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    return absl::InternalError(absl::StrCat("getsockname: ", strerror(errno)));
  }
  p->port_ = ntohs(a.sin_port);
  if (pipe2(p->stop_pipe_, O_CLOEXEC) != 0) {
    return absl::InternalError(absl::StrCat("pipe: ", strerror(errno)));
  }
  p->acceptor_ = std::thread([raw = p.get()] { raw->AcceptLoop(); });
  return p;
}

TcpProxy::~TcpProxy() {
  if (acceptor_.joinable()) {
    const char b = 0;
    (void)!write(stop_pipe_[1], &b, 1);
    acceptor_.join();
  }
  ResetAll();
  for (Conn& c : conns_) {
    if (c.pump.joinable()) c.pump.join();
  }
  CloseFd(listen_fd_);
  CloseFd(stop_pipe_[0]);
  CloseFd(stop_pipe_[1]);
}

std::string TcpProxy::address() const { return absl::StrCat("127.0.0.1:", port_); }

void TcpProxy::Forward(int target_port) {
  hold_ = false;
  target_port_ = target_port;
}

void TcpProxy::Hold() {
  target_port_ = 0;
  hold_ = true;
}

int TcpProxy::ResetAll() {
  std::unique_lock lock(mu_);
  int n = 0;
  for (int fd : held_fds_) {
    CloseWithRst(fd);
    ++resets_;
    ++n;
  }
  held_fds_.clear();
  for (Conn& c : conns_) {
    if (c.done || c.reset) continue;
    c.reset = true;
    pause_changed_.notify_all();  // a paused pump must see it too
    const char b = 0;
    (void)!write(c.wake[1], &b, 1);
    ++n;
    ++resets_pending_;
  }
  // Only for those: clients may dial again (and be accepted) meanwhile.
  closed_.wait(lock, [&] { return resets_pending_ == 0; });
  return n;
}

void TcpProxy::PauseAfterDownstream(int64_t bytes) {
  std::lock_guard lock(mu_);
  pause_at_ = downstream_ + bytes;
}

bool TcpProxy::WaitPaused(absl::Duration timeout) {
  std::unique_lock lock(mu_);
  return pause_changed_.wait_for(lock, absl::ToChronoNanoseconds(timeout), [&] { return paused_; });
}

bool TcpProxy::paused() const {
  std::lock_guard lock(mu_);
  return paused_;
}

void TcpProxy::Resume() {
  std::lock_guard lock(mu_);
  paused_ = false;
  pause_changed_.notify_all();
}

bool TcpProxy::WaitForwarded(int64_t n, absl::Duration timeout) {
  std::unique_lock lock(mu_);
  return pause_changed_.wait_for(lock, absl::ToChronoNanoseconds(timeout),
                                 [&] { return forwarded_ >= n; });
}

void TcpProxy::AcceptLoop() {
  for (;;) {
    pollfd p[2] = {{listen_fd_, POLLIN, 0}, {stop_pipe_[0], POLLIN, 0}};
    if (poll(p, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (p[1].revents != 0) return;
    const int client = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;
    ++accepted_;
    const int target = target_port_;
    int upstream = -1;
    if (target != 0) {
      upstream = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      sockaddr_in a = Loopback(target);
      if (upstream >= 0 && connect(upstream, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
        CloseFd(upstream);
      }
    }
    if (upstream < 0 && hold_) {
      std::lock_guard lock(mu_);
      held_fds_.push_back(client);
      ++held_;
      continue;
    }
    if (upstream < 0) {  // nobody to forward to: as a closed port would
      // Count first: the client may read the counter as soon as it sees the RST.
      ++refused_;
      CloseWithRst(client);
      continue;
    }
    const int one = 1;
    setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    setsockopt(upstream, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    std::lock_guard lock(mu_);
    ++forwarded_;
    pause_changed_.notify_all();
    // Join the pumps of connections that ended (they no longer take mu_).
    for (auto it = conns_.begin(); it != conns_.end();) {
      if (it->done) {
        it->pump.join();
        it = conns_.erase(it);
      } else {
        ++it;
      }
    }
    Conn& c = conns_.emplace_back();
    c.client = client;
    c.upstream = upstream;
    if (pipe2(c.wake, O_CLOEXEC) != 0) {
      Close(&c, /*rst=*/true);
      continue;
    }
    c.pump = std::thread([this, conn = &c] { Pump(conn); });
  }
}

void TcpProxy::Pump(Conn* c) {
  char buf[64 * 1024];
  for (bool open = true; open;) {
    pollfd p[3] = {{c->client, POLLIN, 0}, {c->upstream, POLLIN, 0}, {c->wake[0], POLLIN, 0}};
    if (poll(p, 3, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (p[2].revents != 0) break;
    {
      // Paused: relay nothing more (the data waits in the kernel's buffers)
      // until Resume() or a reset.
      std::unique_lock lock(mu_);
      pause_changed_.wait(lock, [&] { return !paused_ || c->reset; });
      if (c->reset) break;
    }
    for (int side = 0; side < 2 && open; ++side) {
      if (p[side].revents == 0) continue;
      const ssize_t r = recv(p[side].fd, buf, sizeof(buf), 0);
      // EOF or an error on either side ends the connection (gRPC does not
      // half-close its transport, so nothing is lost by closing both).
      open = r > 0 &&
             WriteAll(side == 0 ? c->upstream : c->client, buf, static_cast<size_t>(r), c->wake[0]);
      if (open && side == 1) CountDownstream(r);
    }
  }
  std::lock_guard lock(mu_);
  Close(c, c->reset);
}

void TcpProxy::CountDownstream(int64_t n) {
  std::lock_guard lock(mu_);
  downstream_ += n;
  if (pause_at_ >= 0 && downstream_ >= pause_at_) {
    pause_at_ = -1;
    paused_ = true;
    pause_changed_.notify_all();
  }
}

void TcpProxy::Close(Conn* c, bool rst) {
  if (rst) {
    CloseWithRst(c->client);
    CloseWithRst(c->upstream);
    ++resets_;
  } else {
    CloseFd(c->client);
    CloseFd(c->upstream);
  }
  c->client = c->upstream = -1;
  CloseFd(c->wake[0]);
  CloseFd(c->wake[1]);
  c->done = true;
  if (c->reset) --resets_pending_;
  closed_.notify_all();
}

}  // namespace fedmf::it
