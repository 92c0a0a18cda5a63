#include "tools/fedmf/job_file.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/base/status_macros.h"
#include "common/config/yaml_reader.h"
#include "common/data/catalogue.h"
#include "common/fmf/wire/job_codec.h"
#include "tools/fedmf/cli_util.h"
#include "tools/fedmf/hua_job_spec.h"
#include "tools/fedmf/lfl_job_spec.h"

namespace fedmf::cli {
namespace {

// A cross-silo (FMF) job file's keys as written, before they are resolved.
struct FmfJobFile {
  fmf::JobConfig config;
  std::string setting = "hfl", granularity = "default", epsilon = "1";
  std::string item_catalogue, algorithm;
  std::vector<std::string> roster;
  double deadline = 0;
  int32_t min_parties = 0;
  int64_t seed = -1;
};

// Every key ReadFmfJobFile reads.
constexpr const char* kFmfJobKeys[] = {"job_id",
                                       "setting",
                                       "granularity",
                                       "epsilon",
                                       "delta",
                                       "rounds",
                                       "local_iters",
                                       "dim",
                                       "sample_rate",
                                       "theta",
                                       "vfl_finetune_iters",
                                       "learning_rate",
                                       "lr_final_ratio",
                                       "sgd_learning_rate",
                                       "sgd_l2",
                                       "pretrain_epochs",
                                       "finetune_epochs",
                                       "rating_max",
                                       "seed",
                                       "roster",
                                       "round_deadline_seconds",
                                       "min_parties",
                                       "item_catalogue",
                                       "align_users",
                                       "algorithm",
                                       "alternations",
                                       "validation_fraction",
                                       "max_finetune_epochs",
                                       "clip_norm",
                                       "coupling_zeta",
                                       "coupling_bound",
                                       "coupling_init"};

absl::StatusOr<FmfJobFile> ReadFmfJobFile(config::YamlMap& root) {
  FmfJobFile f;
  fmf::JobConfig& c = f.config;
  config::FirstError check;
  check(root.GetString("job_id", &c.job_id));
  if (!root.Has("job_id")) c.job_id.clear();  // ResolveFmfJobFile names it
  check(root.GetString("setting", &f.setting));
  check(root.GetString("granularity", &f.granularity));
  check(root.GetString("epsilon", &f.epsilon));
  check(root.GetDouble("delta", &c.delta));
  check(root.GetInt("rounds", &c.rounds));
  c.local_iters = 0;  // absent: resolved per setting (ResolveFmfJobFile)
  check(root.GetInt("local_iters", &c.local_iters));
  check(root.GetInt("dim", &c.dim));
  check(root.GetDouble("sample_rate", &c.sample_rate));
  check(root.GetInt("theta", &c.theta));
  check(root.GetInt("vfl_finetune_iters", &c.vfl_finetune_iters));
  check(root.GetDouble("learning_rate", &c.learning_rate));
  check(root.GetDouble("lr_final_ratio", &c.lr_final_ratio));
  check(root.GetDouble("sgd_learning_rate", &c.sgd_learning_rate));
  check(root.GetDouble("sgd_l2", &c.sgd_l2));
  check(root.GetInt("pretrain_epochs", &c.pretrain_epochs));
  check(root.GetInt("finetune_epochs", &c.finetune_epochs));
  check(root.GetDouble("rating_max", &c.rating_max));
  check(root.GetInt("seed", &f.seed));
  check(root.GetStringList("roster", &f.roster));
  check(root.GetDouble("round_deadline_seconds", &f.deadline));
  check(root.GetInt("min_parties", &f.min_parties));
  check(root.GetString("item_catalogue", &f.item_catalogue));
  check(root.GetBool("align_users", &c.align_users));
  check(root.GetString("algorithm", &f.algorithm));
  check(root.GetInt("alternations", &c.alternations));
  check(root.GetDouble("validation_fraction", &c.validation_fraction));
  check(root.GetInt("max_finetune_epochs", &c.max_finetune_epochs));
  check(root.GetDouble("clip_norm", &c.clip_norm));
  check(root.GetDouble("coupling_zeta", &c.coupling_zeta));
  check(root.GetDouble("coupling_bound", &c.coupling_bound));
  check(root.GetDouble("coupling_init", &c.coupling_init));
  RETURN_IF_ERROR(check.status());
  RETURN_IF_ERROR(root.Finish());
  return f;
}

// The words of the file (algorithm, catalogue file, setting, granularity,
// epsilon) into f.config; errors name `path` and the key.
absl::Status ResolveFmfJobFile(FmfJobFile& f, const std::string& path) {
  fmf::JobConfig& c = f.config;
  if (!f.algorithm.empty()) {
    auto parsed = fmf::ParseAlgorithm(f.algorithm);
    if (!parsed.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": key 'algorithm': ", parsed.status().message()));
    }
    c.algorithm = *parsed;
  }
  c.item_catalogue = f.item_catalogue;
  if (!f.item_catalogue.empty() && f.item_catalogue.rfind("sha256:", 0) != 0) {
    // A file: the job carries its digest (the parties hold the file).
    auto catalogue = data::Catalogue::Load(f.item_catalogue);
    if (!catalogue.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": key 'item_catalogue': ", catalogue.status().message()));
    }
    c.item_catalogue = catalogue->digest();
  }
  ASSIGN_OR_RETURN(c.setting, fmf::ParseSetting(f.setting));
  if (c.job_id.empty()) c.job_id = TimestampedJobId(f.setting, absl::Now());
  // A coupling round is one DP step; the FMF settings run T' = 10 by default.
  if (c.local_iters == 0) c.local_iters = c.setting == fmf::Setting::kCoupling ? 1 : 10;
  c.split =
      c.setting == fmf::Setting::kVfl ? fmf::SplitKind::kVertical : fmf::SplitKind::kHorizontal;
  if (f.granularity == "default") {
    // Absent: per user for hfl / hfl-synsgd (per rating is refused there).
    c.granularity = fmf::DefaultGranularity(c.setting);
  } else {
    auto gran = fmf::ParseGranularity(f.granularity);
    if (!gran.ok())
      return absl::InvalidArgumentError(absl::StrCat(path, ": ", gran.status().message()));
    c.granularity = *gran;
  }
  ASSIGN_OR_RETURN(c.epsilon, ParseEpsilon(f.epsilon, "epsilon"));
  if (f.seed >= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        path,
        ": key 'seed': a cross-silo job carries no seed (the server refuses it); set "
        "noise_seed in each party's config and seed in the server's for a reproducible run"));
  }
  if (auto st = fmf::ValidateJobConfig(c); !st.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", st.message()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<v1::JobSpec> LoadJobSpecFile(const std::string& path) {
  ASSIGN_OR_RETURN(auto root, config::YamlMap::FromFile(path));
  if (auto peek = config::YamlMap::FromFile(path); peek.ok()) {
    std::string setting;
    if (peek->GetString("setting", &setting).ok() && setting == "lfl") {
      return LflJobSpecFromYaml(root, path);  // device hosts, not parties
    }
    if (setting == "hua-s3") return HuaJobSpecFromYaml(root, path);  // device hosts + aggregator
  }
  ASSIGN_OR_RETURN(FmfJobFile f, ReadFmfJobFile(root));
  RETURN_IF_ERROR(ResolveFmfJobFile(f, path));
  v1::JobSpec spec = net::SpecFromJobConfig(f.config);
  for (const auto& r : f.roster) spec.add_roster(r);
  spec.set_round_deadline_seconds(f.deadline);
  spec.set_min_parties(f.min_parties);
  // Validate the wire form too (only federated settings travel).
  if (auto back = net::JobConfigFromSpec(spec); !back.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", back.status().message()));
  }
  return spec;
}

