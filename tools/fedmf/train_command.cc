#include "tools/fedmf/train_command.h"

#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "common/data/loaders.h"
#include "common/fmf/simulator.h"
#include "tools/fedmf/cli_util.h"

namespace fedmf::cli {
namespace {

struct TrainArgs {
  std::string setting = "hfl";
  std::string data = "synthetic";
  int32_t parties = 5;
  std::string epsilon = "1";
  double delta = 1e-5;
  std::string granularity = "rating";
  int32_t theta = 0;
  int32_t rounds = 100;
  int32_t local_iters = 10;
  int32_t dim = 20;
  double sample_rate = 0.01;
  std::optional<uint64_t> seed;
  bool json = false;
  std::string split = "";           // local: vertical | horizontal
  std::string vfl_split = "random";
  int32_t kappa = 100;
  double lr = 0;
  double lr_final_ratio = 0.1;
  double sgd_lr = 0.01;
  double sgd_l2 = 0.05;
  int32_t pretrain_epochs = 20;
  int32_t finetune_epochs = 20;
  int32_t central_epochs = 40;
  int32_t eval_every = 10;
  bool quiet = false;
};

absl::StatusOr<fmf::JobConfig> BuildConfig(const TrainArgs& a, const data::Dataset& dataset) {
  fmf::JobConfig c;
  auto setting = fmf::ParseSetting(a.setting);
  if (!setting.ok()) return setting.status();
  c.setting = *setting;
  switch (c.setting) {
    case fmf::Setting::kCentral: c.split = fmf::SplitKind::kNone; break;
    case fmf::Setting::kVfl: c.split = fmf::SplitKind::kVertical; break;
    case fmf::Setting::kHfl:
    case fmf::Setting::kHflSynSgd: c.split = fmf::SplitKind::kHorizontal; break;
    case fmf::Setting::kLocal:
      if (a.split == "vertical") c.split = fmf::SplitKind::kVertical;
      else if (a.split == "horizontal") c.split = fmf::SplitKind::kHorizontal;
      else return absl::InvalidArgumentError(
          "--setting local needs --split vertical (DP-SGD, compare with vfl) or --split "
          "horizontal (non-private, compare with hfl)");
      break;
  }
  auto eps = ParseEpsilon(a.epsilon, "--epsilon");
  if (!eps.ok()) return eps.status();
  c.epsilon = *eps;
  auto gran = fmf::ParseGranularity(a.granularity);
  if (!gran.ok()) return gran.status();
  c.granularity = *gran;
  c.delta = a.delta;
  c.theta = a.theta;
  c.rounds = a.rounds;
  c.local_iters = a.local_iters;
  c.dim = a.dim;
  c.sample_rate = a.sample_rate;
  c.seed = a.seed;
  c.vfl_finetune_iters = a.kappa;
  c.learning_rate = a.lr;
  c.lr_final_ratio = a.lr_final_ratio;
  c.sgd_learning_rate = a.sgd_lr;
  c.sgd_l2 = a.sgd_l2;
  c.pretrain_epochs = a.pretrain_epochs;
  c.finetune_epochs = a.finetune_epochs;
  c.central_epochs = a.central_epochs;
  c.rating_max = dataset.range.max;
  c.job_id = "train-" + a.setting;
  if (auto s = fmf::ValidateJobConfig(c); !s.ok()) return s;
  return c;
}

nlohmann::json ResultJson(const fmf::SimulationResult& r, const std::string& data_spec) {
  nlohmann::json parties = nlohmann::json::array();
  for (const auto& p : r.parties) {
    parties.push_back({{"party", p.party},
                       {"users", p.users},
                       {"items", p.items},
                       {"train_ratings", p.train_ratings},
                       {"test_ratings", p.test.count},
                       {"test_mse", p.test.mse},
                       {"test_rmse", p.test.rmse},
                       {"epsilon", JsonNumber(p.epsilon)},
                       {"steps", p.steps}});
  }
  return {{"setting", fmf::SettingName(r.config.setting)},
          {"split", fmf::SplitKindName(r.config.split)},
          {"data", data_spec},
          {"granularity", fmf::GranularityName(r.config.granularity)},
          {"theta", r.plan.theta},
          {"test_mse", r.test.mse},
          {"test_rmse", r.test.rmse},
          {"test_mae", r.test.mae},
          {"train_mse", r.train.mse},
          {"epsilon", JsonNumber(r.epsilon)},
          {"epsilon_target", JsonNumber(r.config.epsilon)},
          {"delta", r.config.delta},
          {"noise_multiplier", r.plan.noise_multiplier},
          {"steps", r.plan.steps},
          {"sample_rate", r.config.sample_rate},
          {"rounds", r.rounds},
          {"local_iters", r.config.EffectiveLocalIters()},
          {"dim", r.config.dim},
          {"learning_rate", r.config.EffectiveLearningRate()},
          {"parties", static_cast<int>(r.parties.size())},
          {"seconds", r.seconds},
          {"per_party", parties}};
}

void PrintSummary(const fmf::SimulationResult& r) {
  std::cout << absl::StrFormat("\n%-6s %7s %7s %9s %9s %9s %10s\n", "party", "users", "items",
                               "train", "test", "test MSE", "epsilon");
  for (const auto& p : r.parties) {
    std::cout << absl::StrFormat("%-6d %7d %7d %9d %9d %9.4f %10s\n", p.party, p.users, p.items,
                                 p.train_ratings, p.test.count, p.test.mse,
                                 std::isinf(p.epsilon) ? "inf" : absl::StrFormat("%.4f", p.epsilon));
  }
  std::cout << absl::StrFormat(
      "\n%s (%s split, %s-level): test MSE %.4f, RMSE %.4f over %d ratings; epsilon %s at delta "
      "%g (z = %.4f, %d DP steps); %d parties, %d rounds, %.1f s\n",
      fmf::SettingName(r.config.setting), fmf::SplitKindName(r.config.split),
      fmf::GranularityName(r.config.granularity), r.test.mse, r.test.rmse, r.test.count,
      std::isinf(r.epsilon) ? "inf" : absl::StrFormat("%.4f", r.epsilon), r.config.delta,
      r.plan.noise_multiplier, r.plan.steps, static_cast<int>(r.parties.size()), r.rounds,
      r.seconds);
}

int RunTrain(const TrainArgs& a) {
  auto dataset = data::LoadDataSpec(a.data);
  if (!dataset.ok()) {
    std::cerr << "fedmf train: --data: " << dataset.status().message() << "\n";
    return 2;
  }
  auto config = BuildConfig(a, *dataset);
  if (!config.ok()) {
    std::cerr << "fedmf train: " << config.status().message() << "\n";
    return 2;
  }
  fmf::FederationOptions fed;
  fed.parties = config->split == fmf::SplitKind::kNone ? 1 : a.parties;
  fed.vfl_split = a.vfl_split;
  fed.split_seed = a.seed.value_or(1);
  fed.test_fraction = config->test_fraction;
  auto federation = fmf::BuildFederationFromSpec(*config, *dataset, a.data, fed);
  if (!federation.ok()) {
    std::cerr << "fedmf train: " << federation.status().message() << "\n";
    return 2;
  }
  fmf::ProgressFn progress;
  if (!a.quiet) {
    progress = [](const fmf::RoundProgress& p) {
      std::cerr << absl::StrFormat("round %4d/%d  %7.2fs  epsilon %-8s  test MSE %s\n", p.round,
                                   p.total_rounds, p.seconds,
                                   p.epsilon > 0 ? absl::StrFormat("%.4f", p.epsilon) : "-",
                                   p.test_mse ? absl::StrFormat("%.4f", *p.test_mse) : "-");
    };
  }
  auto result = fmf::Simulate(*config, *federation, progress, a.eval_every);
  if (!result.ok()) {
    std::cerr << "fedmf train: " << result.status().message() << "\n";
    return 1;
  }
  if (a.json) {
    std::cout << ResultJson(*result, a.data).dump() << "\n";
  } else {
    PrintSummary(*result);
  }
  return 0;
}

}  // namespace

void RegisterTrainCommand(CLI::App& app, int* exit_code) {
  auto a = std::make_shared<TrainArgs>();
  CLI::App* cmd = app.add_subcommand("train", "run a whole federation in one process");
  cmd->add_option("--setting", a->setting, "central | local | vfl | hfl | hfl-synsgd")
      ->capture_default_str();
  cmd->add_option("--data", a->data, "movielens:PATH | csv:PATH | synthetic[:key=value,...]")
      ->capture_default_str();
  cmd->add_option("--parties", a->parties, "number of parties s")->capture_default_str()
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--epsilon", a->epsilon, "per-party epsilon, or inf")->capture_default_str();
  cmd->add_option("--delta", a->delta, "delta")->capture_default_str();
  cmd->add_option("--granularity", a->granularity, "rating | user")->capture_default_str();
  cmd->add_option("--theta", a->theta, "per-user trimming bound (0: VFL 5, HFL 10)")
      ->capture_default_str();
  cmd->add_option("--T", a->rounds, "synchronization rounds T")->capture_default_str();
  cmd->add_option("--T-local", a->local_iters, "local iterations per round T'")
      ->capture_default_str();
  cmd->add_option("--dim", a->dim, "embedding dimension p")->capture_default_str();
  cmd->add_option("--sample-rate", a->sample_rate, "user sampling rate eta")
      ->capture_default_str();
  cmd->add_option("--seed", a->seed, "seed for a reproducible run (default: OS entropy)");
  cmd->add_flag("--json", a->json, "print one JSON object");
  cmd->add_option("--split", a->split, "local only: vertical | horizontal");
  cmd->add_option("--vfl-split", a->vfl_split, "random | genre (ML-100K u.item)")
      ->capture_default_str();
  cmd->add_option("--kappa", a->kappa, "VFL Stage 3 DP iterations")->capture_default_str();
  cmd->add_option("--lr", a->lr, "DP learning rate (0: setting default)")->capture_default_str();
  cmd->add_option("--lr-final-ratio", a->lr_final_ratio, "final/initial DP learning rate")
      ->capture_default_str();
  cmd->add_option("--sgd-lr", a->sgd_lr, "non-private SGD learning rate")->capture_default_str();
  cmd->add_option("--sgd-l2", a->sgd_l2, "non-private SGD L2")->capture_default_str();
  cmd->add_option("--pretrain-epochs", a->pretrain_epochs, "HFL Stage 1 epochs")
      ->capture_default_str();
  cmd->add_option("--finetune-epochs", a->finetune_epochs, "HFL Stage 3 epochs")
      ->capture_default_str();
  cmd->add_option("--central-epochs", a->central_epochs, "central / HFL local-only epochs")
      ->capture_default_str();
  cmd->add_option("--eval-every", a->eval_every, "test MSE every N rounds in progress lines")
      ->capture_default_str();
  cmd->add_flag("--quiet", a->quiet, "no progress lines");
  cmd->callback([a, exit_code] { *exit_code = RunTrain(*a); });
}

}  // namespace fedmf::cli
