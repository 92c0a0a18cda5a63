#include "tools/fedmf/demo_command.h"

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <iostream>
#include <memory>
#include <numeric>
#include <optional>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/cli/command_line.h"
#include "common/data/loaders.h"
#include "common/dp/composition.h"
#include "common/fmf/noise_plan.h"
#include "common/fmf/wire/job_codec.h"
#include "common/net/job_view.h"
#include "tools/cluster/exit_cleanup.h"
#include "tools/cluster/local_cluster.h"
#include "tools/fedmf/accounting_json.h"
#include "tools/fedmf/cli_util.h"
#include "tools/fedmf/comparison.h"
#include "tools/fedmf/demo_ranking.h"
#include "tools/fedmf/hua_demo.h"
#include "tools/fedmf/job_flags.h"
#include "tools/fedmf/job_progress.h"
#include "tools/fedmf/lfl_demo.h"
#include "tools/fedmf/train_data.h"

namespace fedmf::cli {
namespace {

struct DemoArgs {
  JobFlags job;
  bool keep = false;
  bool insecure = false;
  double timeout_seconds = 1800;
  double round_deadline_seconds = 60;
  bool rounds_given = false;  // lfl defaults to kLflDemoRounds unless --T is given
  bool dashboard = false;     // serve fedmf-server's dashboard; stay up after the job
  int64_t devices = 0;        // lfl: the first N users are devices (0: all)
  bool devices_given = false;
  bool small_coupling = false;  // coupling: kCouplingDemoEpochs (the bare demo)
};

// coupling without --data and --coupling-epochs: the demo's epochs (every
// step sends the dense couplings' gradients, ~2 MB per party on the embedded
// data): about a minute on 2 cores. fedmf train's default, the paper-size
// run, is JobFlags' coupling_epochs.
constexpr int32_t kCouplingDemoEpochs = 2;

// A --party-data spec with its path made absolute: the party processes run
// from their own configs in the work directory.
std::string AbsoluteDataSpec(const std::string& spec) {
  const size_t colon = spec.find(':');
  if (colon == std::string::npos) return spec;
  return absl::StrCat(spec.substr(0, colon + 1),
                      std::filesystem::absolute(spec.substr(colon + 1)).string());
}

// What RunDemo's steps hand on. Each step that fails prints why and returns
// the exit code (0 = go on).
struct DemoJob {
  std::optional<TrainData> partners;  // --party-data: the partners' own files
  // --compare with --data: the split the parties train on, loaded once here.
  std::optional<data::Federation> split;
  fmf::JobConfig config;
  fmf::NoisePlan plan;
  data::RatingRange range;
};

struct DemoOutcome {
  v1::JobStatus status;
  double seconds = 0;
  double mse = NAN;  // over the parties' reported test ratings
  int64_t count = 0;
  double epsilon = INFINITY;
  std::optional<double> eps_user_global;  // VFL per user: the parties' curves composed
  std::optional<Comparison> comparison;   // --compare
  std::optional<DemoRanking> ranking;     // hfl, vfl, hfl-synsgd: the parties' top-N
};

// lfl: device hosts = --parties; the round deadline bounds each
// secure-aggregation phase.
int RunLflDemoFromArgs(DemoArgs& a) {
  LflDemoArgs l;
  l.hosts = a.job.parties;
  l.keep = a.keep;
  l.insecure = a.insecure;
  l.timeout_seconds = a.timeout_seconds;
  l.phase_deadline_seconds = a.round_deadline_seconds;
  l.rounds_given = a.rounds_given;
  l.devices = a.devices;
  l.devices_given = a.devices_given;
  return RunLflDemo(a.job, l);
}

// hua-s3: device hosts = --parties; the round deadline bounds a
// mid-iteration dropout's wait.
int RunHuaDemoFromArgs(DemoArgs& a) {
  HuaDemoArgs h{a.job.parties, a.keep, a.insecure, a.timeout_seconds, a.round_deadline_seconds};
  return RunHuaDemo(a.job, h);
}

// The data, the job config and its noise plan. --party-data: each party
// process reads its own file and the daemons align them as partners would
// (HFL by the --catalogue's digest, VFL by the private set intersection). The
// files are checked here first, by the same loader fedmf train uses, so a bad
// file fails before any process.
int PrepareDemoJob(DemoArgs& a, DemoJob* job) {
  absl::StatusOr<fmf::JobConfig> config;
  if (!a.job.party_data.empty()) {
    if (a.job.setting != SettingKind::kVfl && a.job.catalogue.empty()) {
      return Report("fedmf demo",
                    absl::InvalidArgumentError(absl::StrCat(
                        "--party-data with --setting ", SettingName(a.job.setting),
                        " needs --catalogue FILE: the parties map their items into one catalogue "
                        "file each of them holds (fedmf train defaults to the files' union)")));
    }
    auto loaded = LoadTrainData(a.job);
    if (!loaded.ok()) {
      return Report("fedmf demo", loaded.status());
    }
    for (const std::string& warning : loaded->warnings) std::cerr << warning << "\n";
    job->partners = std::move(*loaded);
    a.job.parties = static_cast<int>(a.job.party_data.size());
    config = job->partners->config;
    job->range = job->partners->federation.range;
  } else if (a.job.setting != SettingKind::kCoupling) {
    // The split itself, as fedmf train draws it: the --compare baselines
    // train on it, and the parties' models are ranked against it.
    auto loaded = LoadTrainData(a.job);
    if (!loaded.ok()) {
      return Report("fedmf demo", loaded.status());
    }
    config = loaded->config;
    job->range = loaded->federation.range;
    job->split = std::move(loaded->federation);
  } else {
    auto dataset = LoadWithDeclaredRange(a.job, a.job.data);
    if (!dataset.ok()) {
      return Report("fedmf demo: --data", dataset.status());
    }
    job->range = dataset->range;
    config = BuildJobConfig(a.job, job->range);
  }
  if (!config.ok()) {
    return Report("fedmf demo", UsageError(config.status()));
  }
  auto plan = fmf::PlanNoise(*config);
  if (!plan.ok()) {
    return Report("fedmf demo", UsageError(plan.status()));
  }
  job->config = *config;
  job->plan = *plan;
  return 0;
}

// fedmf-server and one fedmf-party per party, in a fresh work directory;
// returns once the server listens and the parties are spawned.
int StartDemoCluster(const DemoArgs& a, const DemoJob& job,
                     std::unique_ptr<cluster::LocalCluster>* cluster_out) {
  cluster::ClusterOptions options;
  options.parties = a.job.parties;
  options.data_spec = a.job.data;
  options.role = job.config.split == fmf::SplitKind::kVertical ? "vfl" : "hfl";
  options.split_seed = a.job.seed.value_or(1);
  options.test_fraction = job.config.test_fraction;
  options.seed = a.job.seed;  // to the processes the demo starts, not in the job
  options.local_threads = a.job.threads;
  options.rating_min = job.range.min;
  options.rating_max = job.range.max;
  options.vfl_split = a.job.vfl_split;
  options.keep_work_dir = a.keep;
  options.insecure = a.insecure;
  options.dashboard = a.dashboard;
  for (int k = 0; k < options.parties; ++k) {
    cluster::PartyOptions p;
    p.max_epsilon = job.config.private_training() ? std::max(10.0, job.config.epsilon) : 10.0;
    if (job.partners) {
      p.own_file = true;
      p.data_spec = AbsoluteDataSpec(a.job.party_data[k]);
      if (!a.job.catalogue.empty())
        p.catalogue = std::filesystem::absolute(a.job.catalogue).string();
    }
    options.party_overrides[k] = p;
  }
  auto cluster = cluster::LocalCluster::Create(options);
  if (!cluster.ok()) {
    return Report("fedmf demo", RuntimeError(cluster.status()));
  }
  std::cerr << absl::StrFormat("demo: work dir %s (logs in logs/), CA in certs/\n",
                               (*cluster)->work_dir());
  if (auto s = (*cluster)->StartServer(); !s.ok()) {
    return Report("fedmf demo: server", RuntimeError(s));
  }
  std::vector<int> parties(options.parties);
  std::iota(parties.begin(), parties.end(), 0);
  if (auto s = (*cluster)->SpawnParties(parties); !s.ok()) {
    return Report("fedmf demo", RuntimeError(s));
  }
  *cluster_out = std::move(*cluster);
  return 0;
}

// Waits until every party wrote its admin port (StartDemoCluster only
// spawned them, so that the job could be submitted meanwhile).
int AwaitDemoParties(const DemoArgs& a, cluster::LocalCluster& cluster) {
  std::vector<int> parties(a.job.parties);
  std::iota(parties.begin(), parties.end(), 0);
  if (auto s = cluster.AwaitParties(parties); !s.ok()) {
    return Report("fedmf demo", RuntimeError(s));
  }
  std::cerr << absl::StrFormat("demo: fedmf-server on 127.0.0.1:%d, %d parties started (%s)\n",
                               cluster.server_port(), a.job.parties,
                               a.insecure ? "INSECURE" : "mTLS");
  if (a.dashboard) {
    std::cerr << absl::StrFormat("demo: dashboard on http://127.0.0.1:%d/\n",
                                 cluster.server_dashboard_port());
  }
  return 0;
}

// The job the demo submits: the config, the roster of the started parties
// and, for partners' files, how the daemons align them.
v1::JobSpec DemoSpec(const DemoArgs& a, const DemoJob& job) {
  v1::JobSpec spec = net::SpecFromJobConfig(job.config);
  for (int k = 0; k < a.job.parties; ++k) spec.add_roster(cluster::LocalCluster::PartyName(k));
  spec.set_round_deadline_seconds(a.round_deadline_seconds);
  spec.set_min_parties(1);
  if (job.partners && job.config.split == fmf::SplitKind::kVertical) spec.set_align_users(true);
  if (job.partners && job.partners->join && job.partners->join->contains("catalogue_digest")) {
    spec.set_item_catalogue((*job.partners->join)["catalogue_digest"].get<std::string>());
  }
  return spec;
}

// Waits for the job, printing each round (and a progress bar on a terminal).
int FollowDemoJob(const DemoArgs& a, cluster::LocalCluster& cluster, const std::string& job_id,
                  v1::JobStatus* final_out) {
  RoundFollower rounds;
  const bool terminal = !a.job.quiet && isatty(STDERR_FILENO) != 0;
  auto progress = [&](const v1::JobStatus& st) {
    if (a.job.quiet) return;
    if (terminal) std::cerr << "\r\033[K";  // the progress bar is redrawn below the lines
    rounds.Follow(st,
                  [&](int i, double elapsed) { std::cerr << RoundLine(st, i, elapsed) << "\n"; });
    if (terminal) std::cerr << ProgressBar(ProgressOf(st)) << std::flush;
  };
  // Quiet, only the job's end matters: the server is asked to answer on a
  // change of state alone, not at every round.
  auto final_status = cluster.WaitJob(job_id, absl::Seconds(a.timeout_seconds), progress,
                                      /*each_round=*/!a.job.quiet);
  if (terminal) std::cerr << "\r\033[K" << std::flush;
  if (!final_status.ok()) {
    return Report("fedmf demo", RuntimeError(final_status.status()));
  }
  if (final_status->state() != v1::JOB_STATE_FINISHED) {
    return Report("fedmf demo", absl::AbortedError("job failed: " + final_status->error()));
  }
  *final_out = std::move(*final_status);
  return 0;
}

// The federation's test MSE (weighted by the parties' test ratings) and ε.
int SummarizeDemo(const DemoJob& job, DemoOutcome* o) {
  double weighted = 0, eps_max = 0;
  for (const v1::PartyStatus& p : o->status.parties()) {
    if (p.test_count() > 0) {
      weighted += p.test_mse() * p.test_count();
      o->count += p.test_count();
    }
    eps_max = std::max(eps_max, p.job_epsilon());
  }
  o->mse = o->count > 0 ? weighted / o->count : NAN;
  o->epsilon = job.config.private_training() ? eps_max : INFINITY;
  // VFL per user: every party holds part of each user's ratings, so the
  // global per-user epsilon composes the parties' RDP curves. A party charges
  // at most the plan's steps (fewer if it missed rounds): an upper bound.
  if (job.config.private_training() && job.config.setting == fmf::Setting::kVfl &&
      job.config.granularity == fmf::Granularity::kUser) {
    std::vector<dp::GaussianSchedule> schedules;
    for (const v1::PartyStatus& p : o->status.parties()) {
      if (!p.accepted()) continue;
      schedules.push_back({job.plan.sample_rate, job.plan.noise_multiplier, job.plan.steps});
      schedules.push_back({1.0, job.plan.count_noise_multiplier, 1});  // its size release
    }
    auto g = dp::ComposeGaussianSchedules(schedules, job.config.delta);
    if (!g.ok()) {
      return Report("fedmf demo", RuntimeError(g.status()));
    }
    o->eps_user_global = *g;
  }
  return 0;
}

// --compare: the baselines on the split the parties trained on (the one
// fedmf train draws from the same flags, loaded by PrepareDemoJob), in this
// process.
int CompareDemo(const DemoJob& job, DemoOutcome* o) {
  const data::Federation& federation = job.partners ? job.partners->federation : *job.split;
  auto c = RunComparison(job.config, federation, o->mse);
  if (!c.ok()) {
    return Report("fedmf demo: --compare", RuntimeError(c.status()));
  }
  o->comparison = std::move(*c);
  return 0;
}

void PrintDemoJson(const DemoArgs& a, const DemoJob& job, const v1::JobSpec& spec,
                   const DemoOutcome& o) {
  const v1::JobStatus& st = o.status;
  nlohmann::json history = nlohmann::json::array();
  for (const v1::RoundRecord& r : st.rounds()) history.push_back(RoundJson(r));
  nlohmann::json parties = nlohmann::json::array();
  for (const v1::PartyStatus& p : st.parties()) {
    // A party that does not opt in to report_metrics sends none: null.
    parties.push_back(
        {{"party", p.name()},
         {"test_mse", p.test_mse() >= 0 ? nlohmann::json(p.test_mse()) : nlohmann::json(nullptr)},
         {"test_ratings", p.test_count()},
         {"epsilon",
          job.config.private_training() ? JsonNumber(p.job_epsilon()) : JsonNumber(INFINITY)},
         {"bytes_up", p.bytes_up()},
         {"bytes_down", p.bytes_down()}});
  }
  nlohmann::json j = {{"setting", SettingName(a.job.setting)},
                      {"data", a.job.data},
                      {"test_mse", o.mse},
                      {"test_rmse", std::sqrt(o.mse)},
                      {"epsilon", JsonNumber(o.epsilon)},
                      {"delta", job.config.delta},
                      {"rounds", st.rounds_size()},
                      {"parties", st.parties_size()},
                      {"seconds", o.seconds},
                      {"per_party", parties},
                      {"history", history}};
  // sampling_unit, sample_rate, noise_multiplier, steps and how epsilon
  // composes them: every party recomputes this plan from the job (issue #54).
  AddFmfAccounting(job.config, job.plan, st.parties_size(), j);
  if (o.eps_user_global) j["epsilon_per_user_global"] = JsonNumber(*o.eps_user_global);
  if (job.partners && job.partners->join) {
    j["data"] = job.partners->label;
    j["party_data"] = a.job.party_data;
    // (The join's details are fedmf train's in-process check; the
    // daemons aligned the data themselves, to the same sizes.)
    for (const char* key : {"shared_items", "shared_users"}) {
      if (job.partners->join->contains(key)) j[key] = (*job.partners->join)[key];
    }
    if (spec.align_users()) j["shared_users"] = st.aligned_users();  // the daemons' own
    if (!job.partners->warnings.empty()) j["warnings"] = job.partners->warnings;
  }
  if (o.ranking && o.ranking->model.users > 0) {
    j["ranking"] = RankingJson(o.ranking->model);
    j["ranking_most_popular"] = RankingJson(o.ranking->most_popular);
  }
  if (o.comparison) {
    AddComparisonJson(*o.comparison, j);
    AddRankingComparisonJson(*o.comparison, j);
  }
  std::cout << j.dump() << "\n";
}

void PrintDemoTable(const DemoArgs& a, const DemoJob& job, const v1::JobSpec& spec,
                    const DemoOutcome& o) {
  const v1::JobStatus& st = o.status;
  const bool priv = job.config.private_training();
  std::cout << absl::StrFormat("\n%-10s %10s %10s %10s %12s %12s\n", "party", "test MSE", "ratings",
                               "epsilon", "bytes up", "bytes down");
  for (const v1::PartyStatus& p : st.parties()) {
    std::cout << absl::StrFormat(
        "%-10s %10s %10d %10s %12d %12d\n", p.name(),
        p.test_mse() >= 0 ? absl::StrFormat("%.4f", p.test_mse()) : std::string("-"),
        p.test_count(), priv ? absl::StrFormat("%.4f", p.job_epsilon()) : std::string("inf"),
        p.bytes_up(), p.bytes_down());
  }
  std::cout << absl::StrFormat(
      "\n%s over %d real processes: test MSE %.4f (RMSE %.4f) over %d ratings; epsilon %s at "
      "delta %g (z = %.4f); %d rounds in %.1f s\n",
      SettingName(a.job.setting), st.parties_size(), o.mse, std::sqrt(o.mse), o.count,
      priv ? absl::StrFormat("%.4f", o.epsilon) : std::string("inf"), job.config.delta,
      job.plan.noise_multiplier, st.rounds_size(), o.seconds);
  if (o.eps_user_global) {
    std::cout << absl::StrFormat("per-user epsilon over all parties (RDP curves composed): %.4f\n",
                                 *o.eps_user_global);
  }
  // The join of the partners' files (the daemons aligned them themselves;
  // an intersection is unique, so its size is the one checked here first).
  if (job.partners) {
    for (const std::string& note : job.partners->notes) std::cout << note << "\n";
    for (const std::string& warning : job.partners->warnings) std::cout << warning << "\n";
    if (spec.align_users()) {
      std::cout << absl::StrFormat("the daemons' private set intersection: %d users\n",
                                   st.aligned_users());
    }
  }
  if (o.ranking && o.ranking->model.users > 0) {
    PrintRanking(o.ranking->model, o.ranking->most_popular);
  }
  if (o.comparison) {
    PrintComparison(*o.comparison, absl::StrCat(SettingName(a.job.setting), " over the daemons"),
                    o.mse);
    if (o.ranking && o.ranking->model.users > 0) {
      PrintRankingComparison(*o.comparison, o.ranking->model, o.ranking->most_popular);
    }
  }
}

// hfl, vfl, hfl-synsgd and coupling: fedmf-server and --parties
// fedmf-party processes.
int RunFmfDemo(DemoArgs& a) {
  const absl::Time start = absl::Now();
  if (a.job.setting == SettingKind::kCoupling && !a.job.party_data.empty()) {
    return Report("fedmf demo",
                  absl::InvalidArgumentError(
                      "--setting coupling splits one --data file among the owners (its model "
                      "indexes users and items by their positions there); --party-data is for "
                      "hfl and vfl"));
  }
  DemoJob job;
  if (int code = PrepareDemoJob(a, &job); code != 0) return code;
  if (a.small_coupling) {
    std::cerr << absl::StrFormat(
        "demo: %d epochs (%d DP steps) by default, to show the protocol in about a minute; the "
        "paper-size run (~8 min on 2 cores, ~4 GB up per party): fedmf demo --setting coupling "
        "--coupling-epochs %d\n",
        a.job.coupling_epochs, job.config.rounds, JobFlags().coupling_epochs);
  }
  std::unique_ptr<cluster::LocalCluster> cluster;
  if (int code = StartDemoCluster(a, job, &cluster); code != 0) return code;
  const v1::JobSpec spec = DemoSpec(a, job);
  // Submitted while the parties start: each is offered the job as soon as it
  // registers, and the job waits for every roster party's answer, so the
  // first parties' admission overlaps the last ones' start.
  auto job_id = cluster->SubmitJob(spec);
  if (!job_id.ok()) {
    return Report("fedmf demo: submit", RuntimeError(job_id.status()));
  }
  if (a.dashboard) {  // watchable from its first round: the page reloads while the job runs
    std::cerr << absl::StrFormat("demo: the job's page: http://127.0.0.1:%d/jobs/%s\n",
                                 cluster->server_dashboard_port(), *job_id);
  }
  if (int code = AwaitDemoParties(a, *cluster); code != 0) return code;
  DemoOutcome outcome;
  if (int code = FollowDemoJob(a, *cluster, *job_id, &outcome.status); code != 0) return code;
  outcome.seconds = absl::ToDoubleSeconds(absl::Now() - start);
  if (int code = SummarizeDemo(job, &outcome); code != 0) return code;
  if (a.job.setting != SettingKind::kCoupling) {
    const data::Federation& split = job.partners ? job.partners->federation : *job.split;
    auto ranking = MeasureDemoRanking(*cluster, a.insecure, split, outcome.status);
    if (!ranking.ok()) {
      return Report("fedmf demo: top-N", RuntimeError(ranking.status()));
    }
    for (const std::string& why : ranking->left_out) {
      std::cerr << "fedmf demo: top-N not measured for " << why << "\n";
    }
    outcome.ranking = std::move(*ranking);
  }
  if (a.job.compare) {
    job.config.measure_ranking = true;  // the baselines' top-N beside the parties'
    if (int code = CompareDemo(job, &outcome); code != 0) return code;
  }
  if (!a.job.plot.empty()) {
    std::vector<plot::LineChart> charts = net::JobRoundCharts(outcome.status);
    if (outcome.comparison) {  // the baselines pooled over the parties' test ratings
      charts[0].title = "test MSE per party; dashed: baselines on all parties' ratings";
      charts[0].references = {{"local only", outcome.comparison->mse_local},
                              {"central", outcome.comparison->mse_central}};
    }
    if (auto s = WritePlot(a.job.plot, charts); !s.ok()) {
      return Report("fedmf demo", RuntimeError(s));
    }
    std::cerr << "per-round plot written to " << a.job.plot << "\n";
  }
  if (a.job.json) {
    PrintDemoJson(a, job, spec, outcome);
  } else {
    PrintDemoTable(a, job, spec, outcome);
  }
  if (a.dashboard) {
    std::cout << std::flush;
    std::cerr << absl::StrFormat(
        "demo: the job's page: http://127.0.0.1:%d/jobs/%s (serving until Ctrl-C)\n",
        cluster->server_dashboard_port(), *job_id);
    cluster::AwaitInterrupt();  // this one signal ends the wait; a second one ends the process
    std::cerr << "demo: stopping the federation\n";
  }
  return 0;
}

// How `fedmf demo` runs each setting over real daemons; --setting takes
// exactly these (the others run in one process: fedmf train). A new setting
// is one row (and its value in setting_kind.h).
struct DemoRunner {
  SettingKind setting;
  int (*run)(DemoArgs&);
};
constexpr DemoRunner kDemoRunners[] = {
    {SettingKind::kHfl, RunFmfDemo},           {SettingKind::kVfl, RunFmfDemo},
    {SettingKind::kHflSynSgd, RunFmfDemo},     {SettingKind::kLfl, RunLflDemoFromArgs},
    {SettingKind::kHuaS3, RunHuaDemoFromArgs}, {SettingKind::kCoupling, RunFmfDemo},
};

std::vector<SettingKind> DemoSettings() {
  std::vector<SettingKind> settings;
  for (const DemoRunner& r : kDemoRunners) settings.push_back(r.setting);
  return settings;
}

int RunDemo(DemoArgs& a) {
  const std::string setting = SettingName(a.job.setting);
  if ((!a.job.plot.empty() || a.dashboard) &&
      (a.job.setting == SettingKind::kLfl || a.job.setting == SettingKind::kHuaS3)) {
    return Report(
        "fedmf demo",
        absl::InvalidArgumentError(absl::StrCat(
            "--plot and --dashboard draw the rounds of hfl, vfl and hfl-synsgd, not ", setting)));
  }
  if (a.job.compare && !IsFederatedFmf(a.job.setting)) {
    return Report("fedmf demo",
                  absl::InvalidArgumentError(absl::StrCat(
                      "--compare runs the baselines of hfl, vfl and hfl-synsgd, not ", setting)));
  }
  for (const DemoRunner& r : kDemoRunners) {
    if (r.setting == a.job.setting) return r.run(a);
  }
  // A job file's setting (the command line takes only the table's).
  return Report("fedmf demo", absl::InvalidArgumentError(
                                  "--setting must be hfl, vfl, hfl-synsgd, lfl, hua-s3 or coupling "
                                  "(the others run in one process: fedmf train)"));
}

}  // namespace

void RegisterDemoCommand(CLI::App& app, int* exit_code) {
  auto a = std::make_shared<DemoArgs>();
  a->job.parties = 3;
  CLI::App* cmd =
      app.add_subcommand("demo", "run a real federation (server + parties) on loopback with mTLS");
  // Only the settings that run over real daemons (the others: fedmf train).
  AddJobFlags(cmd, &a->job, DemoSettings());
  cmd->get_option("--setting")
      ->description(
          "hfl | vfl | hfl-synsgd | lfl | hua-s3 | coupling (central, local, hua-s1, hua-s2, "
          "hua-s2-tp run in one process: fedmf train)");
  // Flags of the in-process runs only: not offered here, so the help is true
  // and giving one is a usage error (exit 2) instead of being ignored.
  for (const char* train_only : {"--split", "--eval-every"}) {
    cmd->remove_option(cmd->get_option(train_only));
  }
  cmd->add_flag("--keep", a->keep, "keep the work dir (certificates, configs, logs, databases)");
  cmd->add_flag("--insecure", a->insecure, "plaintext gRPC (no TLS)");
  cmd->add_option("--plot", a->job.plot,
                  "write test MSE, epsilon per party and round time per round as SVG (hfl, vfl, "
                  "hfl-synsgd)");
  cmd->add_flag("--dashboard", a->dashboard,
                "serve fedmf-server's web dashboard on a loopback port and keep the federation "
                "up after the job until Ctrl-C");
  cmd->add_option("--devices", a->devices,
                  absl::StrFormat("lfl: the first N users of the data are the devices (0: all; "
                                  "default: every user of a --data file, %d of the embedded data)",
                                  kLflDemoDevices));
  cmd->add_option("--timeout", a->timeout_seconds, "give up after this many seconds")
      ->capture_default_str();
  cmd->add_option("--round-deadline", a->round_deadline_seconds, "per-round deadline (s)")
      ->capture_default_str();
  cmd->callback([a, cmd, exit_code] {
    // Ctrl-C or SIGTERM stops the daemons and removes the work directory.
    cluster::InstallInterruptCleanup();
    if (auto s = ApplyJobFile(*cmd, a->job); !s.ok() || !(s = CheckFlagCombination(a->job)).ok()) {
      *exit_code = Report("fedmf demo", s);
      return;
    }
    a->devices_given = cmd->count("--devices") > 0;
    if (a->devices_given && a->job.setting != SettingKind::kLfl) {
      *exit_code =
          Report("fedmf demo", absl::InvalidArgumentError(absl::StrCat(
                                   "--devices is for --setting lfl (device hosts); ",
                                   SettingName(a->job.setting), " runs --parties parties")));
      return;
    }
    a->job.data_given = cmd->count("--data") > 0;
    // The bare demo (its embedded data) runs a small coupling job; a --data
    // file runs fedmf train's (the paper's) epochs unless given.
    a->small_coupling = a->job.setting == SettingKind::kCoupling &&
                        cmd->count("--coupling-epochs") == 0 && !a->job.data_given;
    if (a->small_coupling) a->job.coupling_epochs = kCouplingDemoEpochs;
    // hua-s3 defaults to the paper's d = 50, lfl to T = 10, unless set here or by the job file
    a->job.dim_given = cmd->count("--dim") > 0 || a->job.job_file_keys.contains("dim");
    a->rounds_given = cmd->count("--T") > 0 || a->job.job_file_keys.contains("rounds");
    *exit_code = RunDemo(*a);
  });
}

}  // namespace fedmf::cli
