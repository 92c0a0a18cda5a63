#include "tools/fedmf/train_data.h"

#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/base/allocator.h"
#include "common/base/status_macros.h"
#include "common/cli/command_line.h"
#include "common/data/catalogue.h"
#include "common/data/loaders.h"
#include "common/data/party_files.h"
#include "common/fmf/simulator.h"
#include "common/psi/in_process.h"
#include "common/random/csprng.h"

namespace fedmf::cli {
namespace {

// A file the command names could not be used: a data error (exit 4).
absl::Status FileError(const absl::Status& s, const std::string& prefix) {
  return WithPrefix(DataError(s), prefix);
}

absl::StatusOr<TrainData> FromOneDataSet(const JobFlags& a, const data::LoadOptions& options) {
  auto dataset = data::LoadDataSpec(a.data, options);
  if (!dataset.ok()) return WithPrefix(DataErrorOf(a.data, dataset.status()), "--data: ");
  if (absl::Status s = CheckDeclaredRange(a, *dataset, a.data); !s.ok()) {
    return DataErrorOf(a.data, s);
  }
  std::string range_warning = DeclaredRangeWarning(a, *dataset, a.data);
  // What loading freed (the duplicate check's row indices, the generator's
  // pair keys: up to 21 MB at 5.3M ratings) goes back before the split holds
  // the data set and its test tenth side by side, the run's peak.
  base::ReturnFreeMemory();
  TrainData out;
  if (!range_warning.empty()) out.warnings.push_back(std::move(range_warning));
  ASSIGN_OR_RETURN(out.config, BuildJobConfig(a, dataset->range));
  fmf::FederationOptions fed;
  fed.parties = out.config.split == fmf::SplitKind::kNone ? 1 : a.parties;
  fed.vfl_split = a.vfl_split;
  fed.split_seed = a.seed.value_or(1);
  fed.test_fraction = out.config.test_fraction;
  out.label = a.data;
  if (!a.save_model.empty()) {
    // Only --save-model reads the external ids after the split; kept
    // otherwise they stayed resident through training (2.5 MB of strings
    // at 67,000 users, 2% of a central run's peak).
    out.user_ids = dataset->user_ids;
    out.item_ids = dataset->item_ids;
  }
  // The ratings move into the federation (a central split keeps their storage).
  ASSIGN_OR_RETURN(out.federation,
                   fmf::BuildFederationFromSpec(out.config, std::move(*dataset), a.data, fed));
  return out;
}

absl::StatusOr<TrainData> FromPartyFiles(const JobFlags& a, const data::LoadOptions& options) {
  if (a.data_given) {
    return absl::InvalidArgumentError(
        "give --data (one data set, split by --parties) or --party-data (one file per party), "
        "not both");
  }
  const int32_t s = static_cast<int32_t>(a.party_data.size());
  if (a.parties_given && a.parties != s) {
    return absl::InvalidArgumentError(absl::StrCat("--parties ", a.parties, " but ", s,
                                                   " --party-data files: one file per party"));
  }
  if (!IsFederatedFmf(a.setting)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--party-data works with --setting hfl, hfl-synsgd or vfl, not ", SettingName(a.setting)));
  }
  std::vector<data::Dataset> files;
  for (int32_t k = 0; k < s; ++k) {
    const std::string& spec = a.party_data[k];
    if (spec.rfind("synthetic", 0) == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("--party-data ", spec, ": a party file is movielens:PATH or csv:PATH"));
    }
    auto d = data::LoadDataSpec(spec, options);
    if (!d.ok()) return FileError(d.status(), absl::StrCat("--party-data (party ", k, "): "));
    files.push_back(std::move(*d));
  }
  TrainData out;
  for (int32_t k = 0; k < s; ++k) {
    if (std::string w = DeclaredRangeWarning(a, files[k], a.party_data[k]); !w.empty()) {
      out.warnings.push_back(std::move(w));
    }
  }
  if (s == 1) {
    out.warnings.push_back(absl::StrCat(
        "warning: one --party-data file (", a.party_data[0],
        "): a federation of one party learns nothing from partners, this is training alone; "
        "give one --party-data per partner"));
  }
  ASSIGN_OR_RETURN(out.config, BuildJobConfig(a, files[0].range));
  out.label = absl::StrJoin(a.party_data, " + ");
  const data::SplitOptions split{out.config.test_fraction, a.seed.value_or(1)};
  nlohmann::json join;
  data::PartyFilesFederation fed;
  std::string catalogue_source;
  if (a.setting == SettingKind::kVfl) {
    std::vector<std::vector<std::string>> ids;
    for (const data::Dataset& d : files) ids.push_back(data::DistinctUserIds(d));
    // The PSI's keys and shuffles: OS entropy unless --seed (a test knob).
    random::Csprng rng = random::Csprng::FromOptionalSeed(a.seed);
    const int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    auto psi = psi::RunPsiInProcess(ids, out.config.job_id, rng, threads);
    if (!psi.ok()) return WithPrefix(psi.status(), "private set intersection: ");
    auto built = data::FederateBySharedUsers(files, psi->shared_ids, split);
    if (!built.ok()) return FileError(built.status(), "--party-data: ");
    fed = std::move(*built);
    nlohmann::json per_party = nlohmann::json::array();
    for (int32_t k = 0; k < s; ++k) {
      per_party.push_back({{"users", ids[k].size()},
                           {"psi_seconds", psi->parties[k].seconds},
                           {"psi_bytes_sent", psi->parties[k].bytes_sent},
                           {"psi_bytes_received", psi->parties[k].bytes_received}});
    }
    join = {{"by", "private set intersection of user ids (ristretto255)"},
            {"shared_users", fed.shared},
            {"psi_relay_bytes", psi->relay_bytes_in + psi->relay_bytes_out},
            {"per_party", per_party}};
    out.notes.push_back(absl::StrFormat(
        "users aligned by a private set intersection: %d shared of %s per party", fed.shared,
        absl::StrJoin(ids, ", ",
                      [](std::string* o, const auto& v) { absl::StrAppend(o, v.size()); })));
  } else {
    std::optional<data::Catalogue> catalogue;
    if (!a.catalogue.empty()) {
      auto c = data::Catalogue::Load(a.catalogue);
      if (!c.ok()) return FileError(c.status(), "--catalogue: ");
      catalogue = std::move(*c);
    } else {
      ASSIGN_OR_RETURN(auto c, data::Catalogue::FromIds(data::ItemIdUnion(files),
                                                        "the union of the files' items"));
      catalogue = std::move(c);
    }
    catalogue_source = catalogue->source();
    auto built = data::FederateByItemCatalogue(files, *catalogue, split);
    if (!built.ok()) return FileError(built.status(), "--party-data: ");
    fed = std::move(*built);
    join = {{"by", "item catalogue"},
            {"shared_items", fed.shared},
            {"catalogue", catalogue->source()},
            {"catalogue_digest", catalogue->digest()}};
    out.notes.push_back(absl::StrFormat("items aligned by the catalogue %s (%d items, %s)",
                                        catalogue->source(), fed.shared, catalogue->digest()));
  }
  join["dropped_ratings"] = fed.dropped_ratings;
  for (int32_t k = 0; k < s; ++k) {
    const std::string warning = data::DroppedRatingsMessage(
        files[k], fed, static_cast<size_t>(k),
        a.setting == SettingKind::kVfl
            ? "users no other party has"
            : absl::StrCat("items outside the catalogue ", catalogue_source));
    if (!warning.empty()) out.warnings.push_back("warning: " + warning);
  }
  out.join = std::move(join);
  out.user_ids = std::move(fed.user_ids);
  out.item_ids = std::move(fed.item_ids);
  out.federation = std::move(fed.federation);
  return out;
}

}  // namespace

absl::StatusOr<TrainData> LoadTrainData(const JobFlags& a) {
  ASSIGN_OR_RETURN(data::LoadOptions options, LoadOptionsFromFlags(a));
  if (a.party_data.empty()) return FromOneDataSet(a, options);
  return FromPartyFiles(a, options);
}

}  // namespace fedmf::cli
