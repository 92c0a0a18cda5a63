#include "server/server_metrics.h"

namespace fedmf::server {

ServerMetrics::ServerMetrics(metrics::Registry* r)
    : registry_(r),
      rounds_(r->AddCounter("fedmf_server_rounds_completed_total",
                            "Synchronization rounds aggregated and committed")),
      // 50 ms .. ~27 min: a loopback round to a slow cross-silo deadline.
      round_seconds_(r->AddHistogram("fedmf_server_round_duration_seconds",
                                     "Wall time from a round's opening to its commit",
                                     metrics::ExponentialBuckets(0.05, 2, 16))),
      bytes_in_(r->AddCounter("fedmf_server_received_bytes_total",
                              "Embedding bytes received from parties (uploads)")),
      bytes_out_(r->AddCounter("fedmf_server_sent_bytes_total",
                               "Embedding bytes sent to parties (downloads)")),
      parties_connected_(r->AddGauge("fedmf_server_parties_connected",
                                     "Parties heard from within the liveness window")),
      dropouts_(r->AddCounter("fedmf_server_dropouts_total",
                              "Accepted parties missing from a committed round")),
      aborts_(r->AddCounter("fedmf_server_aggregation_aborts_total",
                            "Jobs aborted after their rounds had started")),
      jobs_finished_(r->AddCounter("fedmf_server_jobs_finished_total", "Jobs finished")),
      jobs_failed_(r->AddCounter("fedmf_server_jobs_failed_total", "Jobs failed")),
      updates_rejected_(r->AddCounter("fedmf_server_updates_rejected_total",
                                      "Party updates rejected by validation")),
      calls_refused_(r->AddCounter("fedmf_server_calls_refused_total",
                                   "Calls refused over their pool's or certificate's quota")),
      calls_cut_off_(r->AddCounter("fedmf_server_calls_cut_off_total",
                                   "Calls cancelled without progress (calls.idle_seconds) or "
                                   "past calls.max_seconds")),
      upload_buffer_bytes_(r->AddGauge("fedmf_server_upload_buffer_bytes",
                                       "Memory uploads being reassembled hold (bounded by "
                                       "limits.upload_buffer_bytes)")) {}

void ServerMetrics::ObserveRound(const v1::RoundRecord& record) {
  round_seconds_->Observe(record.seconds());
}

void ServerMetrics::Refresh(JobCoordinator* coordinator, const TrafficCounters& traffic,
                            const CallGovernor* governor, int64_t upload_buffer_bytes) {
  upload_buffer_bytes_->Set(static_cast<double>(upload_buffer_bytes));
  if (governor != nullptr) {
    const CallGovernor::Counters g = governor->counters();
    calls_refused_->SetTotal(static_cast<double>(g.refused));
    calls_cut_off_->SetTotal(static_cast<double>(g.cut_off));
    for (const auto& [pool, used] : g.in_use) {
      registry_
          ->AddGauge("fedmf_server_calls_in_use", "Calls open per pool of callers",
                     {{"pool", pool}})
          ->Set(used);
    }
  }
  const CoordinatorCounters c = coordinator->counters();
  rounds_->SetTotal(static_cast<double>(c.rounds_completed));
  dropouts_->SetTotal(static_cast<double>(c.dropouts));
  aborts_->SetTotal(static_cast<double>(c.aggregation_aborts));
  jobs_finished_->SetTotal(static_cast<double>(c.jobs_finished));
  jobs_failed_->SetTotal(static_cast<double>(c.jobs_failed));
  updates_rejected_->SetTotal(static_cast<double>(c.updates_rejected));
  bytes_in_->SetTotal(static_cast<double>(traffic.bytes_in.load()));
  bytes_out_->SetTotal(static_cast<double>(traffic.bytes_out.load()));
  int connected = 0;
  const v1::ListPartiesResponse parties = coordinator->ListParties();
  for (const auto& p : parties.parties()) connected += p.connected() ? 1 : 0;
  parties_connected_->Set(connected);
  for (const auto& [party, eps] : c.epsilon_by_party) {
    registry_
        ->AddGauge("fedmf_server_epsilon_spent",
                   "Privacy loss each party last reported (its own accountant)", {{"party", party}})
        ->Set(eps);
  }
}

}  // namespace fedmf::server
