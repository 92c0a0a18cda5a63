// gRPC edge of fedmf-aggregator, the semi-honest third party of Hua et al.
// S3: wires common/hua's ThirdParty (one per job) to the network.
//
// - Begin / Flush / EndJob only from the coordination server's certificate
//   (role server); Submit only from the device host the open round's plan
//   names for each user; Recorded only from an operator, and only when the
//   daemon runs with --record-for-tests.
// - It holds no key that could unmask a report (the server keeps every psi
//   and beta); per job it keeps alpha_j (its own pad, the protocol's) until
//   EndJob. After Flush nothing of the round is left: the reports were
//   folded into sums, the sums forwarded, the round forgotten.
#ifndef FEDMF_AGGREGATOR_AGGREGATOR_SERVICE_H_
#define FEDMF_AGGREGATOR_AGGREGATOR_SERVICE_H_

#include <atomic>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/hua/third_party.h"
#include "common/pki/role.h"
#include "fedmf/v1/hua.grpc.pb.h"

namespace fedmf::server {

struct AggregatorOptions {
  bool insecure = false;
  // Test-only: keep every accepted report so tests can check what the third
  // party saw (uniform mod P). Off in production: then nothing is kept.
  bool record_for_tests = false;
};

struct AggregatorCounters {
  std::atomic<int64_t> reports_accepted{0};
  std::atomic<int64_t> reports_rejected{0};
  std::atomic<int64_t> sums_forwarded{0};
  std::atomic<int64_t> bytes_in{0};
};

class AggregatorService final : public v1::HuaAggregator::Service {
 public:
  explicit AggregatorService(AggregatorOptions options) : options_(options) {}

  grpc::Status Begin(grpc::ServerContext* ctx, const v1::HuaPlan* req, v1::HuaAck* resp) override;
  grpc::Status Flush(grpc::ServerContext* ctx, const v1::HuaFlushRequest* req,
                     v1::HuaForward* resp) override;
  grpc::Status EndJob(grpc::ServerContext* ctx, const v1::HuaEndJobRequest* req,
                      v1::HuaAck* resp) override;
  grpc::Status Submit(grpc::ServerContext* ctx, const v1::HuaReportBatch* req,
                      v1::HuaSubmitResponse* resp) override;
  grpc::Status Recorded(grpc::ServerContext* ctx, const v1::HuaRecordedRequest* req,
                        v1::HuaRecordedResponse* resp) override;

  const AggregatorCounters& counters() const { return counters_; }

 private:
  struct Job {
    std::optional<hua::ThirdParty> third_party;
    int32_t dim = 0;
    // The open round: its header and who speaks for which planned user.
    std::optional<v1::HuaFlushRequest> open;
    std::map<int32_t, std::string> hosts;
    std::vector<v1::HuaReportBatch> recorded;  // --record-for-tests only
  };

  // The caller's certificate name if its role is `role` and, when `claimed`
  // is set, its name is `claimed`. In insecure mode `claimed` is taken at its
  // word.
  absl::StatusOr<std::string> Caller(const grpc::ServerContext& ctx, pki::Role role,
                                     const std::string& claimed);

  AggregatorOptions options_;
  absl::Mutex mu_;
  std::map<std::string, Job> jobs_ ABSL_GUARDED_BY(mu_);
  AggregatorCounters counters_;
};

}  // namespace fedmf::server

#endif  // FEDMF_AGGREGATOR_AGGREGATOR_SERVICE_H_
