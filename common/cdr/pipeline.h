// The in-process PPGenCDR run: the target party's target-only baseline with
// its hyperparameters chosen on its validation items, the source party's
// private generator, and the target party's training on the generator's
// fake preferences with lambda_A chosen on validation (0 included, so the
// target never keeps a transfer that its own validation says hurts).
#ifndef FEDMF_COMMON_CDR_PIPELINE_H_
#define FEDMF_COMMON_CDR_PIPELINE_H_

#include <vector>

#include "absl/status/statusor.h"
#include "common/cdr/cross_domain_data.h"
#include "common/cdr/private_generator.h"
#include "common/cdr/ranking_metrics.h"
#include "common/cdr/target_model.h"

namespace fedmf::cdr {

struct TargetOnlyOptions {
  TargetOptions base;  // dim, epochs, batch, seed, ...
  std::vector<double> learning_rates = {0.02, 0.05, 0.1};
  std::vector<double> l2s = {1e-4, 1e-2};
};

struct TargetOnlyResult {
  TargetOptions chosen;  // the validation-best learning rate and l2
  RankingMetrics validation;
  RankingMetrics test;
};

// The grid over learning rate x l2 on data.validation (by NDCG@10), then the
// chosen model's test metrics.
absl::StatusOr<TargetOnlyResult> RunTargetOnly(const CrossDomainData& data,
                                               const TargetOnlyOptions& options);

struct CdrOptions {
  GanOptions gan;  // the source party's generator
  double delta = 1e-5;
  std::vector<double> lambda_align_grid = {0, 0.1, 1};  // the target's choice on validation
  double lambda_rc = 0.1;                               // 0 = the "-RC" ablation
};

struct CdrResult {
  PrivateGeneratorResult source;  // epsilon, steps, z (the generator itself is not kept)
  double noise_sigma = 0;
  double chosen_lambda_align = 0;
  RankingMetrics validation;
  RankingMetrics test;
};

// Trains the source's generator on data.source, samples every user's fake
// preference from it, and trains the target with `target` (e.g. the
// target-only choice) plus the transfer terms, lambda_A by validation NDCG@10.
absl::StatusOr<CdrResult> RunCdr(const CrossDomainData& data, const TargetOptions& target,
                                 const CdrOptions& options);

}  // namespace fedmf::cdr

#endif  // FEDMF_COMMON_CDR_PIPELINE_H_
