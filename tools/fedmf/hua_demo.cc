#include "tools/fedmf/hua_demo.h"

#include <cmath>
#include <iostream>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/cli/command_line.h"
#include "common/data/loaders.h"
#include "common/data/partition.h"
#include "common/hua/accounting.h"
#include "common/hua/central.h"
#include "common/hua/wire/hua_codec.h"
#include "common/mf/metrics.h"
#include "common/random/csprng.h"
#include "tools/cluster/local_cluster.h"
#include "tools/fedmf/cli_util.h"
#include "tools/fedmf/hua_train.h"
#include "tools/fedmf/job_flags.h"

namespace fedmf::cli {
namespace {

// The hua-s3 job over `hosts` device hosts: users split evenly by id.
v1::JobSpec HuaDemoSpec(const JobFlags& a, const HuaDemoArgs& d, const hua::HuaParams& params,
                        const data::Dataset& dataset, const data::PartyData& split,
                        uint64_t split_seed, int32_t with_ratings, int hosts, int aggregator_port) {
  net::HuaJob job;
  job.params = params;
  job.range = dataset.range;
  job.num_items = split.num_items();
  job.test_fraction = 0.1;
  job.has_seed = a.seed.has_value();
  job.seed = split_seed;
  v1::JobSpec spec = net::SpecFromHuaJob(job);
  spec.set_job_id("demo-hua-s3");
  spec.set_round_deadline_seconds(d.round_deadline_seconds);
  spec.mutable_hua()->set_expected_users(with_ratings);
  spec.mutable_hua()->set_join_deadline_seconds(120);
  spec.mutable_hua()->set_aggregator(absl::StrCat("127.0.0.1:", aggregator_port));
  const int32_t n = split.num_users();
  for (int k = 0; k < hosts; ++k) {
    const int32_t first = static_cast<int32_t>(int64_t{n} * k / hosts);
    const int32_t last = static_cast<int32_t>(int64_t{n} * (k + 1) / hosts);
    v1::DeviceGrant* g = spec.mutable_hua()->add_grants();
    g->set_host(cluster::LocalCluster::HuaHostName(k));
    g->set_first_device(first);
    g->set_count(last - first);
  }
  return spec;
}

// One device host per grant of `spec`, with the demo's own policy opt-ins,
// the data's declared range and (seeded demo) its seed as theirs — the job's
// seed never reaches them. The valid variant's epsilon is the hosts' budget;
// the paper's mechanism (or epsilon inf) is non-private: they must allow it.
absl::Status StartHuaHosts(const JobFlags& a, const v1::JobSpec& spec, const hua::HuaParams& params,
                           const data::RatingRange& range, uint64_t split_seed,
                           cluster::LocalCluster& c) {
  const double epsilon =
      hua::IsPrivate(params) ? params.epsilon : std::numeric_limits<double>::infinity();
  for (int k = 0; k < spec.hua().grants_size(); ++k) {
    const v1::DeviceGrant& g = spec.hua().grants(k);
    std::vector<std::string> flags = cluster::DemoDevicePolicyFlags(epsilon, params.iterations);
    flags.insert(flags.end(), {"--rating-range", absl::StrCat(range.min, ",", range.max)});
    if (a.seed.has_value()) flags.insert(flags.end(), {"--seed", absl::StrCat(split_seed)});
    if (absl::Status s = c.StartHuaHost(k, a.data, static_cast<int>(g.first_device()),
                                        static_cast<int>(g.count()), 0, flags);
        !s.ok()) {
      return absl::Status(s.code(),
                          absl::StrCat(cluster::LocalCluster::HuaHostName(k), ": ", s.message()));
    }
  }
  return absl::OkStatus();
}

void PrintHuaResult(const JobFlags& a, const hua::HuaParams& params, const hua::HuaPrivacy& plan,
                    const v1::HuaStatus& h, const mf::ErrorMetrics& baseline, int hosts,
                    double seconds) {
  const double increase = h.test_mae() - baseline.mae;
  if (a.json) {
    nlohmann::json j = {{"setting", "hua-s3"},
                        {"data", a.data},
                        {"iterations", h.iterations_size()},
                        {"test_mse", h.test_mse()},
                        {"test_mae", h.test_mae()},
                        {"test_ratings", h.test_count()},
                        {"baseline_test_mae", baseline.mae},
                        {"mean_abs_error_increase", increase},
                        {"hosts", hosts},
                        {"users", h.registered_users()},
                        {"seconds", seconds}};
    AddHuaPrivacyJson(params, plan, h.epsilon(), j);
    std::cout << j.dump() << "\n";
    return;
  }
  std::cout << absl::StrFormat(
      "\nhua-s3 over %d real processes (server, aggregator, %d device hosts, %d users): "
      "%d iterations in %.1f s\ntest MAE %.4f (MSE %.4f) over %d ratings; non-private baseline "
      "MAE %.4f; mean |error| increase %+.4f\n%s\n",
      hosts + 2, hosts, h.registered_users(), h.iterations_size(), seconds, h.test_mae(),
      h.test_mse(), h.test_count(), baseline.mae, increase,
      HuaPrivacyLine(params, plan, h.epsilon()));
}

}  // namespace

int RunHuaDemo(const JobFlags& a, const HuaDemoArgs& d) {
  const absl::Time start = absl::Now();
  auto dataset = LoadWithDeclaredRange(a, a.data);  // as `fedmf train` loads it
  if (!dataset.ok()) return Report("fedmf demo: --data", dataset.status());
  auto params = BuildHuaParams(a);
  if (!params.ok()) return Report("fedmf demo", params.status());
  if (params->scenario != hua::Scenario::kDynamic) {
    return Report("fedmf demo",
                  absl::InvalidArgumentError(
                      "with real processes only hua-s3 runs (the others: fedmf train)"));
  }
  // The split every host derives from the job (test fraction, seed).
  const uint64_t split_seed = a.seed.value_or(1);
  auto fed = data::PartitionCentral(*dataset, {0.1, split_seed});
  if (!fed.ok()) return Report("fedmf demo", RuntimeError(fed.status()));
  const data::PartyData& split = fed->parties[0];
  const mf::RatingMatrix by_user(split.num_users(), split.num_items(), split.train);
  int32_t with_ratings = 0;
  for (int32_t i = 0; i < by_user.num_users(); ++i) with_ratings += by_user.RowSize(i) > 0;
  const int hosts = std::max(1, std::min(d.hosts, split.num_users()));

  cluster::ClusterOptions options;
  options.parties = 0;
  options.hua_hosts = hosts;
  options.data_spec = a.data;
  options.keep_work_dir = d.keep;
  options.insecure = d.insecure;
  auto cluster = cluster::LocalCluster::Create(options);
  if (!cluster.ok()) return Report("fedmf demo", RuntimeError(cluster.status()));
  cluster::LocalCluster& c = **cluster;
  std::cerr << absl::StrFormat("demo: work dir %s (logs in logs/), CA in certs/\n", c.work_dir());
  if (auto s = c.StartServer(); !s.ok()) return Report("fedmf demo: server", RuntimeError(s));
  if (auto s = c.StartAggregator(); !s.ok())
    return Report("fedmf demo: aggregator", RuntimeError(s));
  const v1::JobSpec spec = HuaDemoSpec(a, d, *params, *dataset, split, split_seed, with_ratings,
                                       hosts, c.aggregator_port());
  auto job_id = c.SubmitJob(spec);
  if (!job_id.ok()) return Report("fedmf demo: submit", RuntimeError(job_id.status()));
  if (auto s = StartHuaHosts(a, spec, *params, dataset->range, split_seed, c); !s.ok()) {
    return Report("fedmf demo", RuntimeError(s));
  }
  std::cerr << absl::StrFormat(
      "demo: fedmf-server :%d, fedmf-aggregator :%d, %d device hosts with %d users (%s); "
      "%d iterations, K = %d, %s\n",
      c.server_port(), c.aggregator_port(), hosts, with_ratings, d.insecure ? "INSECURE" : "mTLS",
      params->iterations, params->max_online,
      params->paper_noise
          ? absl::StrFormat("the paper's mechanism at budget %g (epsilon reported inf)",
                            params->epsilon)
          : absl::StrFormat("epsilon %g per user at delta %g (the valid variant)", params->epsilon,
                            params->delta));

  int printed = 0;
  auto progress = [&](const v1::JobStatus& st) {
    while (printed < st.hua().iterations_size()) {
      const v1::HuaIterationRecord& r = st.hua().iterations(printed++);
      std::cerr << absl::StrFormat(
          "iteration %4d/%d  %7.2fs  users %3d  items %4d  passes %d  dropped %d\n", r.iteration(),
          params->iterations, absl::ToDoubleSeconds(absl::Now() - start), r.users(),
          r.items_updated(), r.passes(), r.dropped_users());
    }
  };
  auto st = c.WaitJob(*job_id, absl::Seconds(d.timeout_seconds), progress);
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  if (!st.ok()) return Report("fedmf demo", RuntimeError(st.status()));
  if (st->state() != v1::JOB_STATE_FINISHED) {
    return Report("fedmf demo", absl::AbortedError("job failed: " + st->error()));
  }
  c.StopAll();

  // The non-private baseline from the same U(0), V(0) (as `fedmf train`).
  const random::Csprng root = random::Csprng::FromSeed(split_seed);
  const hua::Profiles init =
      hua::InitialProfiles(root, split.num_users(), split.num_items(), params->dim);
  const hua::Profiles base = hua::TrainNonPrivate(by_user, init, *params);
  const mf::ErrorMetrics b = mf::Evaluate(split.test, base.u, base.v, dataset->range);
  auto plan = hua::PlanPrivacy(*params, dataset->range);
  if (!plan.ok()) return Report("fedmf demo", RuntimeError(plan.status()));
  PrintHuaResult(a, *params, *plan, st->hua(), b, hosts, seconds);
  return 0;
}

}  // namespace fedmf::cli
