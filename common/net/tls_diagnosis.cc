#include "common/net/tls_diagnosis.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/pki/identity.h"
#include "common/pki/role.h"

namespace fedmf::net {
namespace {

struct SslCtxFree {
  void operator()(SSL_CTX* c) const { SSL_CTX_free(c); }
};
struct SslFree {
  void operator()(SSL* s) const { SSL_free(s); }
};
struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct PkeyFree {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
};
struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};

class Socket {
 public:
  Socket() = default;
  ~Socket() {
    if (fd_ >= 0) ::close(fd_);
  }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  int fd() const { return fd_; }
  void reset(int fd) { fd_ = fd; }

 private:
  int fd_ = -1;
};

// host:port or [v6]:port.
bool SplitAddress(const std::string& address, std::string* host, std::string* port) {
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == address.size()) return false;
  *host = address.substr(0, colon);
  *port = address.substr(colon + 1);
  if (host->size() >= 2 && host->front() == '[' && host->back() == ']') {
    *host = host->substr(1, host->size() - 2);
  }
  return true;
}

// The last OpenSSL error's reason ("tlsv13 alert certificate required"), or "".
std::string LastSslReason() {
  unsigned long code = 0;  // NOLINT(runtime/int): OpenSSL's type
  unsigned long last = 0;  // NOLINT(runtime/int)
  while ((code = ERR_get_error()) != 0) last = code;
  if (last == 0) return "";
  const char* r = ERR_reason_error_string(last);
  return r == nullptr ? absl::StrCat("OpenSSL error ", last) : std::string(r);
}

std::string CertificatePem(X509* cert) {
  std::unique_ptr<BIO, BioFree> bio(BIO_new(BIO_s_mem()));
  if (bio == nullptr || PEM_write_bio_X509(bio.get(), cert) != 1) return "";
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio.get(), &data);  // NOLINT(runtime/int)
  return std::string(data, static_cast<size_t>(n));
}

std::string RefusedOurCertificate(const std::string& address, const std::string& reason) {
  return absl::StrCat(
      address, " refused this client's certificate (TLS alert: ", reason,
      "): is it issued by the CA the server trusts (the same `fedmf ca init`), not expired, "
      "and the one --cert-dir/--name point to?");
}

std::string ClosedOnOurCertificate(const std::string& address) {
  return absl::StrCat(
      address,
      " refused this client's certificate (it closed the connection after the TLS handshake, "
      "without an alert): most likely the certificate is not signed by that federation's CA (it "
      "comes from another `fedmf ca init`); have that federation's `fedmf ca` issue this "
      "client's certificate (`fedmf ca issue`, or `fedmf ca sign` of a `fedmf ca request`)");
}

// What the server did with our certificate once the handshake finished on
// our side (under TLS 1.3 the server checks it only then).
enum class Verdict {
  kAccepted,  // it sent bytes (a gRPC server: its HTTP/2 SETTINGS), or nothing in time
  kAlert,     // it sent a TLS alert (`reason` names it)
  kClosed,    // it closed the connection (EOF, close_notify or reset) without an alert
};

// Waits at most `wait` for the server's first application byte or its
// refusal. Only a close or an alert counts as a refusal: silence until the
// deadline means accepted, so a slow server can make us miss a refusal but
// never invent one.
Verdict AwaitVerdict(SSL* ssl, int fd, absl::Duration wait, std::string* reason) {
  // Non-blocking from here on, so that the deadline bounds the whole wait
  // (SO_RCVTIMEO would bound each of OpenSSL's reads, e.g. one per session
  // ticket, separately).
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0) return Verdict::kAccepted;
  // (An infinite wait would overflow the clock: a day is as good.)
  const auto deadline =
      std::chrono::steady_clock::now() + absl::ToChronoNanoseconds(std::min(wait, absl::Hours(24)));
  for (;;) {
    char byte = 0;
    ERR_clear_error();
    errno = 0;
    const int n = SSL_read(ssl, &byte, 1);
    if (n > 0) return Verdict::kAccepted;
    const int read_errno = errno;
    switch (SSL_get_error(ssl, n)) {
      case SSL_ERROR_WANT_READ: {
        const auto left = std::chrono::ceil<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) return Verdict::kAccepted;
        pollfd p{.fd = fd, .events = POLLIN, .revents = 0};
        const int polled = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 60000)));
        if (polled < 0 && errno != EINTR) return Verdict::kAccepted;
        continue;
      }
      case SSL_ERROR_ZERO_RETURN:  // close_notify
        return Verdict::kClosed;
      case SSL_ERROR_SYSCALL:  // EOF before OpenSSL 3, or a reset
        return read_errno == 0 || read_errno == ECONNRESET || read_errno == EPIPE
                   ? Verdict::kClosed
                   : Verdict::kAccepted;
      case SSL_ERROR_SSL: {
        // OpenSSL 3 reports a bare EOF as "unexpected eof while reading".
        const unsigned long code = ERR_peek_last_error();  // NOLINT(runtime/int): OpenSSL's type
        *reason = LastSslReason();
        if (ERR_GET_REASON(code) == SSL_R_UNEXPECTED_EOF_WHILE_READING) return Verdict::kClosed;
        return absl::StrContains(*reason, "alert") ? Verdict::kAlert : Verdict::kAccepted;
      }
      default: return Verdict::kAccepted;
    }
  }
}

}  // namespace

