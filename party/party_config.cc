#include "party/party_config.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/base/status_macros.h"
#include "common/config/yaml_reader.h"

namespace fedmf::party {
namespace {

void ReadTopLevel(config::YamlMap& root, PartyConfig& c, config::FirstError& check) {
  check(root.GetString("name", &c.name));
  check(root.GetString("server", &c.server));
  check(root.GetString("server_name", &c.server_name));
  check(root.GetString("state_dir", &c.state_dir));
  check(root.GetString("admin_listen", &c.admin_listen));
  check(root.GetString("admin_port_file", &c.admin_port_file));
  check(root.GetStringList("admin_operators", &c.admin_operators));
  check(root.GetString("log_format", &c.log_format));
  check(root.GetString("metrics_listen", &c.metrics_listen));
  check(root.GetString("metrics_port_file", &c.metrics_port_file));
  check(root.GetInt("local_threads", &c.local_threads));
}

absl::Status ReadTls(config::YamlMap& root, PartyConfig& c, config::FirstError& check) {
  if (!root.Has("tls")) return absl::OkStatus();
  ASSIGN_OR_RETURN(auto tls, root.GetMap("tls"));
  check(tls.GetBool("insecure", &c.tls.insecure));
  check(tls.GetString("cert_dir", &c.tls.cert_dir));
  check(tls.Finish());
  return absl::OkStatus();
}

// The data section (required). Returns whether it declares the rating range.
absl::StatusOr<bool> ReadData(config::YamlMap& root, DataRole& d, config::FirstError& check) {
  auto data = root.GetMap("data");
  if (!data.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(root.Where(),
                     "key 'data' is required: spec, setting, parties, index (see "
                     "docs/configuration.md)"));
  }
  check(data->GetString("spec", &d.spec));
  check(data->GetString("setting", &d.setting));
  check(data->GetInt("parties", &d.parties));
  check(data->GetInt("index", &d.index));
  int64_t seed = static_cast<int64_t>(d.seed);
  check(data->GetInt("seed", &seed));
  d.seed = static_cast<uint64_t>(seed);
  check(data->GetString("vfl_split", &d.vfl_split));
  check(data->GetDouble("test_fraction", &d.test_fraction));
  const bool has_range = data->Has("rating_min") && data->Has("rating_max");
  check(data->GetDouble("rating_min", &d.rating_min));
  check(data->GetDouble("rating_max", &d.rating_max));
  check(data->GetString("catalogue", &d.catalogue));
  check(data->GetInt("public_item_count", &d.public_item_count));
  check(data->Finish());
  return has_range;
}

absl::Status ReadNoiseSeed(config::YamlMap& root, PartyConfig& c, config::FirstError& check) {
  if (!root.Has("noise_seed")) return absl::OkStatus();
  int64_t noise_seed = -1;
  check(root.GetInt("noise_seed", &noise_seed));
  if (check.status().ok() && noise_seed < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(root.Where(), "key 'noise_seed': must be >= 0 (omit it for OS entropy)"));
  }
  c.noise_seed = static_cast<uint64_t>(noise_seed);
  return absl::OkStatus();
}

absl::Status ReadPolicy(config::YamlMap& root, Policy& p, config::FirstError& check) {
  if (!root.Has("policy")) return absl::OkStatus();
  ASSIGN_OR_RETURN(auto policy, root.GetMap("policy"));
  check(policy.GetDouble("max_epsilon", &p.max_epsilon));
  check(policy.GetDouble("delta", &p.delta));
  check(policy.GetStringList("allowed_settings", &p.allowed_settings));
  check(policy.GetString("min_granularity", &p.min_granularity));
  check(policy.GetBool("allow_non_private", &p.allow_non_private));
  check(policy.GetBool("report_metrics", &p.report_metrics));
  check(policy.GetStringList("allowed_partners", &p.allowed_partners));
  check(policy.GetInt("max_alignments_per_day", &p.max_alignments_per_day));
  check(policy.GetDouble("max_partner_list_ratio", &p.max_partner_list_ratio));
  check(policy.Finish());
  return absl::OkStatus();
}

