// fedmf-party configuration (YAML; docs/configuration.md; unknown keys are
// errors). The policy is the party's own: the server cannot change it.
#ifndef FEDMF_PARTY_PARTY_CONFIG_H_
#define FEDMF_PARTY_PARTY_CONFIG_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/data/ratings.h"
#include "common/fmf/job_config.h"
#include "common/net/credentials.h"

namespace fedmf::party {

// Which share of the ratings file this party holds: partition `index` of
// `parties` under the seeded split (every party of a federation loads the
// same id space; see docs/configuration.md).
struct DataRole {
  std::string spec;             // movielens:PATH | csv:PATH | synthetic[:...]
  std::string setting = "hfl";  // hfl | vfl: the split the data follows
  int32_t parties = 1;
  int32_t index = 0;
  uint64_t seed = 1;
  std::string vfl_split = "random";  // random | genre
  double test_fraction = 0.1;
  // The party's own declared rating range (required): every rating of the
  // file must lie in it, and the DP sensitivity derives from it alone; a job
  // announcing another rating_max is refused (common/fmf/admitted_job.h).
  double rating_min = 0;
  double rating_max = 0;
  // HFL with a file of the party's own (parties: 1): the federation's public
  // item catalogue (one item id per line). Items are mapped into it by id,
  // and a job naming another catalogue is refused before data is read.
  std::string catalogue;
  // VFL with align_users: the item count the party declares public (e.g. the
  // size of its published product list), sent as its averaging weight m_k.
  // Unset (0): the party sends 1, so nothing about its items leaves it.
  int32_t public_item_count = 0;
};

struct Policy {
  double max_epsilon = 8.0;  // total budget of this party's ledger
  double delta = 1e-5;       // largest delta the party accepts
  std::vector<std::string> allowed_settings{"hfl", "vfl", "hfl-synsgd"};
  std::string min_granularity = "rating";  // rating | user (user is stronger)
  bool allow_non_private = false;          // accept epsilon = inf jobs
  // Send the Stage-3 test MSE and count in the final PrivacyReport. They are
  // computed on the party's held-out ratings without noise and are not
  // charged to the ledger: a release outside the accounting, so off unless
  // the party opts in (local simulations such as `fedmf demo` do).
  bool report_metrics = false;
  // The parties this party trains with, by certificate name: a job whose
  // roster names anyone else is refused before data is read, and the
  // refusal names them (the server chooses rosters; the party chooses its
  // partners). Empty: every job with another party is refused. The party's
  // own name need not be listed.
  std::vector<std::string> allowed_partners;
  // Private set intersections (align_users jobs): at most this many started
  // with the same set of partners in any 24 hours (each one shows the
  // partners which of the ids they bring are this party's users) ...
  int32_t max_alignments_per_day = 3;
  // ... and another party's list may hold at most this many times as many ids
  // as this party's own: a partner cannot probe millions of made-up ids.
  double max_partner_list_ratio = 4;
};

struct PartyConfig {
  std::string name;  // certificate name
  std::string server = "127.0.0.1:7443";
  std::string server_name = "server";  // the server certificate's name
  net::TlsConfig tls{false, "certs", ""};
  DataRole data;
  Policy policy;
  std::string state_dir = ".";  // ledger database lives here
  std::string admin_listen = "127.0.0.1:0";
  std::string admin_port_file;
  // Operator certificate names allowed on the admin endpoint (recommendations,
  // ledger). Empty = the endpoint refuses everyone (PERMISSION_DENIED).
  std::vector<std::string> admin_operators;
  std::string log_format = "text";
  std::string metrics_listen;     // host:port of GET /metrics; empty = off
  std::string metrics_port_file;  // written with the bound metrics port
  // Local reproducibility seed for the party's noise and sampling (tests,
  // demos). Unset = OS entropy. Never taken from a job: the server must not
  // know the noise. Logged as a warning when set.
  std::optional<uint64_t> noise_seed;
  // Cores for local SGD epochs (Stage 1, Stage 3, local-only training):
  // mf::SgdOptions::threads. A resource setting, never taken from a job.
  int32_t local_threads = 1;
};

absl::StatusOr<PartyConfig> LoadPartyConfig(const std::string& path);
absl::StatusOr<PartyConfig> ParsePartyConfig(const std::string& text, const std::string& name);

// The declared rating range of the party's data config.
inline data::RatingRange DeclaredRange(const DataRole& role) {
  return {role.rating_min, role.rating_max};
}

// The policy decision for a job offer, made before any data is read. Empty
// string = accept; otherwise the reason the party refuses.
std::string PolicyRefusal(const Policy& policy, const DataRole& role, const fmf::JobConfig& job,
                          double epsilon_if_accepted);

// How the job lines up the parties' data against how this party's data is
// keyed: the item catalogue (HFL) or the private alignment of users (VFL)
// the job names must be the party's, and a party with a file of its own
// never joins by position. `catalogue_digest` is the digest of the party's
// data.catalogue ("" without one); `roster_size` the job's. Empty = fine.
std::string AlignmentRefusal(const DataRole& role, const std::string& catalogue_digest,
                             const fmf::JobConfig& job, int roster_size);

// The roster names that are neither `own_name` nor in
// policy.allowed_partners, in roster order (empty = every partner allowed).
std::vector<std::string> UnknownPartners(const Policy& policy, const std::string& own_name,
                                         const std::vector<std::string>& roster);
// The refusal for a roster with unknown partners ("" when there are none):
// names them and the key that would admit them.
std::string PartnerRefusal(const Policy& policy, const std::string& own_name,
                           const std::vector<std::string>& roster);

// The other parties of a roster (without `own_name`), sorted and
// comma-joined: the key under which private set intersections are counted.
std::string PartnerSetKey(const std::string& own_name, const std::vector<std::string>& roster);

}  // namespace fedmf::party

#endif  // FEDMF_PARTY_PARTY_CONFIG_H_
