// The server's read-only dashboard as server-rendered HTML with inline SVG
// charts: no scripts, nothing fetched from elsewhere. Pure (statuses in,
// HTML out); server_main serves it on `dashboard_listen` (loopback only
// unless the operator allows more: docs/configuration.md).
#ifndef FEDMF_SERVER_DASHBOARD_PAGES_H_
#define FEDMF_SERVER_DASHBOARD_PAGES_H_

#include <string>
#include <vector>

#include "fedmf/v1/federation.pb.h"

namespace fedmf::server {

// "/": parties seen with their liveness (table#parties), every job with its
// state word and rounds done/total, linking to its page (table#jobs).
std::string DashboardIndexHtml(const std::vector<v1::JobStatus>& jobs,
                               const v1::ListPartiesResponse& parties);

// "/jobs/ID": the job's state, its parties (this job's ε, the ledger's, test
// MSE, liveness: table#job-parties), the per-round charts (svg#mse,
// svg#epsilon, svg#seconds) and the round table (table#rounds). A job still
// running refreshes itself every `refresh_seconds` (0 = never).
std::string DashboardJobHtml(const v1::JobStatus& job, int refresh_seconds = 5);

// A page saying what went wrong (unknown job, server error), HTML-escaped.
std::string DashboardErrorHtml(const std::string& message);

}  // namespace fedmf::server

#endif  // FEDMF_SERVER_DASHBOARD_PAGES_H_
