#include "tools/fedmf/demo_ranking.h"

#include <cmath>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/base/status_macros.h"
#include "common/fmf/wire/model_codec.h"
#include "common/mf/metrics.h"
#include "common/net/client_context.h"
#include "common/net/credentials.h"
#include "fedmf/v1/federation.grpc.pb.h"

namespace fedmf::cli {
namespace {

absl::StatusOr<fmf::SavedPartyModel> Export(const cluster::LocalCluster& cluster, bool insecure,
                                            int k, const std::string& job_id) {
  const std::string name = cluster::LocalCluster::PartyName(k);
  ASSIGN_OR_RETURN(auto channel,
                   net::MakeChannel(absl::StrCat("127.0.0.1:", cluster.admin_port(k)),
                                    net::TlsConfig{insecure, cluster.cert_dir(), "operator"},
                                    net::ExpectedPeer{name, pki::Role::kParty}));
  v1::ExportModelRequest req;
  req.set_job_id(job_id);
  v1::ExportModelResponse resp;
  auto ctx = net::DeadlineContext(absl::Seconds(60));
  RETURN_IF_ERROR(
      net::FromGrpc(v1::PartyAdmin::NewStub(channel)->ExportModel(ctx.get(), req, &resp)));
  return net::ModelFromProto(resp, name);
}

}  // namespace

absl::StatusOr<DemoRanking> MeasureDemoRanking(const cluster::LocalCluster& cluster, bool insecure,
                                               const data::Federation& split,
                                               const v1::JobStatus& status) {
  DemoRanking out;
  std::vector<mf::RankingMetrics> models, popular;
  for (int k = 0; k < status.parties_size() && k < static_cast<int>(split.parties.size()); ++k) {
    const v1::PartyStatus& p = status.parties(k);
    if (!p.accepted() || p.test_count() <= 0) {
      out.left_out.push_back(absl::StrCat(p.name(), ": no model or no reported test error"));
      continue;
    }
    absl::StatusOr<fmf::SavedPartyModel> model =
        Export(cluster, insecure, k, status.spec().job_id());
    if (!model.ok()) {
      out.left_out.push_back(absl::StrCat(p.name(), ": export: ", model.status().message()));
      continue;
    }
    const data::PartyData& d = split.parties[k];
    if (model->u.rows() != d.num_users() || model->v.rows() != d.num_items()) {
      out.left_out.push_back(absl::StrCat(p.name(), ": its model is not of this split's shape"));
      continue;
    }
    // The split is the party's only if its test error comes out as reported.
    const mf::ErrorMetrics here = mf::EvaluateWith(d.test, [&](const data::Rating& r) {
      return mf::Predict(model->u, model->v, r.user, r.item, model->range) + model->rating_offset;
    });
    if (here.count != p.test_count() ||
        std::abs(here.mse - p.test_mse()) > 1e-6 * std::max(1.0, p.test_mse())) {
      out.left_out.push_back(absl::StrFormat(
          "%s: this process's copy of its split is not the one it trained on (its test ratings "
          "give MSE %.6f over %d here, it reported %.6f over %d)",
          p.name(), here.mse, here.count, p.test_mse(), p.test_count()));
      continue;
    }
    mf::RankingOptions options;
    options.relevant_min = d.range.min + 0.75 * (d.range.max - d.range.min);
    // The known ratings: its training split (held-out validation included),
    // as a party counts them (PartySession::EvaluateTestRanking).
    const std::vector<int32_t> support = mf::ItemSupport(d.train, d.num_items());
    models.push_back(
        mf::EvaluateRanking(d.train, d.test, d.num_users(), d.num_items(),
                            mf::ModelScorer(model->u, model->v, support, model->ranking), options));
    popular.push_back(mf::EvaluateRanking(d.train, d.test, d.num_users(), d.num_items(),
                                          mf::PopularityScorer(support), options));
  }
  out.model = mf::CombineRanking(models);
  out.most_popular = mf::CombineRanking(popular);
  return out;
}

}  // namespace fedmf::cli