absl::StatusOr<JobFile> ReadJobFile(const std::string& path) {
  ASSIGN_OR_RETURN(auto root, config::YamlMap::FromFile(path));
  std::string setting;
  if (root.Has("setting")) {
    if (auto peek = config::YamlMap::FromFile(path); peek.ok()) {
      (void)peek->GetString("setting", &setting);
    }
  }
  if (setting == "lfl" || setting == "hua-s3") {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": key 'setting': ", setting,
                     " jobs run over device hosts; fedmf train and demo --job take the "
                     "cross-silo job files (hfl, vfl, hfl-synsgd, coupling). Give their "
                     "flags instead (fedmf demo --setting ",
                     setting, " ...)"));
  }
  JobFile out;
  for (const char* key : kFmfJobKeys) {
    if (root.Has(key)) out.keys.insert(key);
  }
  ASSIGN_OR_RETURN(FmfJobFile f, ReadFmfJobFile(root));
  if (!f.item_catalogue.empty() && f.item_catalogue.rfind("sha256:", 0) != 0) {
    out.catalogue_file = f.item_catalogue;
  }
  RETURN_IF_ERROR(ResolveFmfJobFile(f, path));
  out.config = std::move(f.config);
  out.roster = std::move(f.roster);
  out.min_parties = f.min_parties;
  return out;
}

}  // namespace fedmf::cli
