// fedmf-server's Prometheus metrics: what a federation operator watches
// (rounds, round latency, traffic, connected parties, dropouts, ε spent per
// party, aborted aggregations). Counters are mirrored from the coordinator's
// own tallies at scrape time, so the coordinator stays free of metrics code.
#ifndef FEDMF_SERVER_SERVER_METRICS_H_
#define FEDMF_SERVER_SERVER_METRICS_H_

#include "common/metrics/metrics.h"
#include "fedmf/v1/federation.pb.h"
#include "server/call_governor.h"
#include "server/fmf/job_coordinator.h"
#include "server/traffic_counters.h"

namespace fedmf::server {

class ServerMetrics {
 public:
  explicit ServerMetrics(metrics::Registry* registry);

  // For CoordinatorOptions::on_round.
  void ObserveRound(const v1::RoundRecord& record);
  // Before each scrape. `governor` may be null; `upload_buffer_bytes` is
  // what uploads being reassembled hold (CoordinatorService).
  void Refresh(JobCoordinator* coordinator, const TrafficCounters& traffic,
               const CallGovernor* governor = nullptr, int64_t upload_buffer_bytes = 0);

 private:
  metrics::Registry* registry_;
  metrics::Counter* rounds_;
  metrics::Histogram* round_seconds_;
  metrics::Counter* bytes_in_;
  metrics::Counter* bytes_out_;
  metrics::Gauge* parties_connected_;
  metrics::Counter* dropouts_;
  metrics::Counter* aborts_;
  metrics::Counter* jobs_finished_;
  metrics::Counter* jobs_failed_;
  metrics::Counter* updates_rejected_;
  metrics::Counter* calls_refused_;
  metrics::Counter* calls_cut_off_;
  metrics::Gauge* upload_buffer_bytes_;
};

}  // namespace fedmf::server

#endif  // FEDMF_SERVER_SERVER_METRICS_H_
