// The job flags shared by `fedmf train` (one process) and `fedmf demo`
// (real daemons), so both describe a job the same way.
#ifndef FEDMF_TOOLS_FEDMF_JOB_FLAGS_H_
#define FEDMF_TOOLS_FEDMF_JOB_FLAGS_H_

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/statusor.h"
#include "common/data/loaders.h"
#include "common/data/ratings.h"
#include "common/fmf/job_config.h"
#include "tools/fedmf/setting_kind.h"

// Forward-declared, not included: this header reaches test files that
// include httplib.h, whose resolver macros (_res) break Eigen's headers.
namespace fedmf::lfl {
struct LflConfig;
struct LflDeviceOptions;
}  // namespace fedmf::lfl

namespace fedmf::cli {

// The flags, grouped by the protocol that reads them. JobFlags holds every
// group (as bases, so a field is still flags.rounds); a protocol's code
// needs only its group and the shared ones.

// What to run, on which data, with which budget; how to print it, and the
// job file. Every setting.
struct RunFlags {
  SettingKind setting = SettingKind::kHfl;  // --setting, parsed (setting_kind.h)
  std::string data = "synthetic";
  int32_t parties = 5;
  std::string epsilon = "1";
  double delta = 1e-5;
  // "default": per user for hfl / hfl-synsgd, per rating otherwise.
  std::string granularity = "default";
  std::optional<uint64_t> seed;
  int32_t threads = 1;  // cores for each party's local SGD epochs (local, not in the job)
  bool json = false;
  bool quiet = false;
  int32_t eval_every = 10;
  std::optional<double> rating_min;  // declared minimum rating (ML-100K: 1)
  // --rating-range MIN,MAX: the data's declared scale (the sensitivity uses
  // MAX); every rating of a file must lie in it.
  std::string rating_range;
  // --party-data SPEC, once per party: partners' own files (instead of --data
  // and a partitioner), joined by external ids.
  std::vector<std::string> party_data;
  // --catalogue FILE: the HFL item catalogue for --party-data (default: the
  // sorted union of the files' item ids).
  std::string catalogue;
  // --job FILE.yaml: the job file `fedmf job submit --spec` takes; its keys
  // set the flags the command line leaves out (ApplyJobFile).
  std::string job_file;
  std::string job_id;                   // the job file's job_id ("" = the command's default)
  std::set<std::string> job_file_keys;  // LFL / Hua S3 job files: the keys applied
  bool data_given = false;              // set by the command: --data was on the line
  bool parties_given = false;           // set by the command: --parties was on the line
};

// What `fedmf train` (and demo) write besides the result: baselines, models,
// the split, plots, and the gain over seeds. hfl, vfl, hfl-synsgd (central).
struct OutputFlags {
  bool compare = false;     // train: also local-only and central on the same split
  bool tune = false;        // train: choose --lr on a synthetic proxy of a declared shape
  std::string tune_shape;   // train --tune: "users=N,items=M,ratings=R", declared public
  std::string save_model;   // train --save-model DIR (common/fmf/saved_model.h)
  std::string write_split;  // train --write-split DIR (central): LIBMF-format text files
  std::string plot;         // train / demo --plot FILE.svg: MSE, epsilon, round time
  // train --compare --repeats N [--epsilon-sweep LIST]: the gain with its
  // spread over N seeds and splits, at each epsilon (tools/fedmf/gain_sweep.h).
  int32_t repeats = 1;
  std::string epsilon_sweep;
};

// The SGD of the matrix factorization every protocol trains: rounds
// (iterations), dimension, learning rates, Stage 1/3 epochs.
struct TrainingFlags {
  int32_t rounds = 100;
  int32_t dim = 20;
  // Hua et al. default --dim to the paper's 50 unless given (set by the command).
  bool dim_given = false;
  double lr = 0;
  double lr_final_ratio = 0.1;
  double sgd_lr = 0.01;
  double sgd_l2 = 0.05;
  int32_t pretrain_epochs = 20;
  int32_t finetune_epochs = 5;
  std::string algorithm;  // "" = the default: hfl, vfl alternate | paper; lfl whole | paper
  double validation_fraction = 0.1;  // hfl, vfl --algorithm alternate, lfl: own ratings held out
  int32_t theta = 0;                 // per-user trimming bound (hfl, vfl; hua: items kept)
  double sample_rate = 0.01;         // hfl, vfl, coupling
};

// The cross-silo settings (central, local, vfl, hfl, hfl-synsgd; common/fmf).
struct CrossSiloFlags {
  int32_t local_iters = 10;
  std::string split = "";  // local: vertical | horizontal
  std::string vfl_split = "random";
  int32_t kappa = 100;
  std::string engine = "sgd";  // central / local-only trainer: sgd | grid
  double grid_lr = 0.1;        // --engine grid: eta of the adaptive steps
  int32_t central_epochs = 40;
  int32_t alternations = 5;  // hfl --algorithm alternate: phases of V
  double hfl_clip = -1;      // hfl per user: whole V-gradient norm bound (0: trim; -1: algorithm's)
  fmf::StatsConfig stats;    // hfl, vfl --algorithm stats (--stats-* flags)
};

// LFL (cross-device) over secure aggregation.
struct LflFlags {
  double lfl_clip = 0;  // --algorithm whole: the devices' gradient norm bound C (0: 2 R^{3/2})
  double omega = 0.3;   // tolerated dropout fraction of the secure aggregation
  std::string dropout = "0,0";          // actual vanishing probability in round 1, round 2
  std::string aggregation = "secagg+";  // secagg+ (Harary graph) | secagg (complete) | ideal
  int32_t secagg_bits = 32;             // fixed-point width of the secure aggregation
  bool semi_honest_secagg = false;      // lfl over daemons: opt out of active secure aggregation
  double secagg_design_dropout = 0;     // lfl: what k and t are sized for; 0 = omega
  int32_t secagg_threads = 2;           // in-process: threads for the devices' work
  bool secagg_session = false;          // one key setup for the whole job
};

// Hua et al. (hua-s1 | hua-s2 | hua-s2-tp | hua-s3).
struct HuaFlags {
  std::string hua_noise = "gamma-norm";  // S1: gamma-norm (Theorem 1) | laplace (Lemma 1)
  double hua_gamma = 1.0 / 32.0;
  double hua_lambda = 0.001;
  double hua_mu = 0.001;
  int32_t hua_baseline_rounds = 100;  // the non-private baseline's iterations (and S1's U)
  int32_t hua_max_online = 100;       // S3: K
  double hua_join = 0.005;            // S3: per iteration
  double hua_leave = 0.01;
  double hua_initial_online = -1;  // S3: < 0 is join / (join + leave)
  double hua_dropout = 0;          // S3: mid-iteration disconnect probability
  bool hua_paper_noise = false;    // the paper's mechanism: its noise, reported epsilon inf
  double hua_clip = 3;             // valid variant: C (0: the derived bound)
  bool hua_validate = false;       // fedmf train: evaluate on validation carved from training
};

// DP collaborative coupling learning (train --setting coupling); --dim,
// --lr (0: 0.01 per sample), --sample-rate (per rating), --epsilon/--delta
// and --validation-fraction are shared.
struct CouplingFlags {
  int32_t coupling_epochs = 20;
  double coupling_clip = 1.0 / 6;        // C (the paper's)
  double coupling_zeta = 0.01;           // zeta of the objective (6)
  double coupling_bound = 1;             // |S_ij|, |W_ij| after each step
  double coupling_init = 0.1;            // U, V, S, W start uniform in (-init, init)
  std::optional<double> coupling_sigma;  // the paper's absolute noise; overrides --epsilon
};

struct JobFlags : RunFlags,
                  OutputFlags,
                  TrainingFlags,
                  CrossSiloFlags,
                  LflFlags,
                  HuaFlags,
                  CouplingFlags {};

// The loader options the flags declare: --rating-range (or the older
// --rating-min); MIN >= 0 (the DP sensitivity assumes ratings in [0, MAX]).
absl::StatusOr<data::LoadOptions> LoadOptionsFromFlags(const JobFlags& flags);
// A loaded data set's scale must be the declared one when --rating-range was
// given (a synthetic spec declares its own: min=/max=).
absl::Status CheckDeclaredRange(const JobFlags& flags, const data::Dataset& dataset,
                                const std::string& spec);
// "warning: ..." when --rating-range was given and the data's ratings span
// less than half of it (the noise is sized for the declared scale), else "".
std::string DeclaredRangeWarning(const JobFlags& flags, const data::Dataset& dataset,
                                 const std::string& spec);
// Flags that contradict each other or mean nothing together (exit 2):
// --catalogue outside HFL, or without --party-data.
absl::Status CheckFlagCombination(const JobFlags& flags);
// A failure to load or check the data of `spec`: a data error (exit 4) for
// a file, left as it is (usage, exit 2) for a generated synthetic set.
absl::Status DataErrorOf(const std::string& spec, absl::Status s);
// LoadDataSpec(spec) with the declared scale, checked (the two above).
absl::StatusOr<data::Dataset> LoadWithDeclaredRange(const JobFlags& flags, const std::string& spec);

// --job FILE: every key the file sets becomes the value of the matching flag
// unless `cmd` (parsed) had that flag on its command line, so a partner
// rehearses with `fedmf train/demo` exactly the job it submits. The roster
// sets --parties (with --data), a catalogue path --catalogue (a digest must
// be --catalogue's). Keys that only a deployment uses (round deadline,
// min_parties; LFL/Hua device hosts, catalogue size, aggregator) are left to
// it. LFL and Hua S3 files map their own keys (job_file_keys lists those
// applied). Errors name the file and key.
absl::Status ApplyJobFile(const CLI::App& cmd, JobFlags& flags);

// Registers every flag above on `cmd`; --setting takes one of `settings`
// (the command's table of runners).
void AddJobFlags(CLI::App* cmd, JobFlags* flags, const std::vector<SettingKind>& settings);
// The LFL device options --algorithm (whole, the default, or paper),
// --lfl-clip and --validation-fraction set; errors name the flag.
absl::Status SetLflDeviceFlags(const JobFlags& flags, lfl::LflDeviceOptions& device);
// An LFL job's settings from the flags (--epsilon, --delta, --rounds
// iterations, --dim, --omega, learning rates, Stage 1/3 epochs, --secagg-bits
// and the device options above) for ratings up to `rating_max`. Not yet
// validated: the simulator adds its dropout, the demo its hosts.
absl::StatusOr<lfl::LflConfig> LflConfigFromFlags(const JobFlags& flags, double rating_max);

// The job described by the flags, for data with `range`.

absl::StatusOr<fmf::JobConfig> BuildJobConfig(const JobFlags& flags,
                                              const data::RatingRange& range);

}  // namespace fedmf::cli

#endif  // FEDMF_TOOLS_FEDMF_JOB_FLAGS_H_
