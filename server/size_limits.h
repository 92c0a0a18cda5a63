// Upper bounds on every size a client or operator declares that the server
// turns into an allocation (users, items, dim, devices, roster, the shared
// matrix), and the pure checks applied at each RPC BEFORE anything is stored
// or allocated. One party on the roster must not be able to make the server
// allocate global_items x dim doubles for a made-up global_items, nor store a
// reply that would crash every restart. Configured under `limits:` in the
// server config (docs/configuration.md). No gRPC, no clocks.
#ifndef FEDMF_SERVER_SIZE_LIMITS_H_
#define FEDMF_SERVER_SIZE_LIMITS_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "fedmf/v1/device.pb.h"
#include "fedmf/v1/federation.pb.h"

namespace fedmf::server {

struct SizeLimits {
  int64_t max_users = 10'000'000;   // users a party (or a Hua job) may declare
  int64_t max_items = 1'000'000;    // items a party (or an LFL/Hua job) may declare
  int64_t max_dim = 1024;           // JobSpec.dim
  int64_t max_devices = 1'000'000;  // devices of an LFL/Hua job, and per HostHello
  int64_t max_parties = 1000;       // JobSpec.roster
  // Values (doubles) of one shared matrix, rows x dim: 2^27 = 1 GiB.
  int64_t max_matrix_values = int64_t{1} << 27;
  // Memory every upload being reassembled at once may hold (12 bytes a
  // value: the float32 wire copy for the checksum and the matrix); an upload
  // that would go over waits for RESOURCE_EXHAUSTED and retries. 4 GiB: ten
  // parties' 1M x 20 releases at once, or one matrix at max_matrix_values.
  int64_t upload_buffer_bytes = int64_t{4} << 30;
  // PSI (align_users jobs): the blinded lists queued at the server for one
  // job, and what one PsiFetch answer carries (the rest waits for the next).
  int64_t psi_mailbox_bytes = int64_t{512} << 20;
  int64_t psi_fetch_bytes = int64_t{4} << 20;
  // Free text a peer sends (a refusal, a rejection reason): longer text is
  // cut to this many bytes, control characters escaped, before it is stored,
  // logged or shown.
  int64_t max_text_bytes = 512;
  // Rejected device messages listed in one SubmitResponse (the rest counted).
  int64_t max_rejections_per_response = 64;
  // Warning lines about rejected peer messages, per job and minute (the
  // rest counted in the next line).
  int64_t rejection_log_lines_per_minute = 30;
};

// The limits themselves are sane: each >= 1 (checked at config load).
absl::Status ValidateSizeLimits(const SizeLimits& limits);

// `field` = `value` must be in [0, limit]; the error names the field, the
// value, the config key and the fix.
absl::Status CheckBound(const std::string& field, int64_t value, const std::string& limit_key,
                        int64_t limit);

// The sizes a party declares in its offer reply (or that a stored reply
// holds: `what` names which, e.g. "OfferReply" or "stored OfferReply of party
// 'p'"), including the shared matrix they imply: (global users for VFL |
// global items for HFL) x dim.
absl::Status CheckDeclaredSizes(const std::string& what, int64_t users, int64_t items,
                                int64_t global_users, int64_t global_items, bool vertical,
                                int64_t dim, const SizeLimits& limits);
absl::Status CheckOfferReply(const v1::OfferReply& reply, bool vertical, int64_t dim,
                             const SizeLimits& limits);

// The sizes an operator's job spec declares (every setting).
absl::Status CheckJobSpecSizes(const v1::JobSpec& spec, const SizeLimits& limits);

// The text an operator's spec carries that ends up in every job view, log
// line and file name: job_id (1-128 characters of A-Z a-z 0-9 . _ : -, or
// empty where the setting names the job itself) and roster names
// (certificate names, pki::ValidateName).
absl::Status CheckJobSpecText(const v1::JobSpec& spec);

// A device host's announcement.
absl::Status CheckHostHello(const v1::HostHello& hello, const SizeLimits& limits);

}  // namespace fedmf::server

#endif  // FEDMF_SERVER_SIZE_LIMITS_H_