std::string DiagnoseTls(const std::string& address, const pki::TlsFiles& ours,
                        const ExpectedPeer& peer, absl::Duration timeout,
                        absl::Duration verdict_wait) {
  std::string host, port;
  if (!SplitAddress(address, &host, &port)) {
    return absl::StrCat("'", address, "' is not HOST:PORT");
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int rc = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &found); rc != 0) {
    return absl::StrCat("cannot resolve '", host, "': ", ::gai_strerror(rc));
  }
  std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> addresses(found, ::freeaddrinfo);
  Socket sock;
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(absl::ToInt64Seconds(timeout));
  tv.tv_usec =
      static_cast<suseconds_t>(absl::ToInt64Microseconds(timeout - absl::Seconds(tv.tv_sec)));
  int connect_errno = 0;
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype, a->ai_protocol);
    if (fd < 0) continue;
    // On Linux, SO_SNDTIMEO bounds connect() too.
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
      sock.reset(fd);
      break;
    }
    connect_errno = errno;
    ::close(fd);
  }
  if (sock.fd() < 0) {
    if (connect_errno == ECONNREFUSED) {
      return absl::StrCat("nothing listens on ", address, " (connection refused)");
    }
    if (connect_errno == EINPROGRESS || connect_errno == EAGAIN || connect_errno == ETIMEDOUT) {
      return absl::StrCat(address, " did not accept a connection within ",
                          absl::FormatDuration(timeout));
    }
    return absl::StrCat("cannot connect to ", address, ": ", std::strerror(connect_errno));
  }

  ERR_clear_error();
  std::unique_ptr<SSL_CTX, SslCtxFree> ctx(SSL_CTX_new(TLS_client_method()));
  if (ctx == nullptr) return absl::StrCat("OpenSSL: ", LastSslReason());
  {
    std::unique_ptr<BIO, BioFree> cb(
        BIO_new_mem_buf(ours.cert_pem.data(), static_cast<int>(ours.cert_pem.size())));
    std::unique_ptr<X509, X509Free> cert(PEM_read_bio_X509(cb.get(), nullptr, nullptr, nullptr));
    std::unique_ptr<BIO, BioFree> kb(
        BIO_new_mem_buf(ours.key_pem.data(), static_cast<int>(ours.key_pem.size())));
    std::unique_ptr<EVP_PKEY, PkeyFree> key(
        PEM_read_bio_PrivateKey(kb.get(), nullptr, nullptr, nullptr));
    if (cert == nullptr || key == nullptr || SSL_CTX_use_certificate(ctx.get(), cert.get()) != 1 ||
        SSL_CTX_use_PrivateKey(ctx.get(), key.get()) != 1) {
      return absl::StrCat("this client's own certificate or key does not load: ", LastSslReason());
    }
  }
  // Accept whatever the server presents; it is checked below, where the
  // reason can be named.
  SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_NONE, nullptr);
  static const unsigned char kAlpn[] = {2, 'h', '2'};  // gRPC servers require h2
  SSL_CTX_set_alpn_protos(ctx.get(), kAlpn, sizeof(kAlpn));
  std::unique_ptr<SSL, SslFree> ssl(SSL_new(ctx.get()));
  if (ssl == nullptr) return absl::StrCat("OpenSSL: ", LastSslReason());
  SSL_set_fd(ssl.get(), sock.fd());
  SSL_set_tlsext_host_name(ssl.get(), host.c_str());
  if (SSL_connect(ssl.get()) != 1) {
    const std::string reason = LastSslReason();
    if (absl::StrContains(reason, "alert")) return RefusedOurCertificate(address, reason);
    if (reason.empty()) {
      return absl::StrCat(address,
                          " closed the connection during the TLS handshake (a plaintext "
                          "daemon started with --insecure?)");
    }
    return absl::StrCat("TLS handshake with ", address, " failed: ", reason,
                        " (is it a fedmf daemon's TLS port?)");
  }

  std::unique_ptr<X509, X509Free> theirs(SSL_get1_peer_certificate(ssl.get()));
  if (theirs == nullptr) return absl::StrCat(address, " presented no certificate");
  const std::string pem = CertificatePem(theirs.get());
  if (absl::Status s = pki::VerifyCertificate(pem, ours.ca_cert_pem); !s.ok()) {
    return absl::StrCat(address,
                        "'s certificate does not verify against this client's CA "
                        "(ca.crt in --cert-dir): ",
                        s.message());
  }
  absl::StatusOr<pki::PeerIdentity> id = pki::IdentityFromCertificatePem(pem);
  if (!id.ok()) {
    return absl::StrCat(address, "'s certificate names no fedmf identity: ", id.status().message());
  }
  if (!peer.name.empty() && id->name != peer.name) {
    return absl::StrCat(address, " presents the certificate of '", id->name, "' (role ",
                        pki::RoleToString(id->role), "), not of '", peer.name, "': pass ",
                        peer.name_option, " ", id->name, " if that daemon is the one meant");
  }
  if (peer.role.has_value() && id->role != *peer.role) {
    return absl::StrCat(address, " presents a certificate of role ", pki::RoleToString(id->role),
                        " for '", id->name, "'; this client expects role ",
                        pki::RoleToString(*peer.role));
  }
  if (peer.name.empty() &&
      X509_check_host(theirs.get(), host.c_str(), host.size(), 0, nullptr) != 1 &&
      X509_check_ip_asc(theirs.get(), host.c_str(), 0) != 1) {
    // fedmf dials daemons by certificate name: the fix is to name the peer,
    // not to add the address to its certificate.
    return absl::StrCat(address, " presents the certificate of '", id->name, "' (role ",
                        pki::RoleToString(id->role), "), which is not valid for '", host,
                        "': fedmf dials a daemon by its certificate name; pass ", peer.name_option,
                        " ", id->name, " if that daemon is the one meant");
  }
  // Under TLS 1.3 the server checks our certificate after the handshake
  // finished on our side: its verdict is its first HTTP/2 bytes, an alert,
  // or (gRPC 1.51) the connection closed without one.
  std::string reason;
  switch (AwaitVerdict(ssl.get(), sock.fd(), std::min(timeout, verdict_wait), &reason)) {
    case Verdict::kAlert: return RefusedOurCertificate(address, reason);
    case Verdict::kClosed: return ClosedOnOurCertificate(address);
    case Verdict::kAccepted: return "";
  }
  return "";
}

std::string DiagnoseRpcFailure(const absl::Status& rpc, const std::string& address,
                               const TlsConfig& tls, const ExpectedPeer& peer,
                               absl::Duration timeout) {
  if (tls.insecure || (!absl::IsUnavailable(rpc) && !absl::IsDeadlineExceeded(rpc))) return "";
  absl::StatusOr<pki::TlsFiles> files = pki::LoadTlsFiles(tls.cert_dir, tls.name);
  if (!files.ok()) return std::string(files.status().message());
  return DiagnoseTls(address, *files, peer, timeout);
}

std::string TlsCauseOnce::NewCause(const absl::Status& rpc) {
  const std::string cause = DiagnoseRpcFailure(rpc, address_, tls_, peer_, timeout_);
  const bool fresh = !cause.empty() && cause != last_;
  last_ = cause;
  return fresh ? cause : std::string();
}

}  // namespace fedmf::net
