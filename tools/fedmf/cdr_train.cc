#include "tools/fedmf/cdr_train.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <string>

#include "absl/strings/str_format.h"
#include "common/base/status_macros.h"
#include "common/cdr/cross_domain_data.h"
#include "common/cdr/pipeline.h"
#include "common/cli/command_line.h"
#include "common/data/loaders.h"
#include "nlohmann/json.hpp"
#include "tools/fedmf/cli_util.h"

namespace fedmf::cli {
namespace {

// The --cdr-* options. They live here, not in JobFlags, so that the setting
// stays in its own files until `fedmf train` dispatches settings by table;
// `fedmf train` parses its command line once per process.
struct CdrFlags {
  int32_t steps = 300;
  int32_t batch = 64;
  int32_t critic_steps = 2;
  int32_t latent = 32;
  int32_t hidden = 64;
  double gan_lr = 1e-3;
  double clip = 1.0;
  double tau = 0.5;
  double lambda_rc = 0.1;
  std::vector<double> lambda_align = {0, 0.1, 1};
  int32_t epochs = 30;
  int32_t target_train_max = 0;
};

CdrFlags& Flags() {
  static CdrFlags flags;
  return flags;
}

nlohmann::json MetricsJson(const cdr::RankingMetrics& m) {
  return {{"hr_at_5", m.hr_at_5},       {"hr_at_10", m.hr_at_10}, {"ndcg_at_5", m.ndcg_at_5},
          {"ndcg_at_10", m.ndcg_at_10}, {"mrr", m.mrr},           {"cases", m.cases}};
}

std::string MetricsLine(const cdr::RankingMetrics& m) {
  return absl::StrFormat("HR@5 %.4f  HR@10 %.4f  NDCG@5 %.4f  NDCG@10 %.4f  MRR %.4f", m.hr_at_5,
                         m.hr_at_10, m.ndcg_at_5, m.ndcg_at_10, m.mrr);
}

absl::StatusOr<cdr::CrossDomainData> LoadCdrData(const JobFlags& a) {
  ASSIGN_OR_RETURN(data::Dataset dataset, LoadWithDeclaredRange(a, a.data));
  if (dataset.file.empty()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--setting cdr splits items by genre and needs MovieLens 100K data (movielens:DIR or "
        "movielens:DIR/u.data with u.item beside it), not %s",
        a.data));
  }
  const std::filesystem::path u_item = std::filesystem::path(dataset.file).parent_path() / "u.item";
  if (!std::filesystem::exists(u_item)) {
    return absl::NotFoundError(absl::StrFormat(
        "--setting cdr splits items by genre: %s not found (it reads the u.item shipped with "
        "MovieLens 100K beside %s)",
        u_item.string(), dataset.file));
  }
  ASSIGN_OR_RETURN(auto genres, data::LoadMovieLensGenres(u_item.string(), dataset));
  cdr::CrossDomainOptions o;
  o.seed = a.seed.value_or(1);
  o.max_target_train = Flags().target_train_max;
  return cdr::BuildCrossDomainData(
      dataset,
      cdr::AssignSourceDomain(
          genres, std::vector<int>(cdr::kSourceGenres.begin(), cdr::kSourceGenres.end())),
      o);
}

absl::Status ValidateFlags(const JobFlags& a, const CdrFlags& f) {
  if (a.repeats > 1 || !a.epsilon_sweep.empty() || !a.save_model.empty()) {
    return absl::InvalidArgumentError(
        "--setting cdr: --repeats, --epsilon-sweep and --save-model are not supported; run once "
        "per "
        "--seed and --epsilon (docs/cdr.md lists the commands of its table)");
  }
  if (f.steps < 1 || f.batch < 1 || f.critic_steps < 1 || f.latent < 1 || f.hidden < 1 ||
      f.epochs < 1 || a.dim < 1) {
    return absl::InvalidArgumentError(
        "--cdr-steps, --cdr-batch, --cdr-critic-steps, --cdr-latent, --cdr-hidden, --cdr-epochs "
        "and --dim must be >= 1");
  }
  if (!(f.clip > 0) || !(f.tau >= 0) || !(f.lambda_rc >= 0) || !(f.gan_lr > 0)) {
    return absl::InvalidArgumentError(
        "--cdr-clip and --cdr-gan-lr must be > 0, --cdr-tau and --cdr-lambda-rc >= 0");
  }
  for (double l : f.lambda_align) {
    if (!(l >= 0) || !std::isfinite(l)) {
      return absl::InvalidArgumentError(
          absl::StrFormat("--cdr-lambda-align %g: each value must be finite and >= 0", l));
    }
  }
  return absl::OkStatus();
}

}  // namespace