// The values' checks, once every key was read; `where` names the file.
absl::Status ValidateDataRole(const DataRole& d, bool has_range, const std::string& where) {
  auto bad = [&](const std::string& key, const std::string& why) {
    return absl::InvalidArgumentError(absl::StrCat(where, "key '", key, "': ", why));
  };
  if (d.spec.empty()) return bad("data.spec", "required, e.g. movielens:/data/u.data");
  if (d.setting != "hfl" && d.setting != "vfl") return bad("data.setting", "hfl or vfl");
  if (d.parties < 1) return bad("data.parties", "must be >= 1");
  if (d.index < 0 || d.index >= d.parties) {
    return bad("data.index", absl::StrCat("must be in [0, ", d.parties, ")"));
  }
  if (d.vfl_split != "random" && d.vfl_split != "genre") {
    return bad("data.vfl_split", "random or genre");
  }
  if (!d.catalogue.empty() && (d.setting != "hfl" || d.parties != 1)) {
    return bad("data.catalogue",
               "an item catalogue is for HFL with a file of the party's own: set setting: hfl "
               "and parties: 1 (VFL aligns users by a private set intersection instead)");
  }
  if (d.public_item_count < 0) {
    return bad("data.public_item_count",
               "must be >= 0 (0 or unset: the party declares no item count and sends 1)");
  }
  if (d.public_item_count > 0 && d.setting != "vfl") {
    return bad("data.public_item_count",
               "is the weight of a VFL party (setting: vfl); an HFL party's weight is its DP "
               "size release");
  }
  // A file of the party's own in HFL is joined by item id, through the
  // catalogue; without one its items would be matched by position with other
  // partners' files, and the first job naming a catalogue would fail. (A
  // synthetic share is one operator's test federation: ids are positions.)
  if (d.catalogue.empty() && d.setting == "hfl" && d.parties == 1 &&
      d.spec.rfind("synthetic", 0) != 0) {
    return bad("data.catalogue",
               "missing: an HFL party with a file of its own (data.parties: 1) maps its items "
               "into the federation's item catalogue; set data.catalogue to the catalogue file "
               "the federation's operator gives you (check it with: fedmf catalogue digest "
               "FILE). To hold share data.index of one common file instead, set data.parties "
               "to the number of shares");
  }
  if (!(d.test_fraction >= 0 && d.test_fraction < 1)) {
    return bad("data.test_fraction", "must be in [0, 1)");
  }
  if (!has_range) {
    return bad("data.rating_min/rating_max",
               "required: the range of the party's ratings, e.g. rating_min: 1, rating_max: 5 "
               "for MovieLens (the DP sensitivity is computed from it, never from the job)");
  }
  if (!(std::isfinite(d.rating_min) && std::isfinite(d.rating_max) && d.rating_min < d.rating_max &&
        d.rating_max > 0)) {
    return bad("data.rating_max", "need finite rating_min < rating_max and rating_max > 0");
  }
  return absl::OkStatus();
}

