// fedmf-party's Prometheus metrics, read from its own durable ledger at
// scrape time: ε spent against its budget and the rounds it was charged for.
#ifndef FEDMF_PARTY_PARTY_METRICS_H_
#define FEDMF_PARTY_PARTY_METRICS_H_

#include "common/metrics/metrics.h"
#include "party/party_agent.h"

namespace fedmf::party {

class PartyMetrics {
 public:
  explicit PartyMetrics(metrics::Registry* registry);
  // Before each scrape.
  void Refresh(PartyAgent* agent);

 private:
  metrics::Gauge* epsilon_spent_;
  metrics::Gauge* epsilon_budget_;
  metrics::Counter* rounds_charged_;
};

}  // namespace fedmf::party

#endif  // FEDMF_PARTY_PARTY_METRICS_H_
