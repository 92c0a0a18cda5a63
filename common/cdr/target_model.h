// The target party's recommender: BPR matrix factorization (Rendle et al.
// 2009) on its own positives, optionally with PPGenCDR's robust CDR terms
// (paper Eq. 8-12) over fake source preferences sampled from the published
// generator. Without fake preferences (or with lambda_align = lambda_rc = 0
// and no encoder) it is the target-only baseline: the same code, so the
// comparison isolates what the source contributes.
//
// Simplifications of the paper (docs/cdr.md): the prediction loss is BPR's
// pairwise loss on (user, positive, sampled negative) triples rather than BCE
// on a DMF lookup table; Enc/Dec are linear maps of the unit-normalised fake
// vector; plain minibatch SGD instead of Adam.
#ifndef FEDMF_COMMON_CDR_TARGET_MODEL_H_
#define FEDMF_COMMON_CDR_TARGET_MODEL_H_

#include <cstdint>

#include "Eigen/Dense"
#include "absl/status/statusor.h"
#include "common/cdr/cross_domain_data.h"

namespace fedmf::cdr {

struct TargetOptions {
  int32_t dim = 32;
  int32_t epochs = 30;
  double learning_rate = 0.05;
  double l2 = 1e-4;
  double init_scale = 0.1;
  int32_t batch = 128;  // triples per step; the RC term is over a batch's users and items
  // Robust CDR (used only with fake source preferences):
  double lambda_align = 0;  // lambda_A: || z_S,u - z_T,u ||^2 (Eq. 9)
  double lambda_rc = 0;  // lambda_R: || C - I ||_F^2 of the batch's user and item factors (Eq. 11)
  double recon_weight = 1;  // weight of the auto-encoder loss (Eq. 8)
  uint64_t seed = 1;
};

struct TargetModel {
  Eigen::MatrixXd user;  // num_users x dim (z_T)
  Eigen::MatrixXd item;  // num_target_items x dim (v_T)
  Eigen::VectorXd item_bias;
  double Score(int32_t u, int32_t i) const { return user.row(u).dot(item.row(i)) + item_bias(i); }
};

// Trains on data.target_train. `fake_source` (num_users x num_source_items,
// may be null) holds the generated source preference of every user.
absl::StatusOr<TargetModel> TrainTarget(const CrossDomainData& data,
                                        const Eigen::MatrixXd* fake_source,
                                        const TargetOptions& options);

// The robustness conductor's loss || C - I ||_F^2 for the rows of `z`
// (C: cosine similarity of the centred columns, i.e. the correlation of the
// z-scored dimensions), and its gradient with respect to z. Columns with no
// spread contribute nothing. Exposed for its finite-difference test.
double RobustnessLoss(const Eigen::MatrixXd& z, Eigen::MatrixXd* gradient);

}  // namespace fedmf::cdr

#endif  // FEDMF_COMMON_CDR_TARGET_MODEL_H_
