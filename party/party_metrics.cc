#include "party/party_metrics.h"

namespace fedmf::party {

PartyMetrics::PartyMetrics(metrics::Registry* r)
    : epsilon_spent_(r->AddGauge("fedmf_party_epsilon_spent",
                                 "Privacy loss spent so far by this party's ledger (all jobs)")),
      epsilon_budget_(r->AddGauge("fedmf_party_epsilon_budget",
                                  "The party's own ε budget (policy max_epsilon)")),
      rounds_charged_(r->AddCounter("fedmf_party_rounds_completed_total",
                                    "Privacy charges this party committed and released: one per "
                                    "round, plus one size release per job")) {}

void PartyMetrics::Refresh(PartyAgent* agent) {
  const v1::LedgerResponse ledger = agent->LedgerSnapshot();
  epsilon_spent_->Set(ledger.epsilon_spent());
  epsilon_budget_->Set(ledger.max_epsilon());
  rounds_charged_->SetTotal(static_cast<double>(ledger.entries_size()));
}

}  // namespace fedmf::party
