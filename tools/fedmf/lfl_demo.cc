#include "tools/fedmf/lfl_demo.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/base/status_macros.h"
#include "common/cli/command_line.h"
#include "common/data/loaders.h"
#include "tools/cluster/local_cluster.h"
#include "tools/fedmf/cli_util.h"
#include "tools/fedmf/job_flags.h"

namespace fedmf::cli {

absl::StatusOr<net::LflJobConfig> LflJobFromFlags(const JobFlags& a, const data::Dataset& dataset,
                                                  int hosts, double phase_deadline_seconds,
                                                  int64_t devices) {
  if (hosts < 1) return absl::InvalidArgumentError("--parties (device hosts) must be >= 1");
  if (devices < 0 || devices > dataset.num_users) {
    return absl::InvalidArgumentError(absl::StrCat("--devices ", devices, ": the data has ",
                                                   dataset.num_users, " users (0 = all of them)"));
  }
  net::LflJobConfig j;
  j.job_id = "demo-lfl";
  ASSIGN_OR_RETURN(j.config, LflConfigFromFlags(a, dataset.range.max));
  lfl::LflConfig& c = j.config;
  RETURN_IF_ERROR(lfl::ValidateLflConfig(c));
  j.num_items = dataset.num_items;
  j.phase_deadline_seconds = phase_deadline_seconds;
  j.complete_graph = a.aggregation == "secagg";
  j.active_secagg = !a.semi_honest_secagg;
  j.secagg_session = a.secagg_session;
  j.secagg_design_dropout = a.secagg_design_dropout;
  const int64_t n = devices > 0 ? devices : dataset.num_users;
  for (int k = 0; k < hosts; ++k) {
    const int64_t first = n * k / hosts, end = n * (k + 1) / hosts;
    if (end <= first) continue;
    v1::DeviceGrant g;
    g.set_host(cluster::LocalCluster::LflHostName(k));
    g.set_first_device(static_cast<uint64_t>(first));
    g.set_count(static_cast<uint32_t>(end - first));
    j.grants.push_back(g);
    j.num_devices += end - first;
  }
  // Round trip through the wire form: the server validates exactly this.
  return net::LflJobFromSpec(net::SpecFromLflJob(j));
}

namespace {

// Starts the server and one device host per grant of `job`.
absl::Status StartLflCluster(const JobFlags& a, const net::LflJobConfig& job, int threads_per_host,
                             cluster::LocalCluster& c) {
  RETURN_IF_ERROR(c.StartServer());
  for (const v1::DeviceGrant& g : job.grants) {
    const int k = static_cast<int>(&g - job.grants.data());
    // A seeded demo passes its seed to the hosts it starts (their --seed),
    // so they reproduce lfl::SimulateLfl; the job's seed never reaches them.
    cluster::LflHostArgs h{
        a.data,
        static_cast<int64_t>(g.first_device()),
        g.count(),
        a.dropout,
        a.seed.has_value() ? static_cast<int64_t>(*a.seed) : -1,
        "",
        threads_per_host,
        cluster::DemoDevicePolicyFlags(job.config.epsilon, job.config.iterations)};
    if (!job.active_secagg) h.policy_flags.push_back("--require-active-secagg=false");
    if (job.config.omega > 0.5) {
      h.policy_flags.push_back(absl::StrCat("--max-omega=", job.config.omega));
    }
    RETURN_IF_ERROR(c.StartLflHost(k, h));
  }
  return absl::OkStatus();
}

// Submits the job and prints one line per iteration until it ends.
absl::StatusOr<v1::JobStatus> FollowLflJob(const net::LflJobConfig& job, cluster::LocalCluster& c,
                                           double timeout_seconds) {
  ASSIGN_OR_RETURN(std::string id, c.SubmitJob(net::SpecFromLflJob(job)));
  int shown = 0;
  return c.WaitJob(id, absl::Seconds(timeout_seconds), [&](const v1::JobStatus& st) {
    const auto& its = st.lfl().iterations();
    for (; shown < its.size(); ++shown) {
      const v1::LflIterationRecord& r = its[shown];
      std::cerr << absl::StrFormat(
          "iteration %3d/%d  U1 %5d  U2 %5d  %6.2fs  %s%s\n", r.iteration() + 1, st.spec().rounds(),
          r.round1_survivors(), r.round2_survivors(), r.seconds(),
          r.skipped() ? "skipped (too few survivors) " : "",
          r.rejected_messages() > 0 ? absl::StrCat(r.rejected_messages(), " rejected") : "");
    }
  });
}

int64_t SkippedIterations(const v1::LflStatus& l) {
  int64_t skipped = 0;
  for (const auto& r : l.iterations()) skipped += r.skipped() ? 1 : 0;
  return skipped;
}

void PrintLflJson(const JobFlags& a, const net::LflJobConfig& job, const v1::LflStatus& l,
                  double seconds) {
  const int64_t skipped = SkippedIterations(l);
  nlohmann::json j = {{"setting", "lfl"},
                      {"data", a.data},
                      {"devices", l.registered()},
                      {"hosts", job.grants.size()},
                      {"stage1_test_mse", l.stage1_test_mse()},
                      {"test_mse", l.test_mse()},
                      {"test_rmse", std::sqrt(l.test_mse())},
                      {"test_count", l.test_count()},
                      {"epsilon", JsonNumber(l.epsilon())},
                      {"delta", job.config.delta},
                      {"sigma_v", l.sigma_v()},
                      {"noise_multiplier", l.noise_multiplier()},
                      {"server_view_noise_multiplier", l.server_view_noise_multiplier()},
                      {"iterations", l.iterations_size()},
                      {"skipped", skipped},
                      {"seconds", seconds}};
  std::cout << j.dump() << "\n";
}

void PrintLflTable(const net::LflJobConfig& job, const v1::LflStatus& l, double seconds) {
  const int64_t skipped = SkippedIterations(l);
  // Per-phase wall time on the server (phase opened -> closed: the devices'
  // work, the network and the server's processing), averaged over iterations.
  std::array<double, 10> phase{};  // slots 8, 9: the consistency checks (active secagg)
  double up = 0, down = 0;
  for (const auto& r : l.iterations()) {
    for (int p = 0; p < std::min(10, r.phase_seconds_size()); ++p) phase[p] += r.phase_seconds(p);
    up += static_cast<double>(r.upload_bytes()) / std::max<int64_t>(1, r.selected());
    down += static_cast<double>(r.download_bytes()) / std::max<int64_t>(1, r.selected());
  }
  const double iters = std::max(1, l.iterations_size());
  std::cerr << absl::StrFormat(
      "per iteration (mean): key agreement %.2f s, sharing %.2f s, masking %.2f s, unmasking %.2f "
      "s "
      "(round 1) + %.2f / %.2f / %.2f / %.2f s (round 2); consistency check %.2f + %.2f s; "
      "per device %.0f B up, %.0f B down\n",
      phase[0] / iters, phase[1] / iters, phase[2] / iters, phase[3] / iters, phase[4] / iters,
      phase[5] / iters, phase[6] / iters, phase[7] / iters, phase[8] / iters, phase[9] / iters,
      up / iters, down / iters);
  std::cout << absl::StrFormat("%-28s %12s\n", "LFL-SGDMF (real daemons)", "test MSE");
  std::cout << absl::StrFormat("%-28s %12.4f\n", "Stage 1 alone", l.stage1_test_mse());
  std::cout << absl::StrFormat("%-28s %12.4f\n", "after Stage 2 + Stage 3", l.test_mse());
  std::cout << absl::StrFormat(
      "%d devices, %d test ratings; epsilon %s (delta %g, sigma_v %.4g); %d iterations "
      "(%d skipped) in %.1f s\n",
      l.registered(), l.test_count(),
      std::isfinite(l.epsilon()) ? absl::StrFormat("%.4f", l.epsilon()) : std::string("inf"),
      job.config.delta, l.sigma_v(), l.iterations_size(), skipped, seconds);
}

}  // namespace

int RunLflDemo(const JobFlags& flags, const LflDemoArgs& args) {
  const absl::Time start = absl::Now();
  JobFlags a = flags;
  if (!args.rounds_given) a.rounds = kLflDemoRounds;
  if (a.aggregation == "ideal" || a.aggregation == "analytic") {
    return Report("fedmf demo",
                  absl::InvalidArgumentError(absl::StrCat(
                      "--aggregation ", a.aggregation, " runs in one process only (fedmf train)")));
  }

  auto dataset = LoadWithDeclaredRange(a, a.data);
  if (!dataset.ok()) return Report("fedmf demo: --data", dataset.status());
  // The bare demo (its embedded data) runs a small job; a --data file runs
  // every user as a device unless --devices says otherwise.
  const bool small = !args.devices_given && !a.data_given;
  const int64_t devices =
      small ? std::min<int64_t>(kLflDemoDevices, dataset->num_users) : args.devices;
  auto job = LflJobFromFlags(a, *dataset, args.hosts, args.phase_deadline_seconds, devices);
  if (!job.ok()) return Report("fedmf demo", job.status());  // the flags' job: usage
  // Without mTLS the hosts have no device certificate to certify their
  // devices' signing keys: the demo runs semi-honest secure aggregation and
  // its own hosts opt out of requiring the active variant.
  if (args.insecure) job->active_secagg = false;
  cluster::ClusterOptions options;
  options.parties = 0;
  options.lfl_hosts = args.hosts;
  // A host computing a phase for hundreds of devices on a shared core streams
  // its answers chunk by chunk; give it room before it counts as gone.
  options.liveness_seconds = 15;
  options.keep_work_dir = args.keep;
  options.insecure = args.insecure;
  auto cluster = cluster::LocalCluster::Create(options);
  if (!cluster.ok()) return Report("fedmf demo", RuntimeError(cluster.status()));
  cluster::LocalCluster& c = **cluster;
  std::cerr << absl::StrFormat(
      "demo: work dir %s (logs in logs/), CA in certs/; starting fedmf-server and %d device "
      "hosts\n",
      c.work_dir(), job->grants.size());
  if (auto s = StartLflCluster(a, *job, args.threads_per_host, c); !s.ok())
    return Report("fedmf demo: start", RuntimeError(s));
  std::cerr << absl::StrFormat(
      "LFL-SGDMF on %s: %d devices on %d hosts, %d items, T = %d, omega = %g, epsilon = %s, "
      "%s, dropout %s\n",
      a.data, job->num_devices, job->grants.size(), job->num_items, job->config.iterations,
      job->config.omega, a.epsilon, job->complete_graph ? "SecAgg" : "SecAgg+", a.dropout);
  if (small) {
    std::cerr << absl::StrFormat(
        "demo: a small job by default (%d of the %d users as devices), to show the protocol in "
        "about a minute; the paper-size run (every user a device, 15-30 min on 2 cores): fedmf "
        "demo --setting lfl --devices %d --T %d\n",
        job->num_devices, dataset->num_users, dataset->num_users, kLflDemoRounds);
  }
  auto final_status = FollowLflJob(*job, c, args.timeout_seconds);
  if (!final_status.ok()) return Report("fedmf demo", RuntimeError(final_status.status()));
  c.StopAll();
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  if (final_status->state() != v1::JOB_STATE_FINISHED) {
    return Report("fedmf demo", absl::AbortedError("job failed: " + final_status->error()));
  }
  if (a.json) {
    PrintLflJson(a, *job, final_status->lfl(), seconds);
  } else {
    PrintLflTable(*job, final_status->lfl(), seconds);
  }
  return 0;
}

}  // namespace fedmf::cli
