// Why a TLS connection to a fedmf daemon failed, in words an operator can
// act on. gRPC reports a failed handshake only as "Deadline Exceeded" or
// "failed to connect", and the cause (the server refused our certificate,
// its certificate is for another name or from another CA, it expired) ends
// up in the server's log, not ours. After a failed RPC, a client calls
// DiagnoseTls: it repeats the connection with OpenSSL alone, the same
// certificate, key and CA, accepts whatever the server presents and then
// checks it the way the channel would, and reads the server's first bytes
// (under TLS 1.3 a refusal of our certificate arrives only after the
// handshake, as an alert or, from gRPC 1.51, as the connection closed).
#ifndef FEDMF_COMMON_NET_TLS_DIAGNOSIS_H_
#define FEDMF_COMMON_NET_TLS_DIAGNOSIS_H_

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "common/net/credentials.h"
#include "common/pki/tls_files.h"

namespace fedmf::net {

// How long DiagnoseTls waits, after a handshake whose server certificate
// checked out, for the server's verdict on our certificate. A gRPC server
// answers at once either way: it sends its HTTP/2 SETTINGS when it accepts
// and closes the connection (or sends an alert) when it refuses, so the wait
// runs out only against a server that says nothing, or one too slow to
// decide; both count as "accepted" (a timeout never reads as a refusal, so a
// loaded machine can hide a refusal but not invent one). 2 s leaves a loaded
// host room to schedule the server's handshake.
inline constexpr absl::Duration kServerVerdictWait = absl::Seconds(2);

// One sentence naming the cause, or "" if a TLS session with the expected
// peer works (the failure is elsewhere). `address`: host:port. `timeout`
// bounds the connection and each step of the handshake; the wait for the
// server's verdict is the shorter of `timeout` and `verdict_wait`.
std::string DiagnoseTls(const std::string& address, const pki::TlsFiles& ours,
                        const ExpectedPeer& peer, absl::Duration timeout,
                        absl::Duration verdict_wait = kServerVerdictWait);

// After a failed RPC over `tls`: when the status says the connection failed
// (UNAVAILABLE, DEADLINE_EXCEEDED) and TLS is on, DiagnoseTls's sentence
// (loading our files from tls.cert_dir/tls.name); otherwise "". Every
// client appends it to its own error as "cause: ...".
std::string DiagnoseRpcFailure(const absl::Status& rpc, const std::string& address,
                               const TlsConfig& tls, const ExpectedPeer& peer,
                               absl::Duration timeout);

// For a daemon's retry loop: diagnoses each failed RPC to one peer and
// returns the cause only when it differs from the one returned last, so the
// loop logs each cause once instead of on every retry. Not thread-safe: one
// per loop.
class TlsCauseOnce {
 public:
  TlsCauseOnce(std::string address, TlsConfig tls, ExpectedPeer peer,
               absl::Duration timeout = absl::Seconds(5))
      : address_(std::move(address)),
        tls_(std::move(tls)),
        peer_(std::move(peer)),
        timeout_(timeout) {}
  // The cause of `rpc`'s failure if it is new, else "".
  std::string NewCause(const absl::Status& rpc);

 private:
  std::string address_;
  TlsConfig tls_;
  ExpectedPeer peer_;
  absl::Duration timeout_;
  std::string last_;
};

}  // namespace fedmf::net

#endif  // FEDMF_COMMON_NET_TLS_DIAGNOSIS_H_
