#include "common/cdr/pipeline.h"

#include "common/base/status_macros.h"

namespace fedmf::cdr {
namespace {

RankingMetrics Evaluate(const TargetModel& m, const std::vector<EvalCase>& cases) {
  return EvaluateRanking(cases, [&m](int32_t u, int32_t i) { return m.Score(u, i); });
}

}  // namespace

absl::StatusOr<TargetOnlyResult> RunTargetOnly(const CrossDomainData& data,
                                               const TargetOnlyOptions& options) {
  TargetOnlyResult best;
  bool have = false;
  TargetModel best_model;
  for (double lr : options.learning_rates) {
    for (double l2 : options.l2s) {
      TargetOptions o = options.base;
      o.learning_rate = lr;
      o.l2 = l2;
      ASSIGN_OR_RETURN(TargetModel m, TrainTarget(data, nullptr, o));
      const RankingMetrics v = Evaluate(m, data.validation);
      if (!have || v.ndcg_at_10 > best.validation.ndcg_at_10) {
        have = true;
        best.chosen = o;
        best.validation = v;
        best_model = std::move(m);
      }
    }
  }
  if (!have) return absl::InvalidArgumentError("target-only: empty hyperparameter grid");
  best.test = Evaluate(best_model, data.test);
  return best;
}

absl::StatusOr<CdrResult> RunCdr(const CrossDomainData& data, const TargetOptions& target,
                                 const CdrOptions& options) {
  if (options.lambda_align_grid.empty()) {
    return absl::InvalidArgumentError("cdr: empty lambda_A grid");
  }
  CdrResult out;
  out.noise_sigma = options.gan.noise_sigma;
  ASSIGN_OR_RETURN(out.source, TrainPrivateGenerator(data.source, data.num_source_items,
                                                     options.gan, options.delta));
  // What the target party does with the published generator: sample a fake
  // source preference for each of its users.
  const Eigen::MatrixXd fake = out.source.generator.GenerateAll();
  out.source.generator = Generator();
  bool have = false;
  TargetModel best_model;
  for (double lambda_align : options.lambda_align_grid) {
    TargetOptions o = target;
    o.lambda_align = lambda_align;
    // lambda_A = 0 is the target-only model itself (no transfer term at all),
    // so the choice can always fall back on it.
    o.lambda_rc = lambda_align > 0 ? options.lambda_rc : 0;
    ASSIGN_OR_RETURN(TargetModel m, TrainTarget(data, &fake, o));
    const RankingMetrics v = Evaluate(m, data.validation);
    if (!have || v.ndcg_at_10 > out.validation.ndcg_at_10) {
      have = true;
      out.chosen_lambda_align = lambda_align;
      out.validation = v;
      best_model = std::move(m);
    }
  }
  out.test = Evaluate(best_model, data.test);
  return out;
}

}  // namespace fedmf::cdr
