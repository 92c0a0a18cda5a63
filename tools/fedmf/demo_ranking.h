// fedmf demo's top-N quality of the parties' final models, as fedmf train
// reports it (mf/ranking.h). The demo owns its parties: it exports each
// party's model through the party's admin endpoint (the demo's operator
// certificate) and ranks it against its own copy of the split the parties
// trained on (the one --compare uses). A party whose reported test MSE the
// copy does not reproduce is left out (the copy is not its split), and said.
#ifndef FEDMF_TOOLS_FEDMF_DEMO_RANKING_H_
#define FEDMF_TOOLS_FEDMF_DEMO_RANKING_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/data/partition.h"
#include "common/mf/ranking.h"
#include "fedmf/v1/federation.pb.h"
#include "tools/cluster/local_cluster.h"

namespace fedmf::cli {

struct DemoRanking {
  mf::RankingMetrics model, most_popular;  // pooled over the measured parties
  std::vector<std::string> left_out;       // "party-1: why"
};

// `status` is the finished job's; `split` party k is party k's data.
absl::StatusOr<DemoRanking> MeasureDemoRanking(const cluster::LocalCluster& cluster, bool insecure,
                                               const data::Federation& split,
                                               const v1::JobStatus& status);

}  // namespace fedmf::cli

#endif  // FEDMF_TOOLS_FEDMF_DEMO_RANKING_H_