absl::Status ValidatePolicy(const Policy& p, const std::string& where) {
  auto bad = [&](const std::string& key, const std::string& why) {
    return absl::InvalidArgumentError(absl::StrCat(where, "key '", key, "': ", why));
  };
  if (!(p.max_epsilon > 0)) return bad("policy.max_epsilon", "must be > 0");
  if (!(p.delta > 0 && p.delta < 1)) return bad("policy.delta", "must be in (0, 1)");
  if (p.min_granularity != "rating" && p.min_granularity != "user") {
    return bad("policy.min_granularity", "rating or user");
  }
  if (p.max_alignments_per_day < 0) {
    return bad("policy.max_alignments_per_day", "must be >= 0 (0: no private set intersection)");
  }
  if (!(p.max_partner_list_ratio > 0) || !std::isfinite(p.max_partner_list_ratio)) {
    return bad("policy.max_partner_list_ratio",
               "must be a finite number > 0 (e.g. 4: a partner's list holds at most 4x this "
               "party's ids)");
  }
  for (const std::string& name : p.allowed_partners) {
    if (name.empty()) return bad("policy.allowed_partners", "an empty certificate name");
  }
  for (const std::string& st : p.allowed_settings) {
    if (st != "hfl" && st != "vfl" && st != "hfl-synsgd" && st != "coupling") {
      return bad("policy.allowed_settings", absl::StrCat("unknown setting '", st, "'"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<PartyConfig> FromMap(config::YamlMap root) {
  PartyConfig c;
  config::FirstError check;
  ReadTopLevel(root, c, check);
  RETURN_IF_ERROR(ReadTls(root, c, check));
  ASSIGN_OR_RETURN(const bool has_range, ReadData(root, c.data, check));
  RETURN_IF_ERROR(ReadNoiseSeed(root, c, check));
  if (check.status().ok() && (c.local_threads < 1 || c.local_threads > 256)) {
    return absl::InvalidArgumentError(absl::StrCat(
        root.Where(), "key 'local_threads': must be in 1..256 (cores for local SGD), got ",
        c.local_threads));
  }
  RETURN_IF_ERROR(ReadPolicy(root, c.policy, check));
  RETURN_IF_ERROR(check.status());
  RETURN_IF_ERROR(root.Finish());
  c.tls.name = c.name;
  if (c.name.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(root.Where(), "key 'name': required (the party's certificate name)"));
  }
  RETURN_IF_ERROR(ValidateDataRole(c.data, has_range, root.Where()));
  RETURN_IF_ERROR(ValidatePolicy(c.policy, root.Where()));
  if (c.log_format != "text" && c.log_format != "json") {
    return absl::InvalidArgumentError(absl::StrCat(root.Where(), "key 'log_format': text or json"));
  }
  return c;
}

}  // namespace

absl::StatusOr<PartyConfig> LoadPartyConfig(const std::string& path) {
  ASSIGN_OR_RETURN(auto root, config::YamlMap::FromFile(path));
  return FromMap(std::move(root));
}

absl::StatusOr<PartyConfig> ParsePartyConfig(const std::string& text, const std::string& name) {
  ASSIGN_OR_RETURN(auto root, config::YamlMap::FromString(text, name));
  return FromMap(std::move(root));
}

std::string PolicyRefusal(const Policy& policy, const DataRole& role, const fmf::JobConfig& job,
                          double epsilon_if_accepted) {
  const std::string setting = fmf::SettingName(job.setting);
  if (std::find(policy.allowed_settings.begin(), policy.allowed_settings.end(), setting) ==
      policy.allowed_settings.end()) {
    return absl::StrCat("setting ", setting, " is not allowed by the party's policy (allowed: ",
                        absl::StrJoin(policy.allowed_settings, ", "), ")");
  }
  const bool vertical = job.split == fmf::SplitKind::kVertical;
  if (vertical != (role.setting == "vfl")) {
    return absl::StrCat("the party's data is a ", role.setting, " share; job needs ",
                        vertical ? "vfl" : "hfl");
  }
  if (policy.min_granularity == "user" && job.granularity != fmf::Granularity::kUser) {
    return "the party's policy requires per-user privacy; the job offers per-rating";
  }
  if (!job.private_training()) {
    if (!policy.allow_non_private) return "non-private jobs (epsilon = inf) are not allowed";
    return "";
  }
  if (job.delta > policy.delta) {
    return absl::StrCat("job delta ", job.delta, " exceeds the policy's ", policy.delta);
  }
  if (job.epsilon > policy.max_epsilon) {
    return absl::StrCat("job epsilon ", job.epsilon, " exceeds the policy cap ",
                        policy.max_epsilon);
  }
  if (!(epsilon_if_accepted <= policy.max_epsilon * (1 + 1e-9))) {
    return absl::StrCat("the job would bring the ledger to epsilon ", epsilon_if_accepted,
                        ", over the budget ", policy.max_epsilon);
  }
  return "";
}

std::string AlignmentRefusal(const DataRole& role, const std::string& catalogue_digest,
                             const fmf::JobConfig& job, int roster_size) {
  if (job.split == fmf::SplitKind::kHorizontal) {
    if (job.item_catalogue.empty() && !catalogue_digest.empty()) {
      return "the job names no item catalogue (its items would be positions in a shared file) "
             "but this party's items are keyed by its catalogue (data.catalogue); the job must "
             "set item_catalogue";
    }
    if (!job.item_catalogue.empty() && catalogue_digest.empty()) {
      return absl::StrCat("the job maps items into the catalogue ", job.item_catalogue,
                          " but this party has none: set data.catalogue to that file");
    }
    if (job.item_catalogue != catalogue_digest) {
      return absl::StrCat("the job names item catalogue ", job.item_catalogue,
                          " but this party holds ", catalogue_digest,
                          " (data.catalogue): not the same list of items in the same order (the "
                          "digest covers the order too: line k of the catalogue is row k of the "
                          "shared matrix); use the operator's file as it is, without sorting it");
    }
    if (job.item_catalogue.empty() && role.parties == 1 && roster_size > 1) {
      // Its items would be matched by position, and the file's shape (the
      // party's own item and user counts) would be the job's.
      return "the job names no item catalogue and this party's data is a file of its own "
             "(data.parties: 1): its items would be matched by position; the federation "
             "publishes an item catalogue, the job sets item_catalogue and the party "
             "data.catalogue";
    }
    return "";
  }
  if (!job.align_users && role.parties == 1 && roster_size > 1) {
    return "the job does not align users (align_users) and this party's data is a file of its "
           "own (data.parties: 1): its users would be matched by position; submit the job with "
           "align_users: true";
  }
  return "";
}

std::vector<std::string> UnknownPartners(const Policy& policy, const std::string& own_name,
                                         const std::vector<std::string>& roster) {
  std::vector<std::string> unknown;
  for (const std::string& name : roster) {
    if (name == own_name) continue;
    if (std::find(policy.allowed_partners.begin(), policy.allowed_partners.end(), name) !=
        policy.allowed_partners.end()) {
      continue;
    }
    if (std::find(unknown.begin(), unknown.end(), name) == unknown.end()) unknown.push_back(name);
  }
  return unknown;
}

std::string PartnerRefusal(const Policy& policy, const std::string& own_name,
                           const std::vector<std::string>& roster) {
  const std::vector<std::string> unknown = UnknownPartners(policy, own_name, roster);
  if (unknown.empty()) return "";
  // Names from the server's own roster: nothing of the party's data.
  return absl::StrCat("the job's roster names ", unknown.size() == 1 ? "a party" : "parties",
                      " this party does not train with: '", absl::StrJoin(unknown, "', '"),
                      "' (not in policy.allowed_partners; add ",
                      unknown.size() == 1 ? "it" : "them", " there to accept jobs with ",
                      unknown.size() == 1 ? "it" : "them", ")");
}

std::string PartnerSetKey(const std::string& own_name, const std::vector<std::string>& roster) {
  std::vector<std::string> others;
  for (const std::string& name : roster) {
    if (name != own_name) others.push_back(name);
  }
  std::sort(others.begin(), others.end());
  others.erase(std::unique(others.begin(), others.end()), others.end());
  return absl::StrJoin(others, ",");
}

}  // namespace fedmf::party