void AddCdrTrainFlags(CLI::App* train) {
  CdrFlags& f = Flags();
  train->add_option("--cdr-steps", f.steps, "cdr: generator steps T (each charged)")
      ->capture_default_str();
  train->add_option("--cdr-batch", f.batch, "cdr: users per generator step N (the paper: 128)")
      ->capture_default_str();
  train->add_option("--cdr-critic-steps", f.critic_steps, "cdr: discriminator steps per step")
      ->capture_default_str();
  train->add_option("--cdr-latent", f.latent, "cdr: generator user embedding size")
      ->capture_default_str();
  train->add_option("--cdr-hidden", f.hidden, "cdr: hidden units of G and D")
      ->capture_default_str();
  train->add_option("--cdr-gan-lr", f.gan_lr, "cdr: RMSprop learning rate of G and D")
      ->capture_default_str();
  train->add_option("--cdr-clip", f.clip, "cdr: C, the per-example bound of D's feedback to G")
      ->capture_default_str();
  train->add_option("--cdr-tau", f.tau, "cdr: the GAN stabilizer tau (0: the -GS ablation)")
      ->capture_default_str();
  train
      ->add_option("--cdr-lambda-rc", f.lambda_rc,
                   "cdr: the robustness conductor lambda_R (0: the -RC ablation)")
      ->capture_default_str();
  train
      ->add_option("--cdr-lambda-align", f.lambda_align,
                   "cdr: the alignment weights lambda_A the target chooses from on its "
                   "validation items (0 = no transfer, the target-only model)")
      ->delimiter(',')
      ->capture_default_str();
  train->add_option("--cdr-epochs", f.epochs, "cdr: epochs of the target recommender")
      ->capture_default_str();
  train
      ->add_option("--cdr-target-train-max", f.target_train_max,
                   "cdr: keep at most this many target training positives per user (a sparser "
                   "target; 0 keeps all)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
}

int RunCdrTrain(const JobFlags& a) {
  const CdrFlags& f = Flags();
  auto fail = [](const absl::Status& s) { return Report("fedmf train", s); };
  if (auto s = ValidateFlags(a, f); !s.ok()) return fail(s);
  auto epsilon = ParseEpsilon(a.epsilon, "--epsilon");
  if (!epsilon.ok()) return fail(epsilon.status());
  const auto start = std::chrono::steady_clock::now();
  auto loaded = LoadCdrData(a);
  if (!loaded.ok()) return fail(loaded.status());
  const cdr::CrossDomainData& d = *loaded;
  const uint64_t seed = a.seed.value_or(1);

  cdr::TargetOnlyOptions target_only;
  target_only.base.dim = a.dim;
  target_only.base.epochs = f.epochs;
  target_only.base.seed = seed;
  auto baseline = cdr::RunTargetOnly(d, target_only);
  if (!baseline.ok()) return fail(baseline.status());

  cdr::CdrOptions cdr;
  cdr.delta = a.delta;
  cdr.lambda_rc = f.lambda_rc;
  cdr.lambda_align_grid = f.lambda_align;
  cdr::GanOptions& g = cdr.gan;
  g.steps = f.steps;
  g.batch = f.batch;
  g.critic_steps = f.critic_steps;
  g.latent = f.latent;
  g.hidden = f.hidden;
  g.generator_lr = f.gan_lr;
  g.discriminator_lr = f.gan_lr;
  g.clip = f.clip;
  g.tau = f.tau;
  g.seed = a.seed;  // empty: the noise comes from OS entropy
  const int32_t batch = std::min(f.batch, d.num_users);
  if (std::isfinite(*epsilon)) {
    auto sigma = cdr::CalibrateFeedbackSigma(*epsilon, a.delta, f.steps, batch);
    if (!sigma.ok()) return fail(sigma.status());
    g.noise_sigma = *sigma;
  }
  auto run = cdr::RunCdr(d, baseline->chosen, cdr);
  if (!run.ok()) return fail(run.status());
  std::optional<cdr::CdrResult> open;
  if (a.compare) {
    if (g.noise_sigma == 0) {
      open = *run;
    } else {
      cdr::CdrOptions o = cdr;
      o.gan.noise_sigma = 0;
      auto r = cdr::RunCdr(d, baseline->chosen, o);
      if (!r.ok()) return fail(r.status());
      open = *r;
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  if (a.json) {
    nlohmann::json j = MetricsJson(run->test);
    j["setting"] = "cdr";
    j["data"] = a.data;
    j["users"] = d.num_users;
    j["source_items"] = d.num_source_items;
    j["target_items"] = d.num_target_items;
    j["epsilon"] = JsonNumber(run->source.epsilon);
    j["delta"] = a.delta;
    j["epsilon_budget"] = JsonNumber(*epsilon);
    j["noise_sigma"] = run->noise_sigma;
    j["noise_multiplier"] = run->source.noise_multiplier;
    j["generator_steps"] = run->source.steps;
    j["generator_batch"] = batch;
    j["clip"] = f.clip;
    j["tau"] = f.tau;
    j["lambda_rc"] = f.lambda_rc;
    j["lambda_align"] = run->chosen_lambda_align;
    j["validation"] = MetricsJson(run->validation);
    j["target_dim"] = a.dim;
    j["target_train_max"] = f.target_train_max;
    j["target_learning_rate"] = baseline->chosen.learning_rate;
    j["target_l2"] = baseline->chosen.l2;
    if (a.compare) {
      j["target_only"] = MetricsJson(baseline->test);
      j["non_private"] = MetricsJson(open->test);
      j["non_private"]["lambda_align"] = open->chosen_lambda_align;
    }
    j["seconds"] = seconds;
    std::cout << j.dump() << "\n";
    return 0;
  }
  std::cout << absl::StrFormat(
      "cdr: %d shared users, %d source items, %d target items (MovieLens genre split)\n",
      d.num_users, d.num_source_items, d.num_target_items);
  if (a.compare) std::cout << "target only:  " << MetricsLine(baseline->test) << "\n";
  if (a.compare) {
    std::cout << absl::StrFormat("non-private:  %s  (lambda_A %g)\n", MetricsLine(open->test),
                                 open->chosen_lambda_align);
  }
  std::cout << absl::StrFormat("PPGenCDR:     %s  (lambda_A %g)\n", MetricsLine(run->test),
                               run->chosen_lambda_align);
  std::cout << absl::StrFormat(
      "source privacy: epsilon %s at delta %g (%d generator steps of %d users, sigma %.4g, "
      "clip %g)\n",
      std::isfinite(run->source.epsilon) ? absl::StrFormat("%.4g", run->source.epsilon) : "inf",
      a.delta, run->source.steps, batch, run->noise_sigma, f.clip);
  std::cout << absl::StrFormat("%.1fs\n", seconds);
  return 0;
}

}  // namespace fedmf::cli
