// PPGenCDR's conditional generator and discriminator (paper Fig. 2, left):
// small MLPs in Eigen with explicit backward passes. The generator maps a
// user id alone to a fake source preference vector in (0,1)^items (the
// paper's appendix: G(u_id), as CFGAN); the discriminator scores a
// (preference vector, user) pair. Only the generator is ever released.
#ifndef FEDMF_COMMON_CDR_GENERATOR_H_
#define FEDMF_COMMON_CDR_GENERATOR_H_

#include <cstdint>
#include <vector>

#include "Eigen/Dense"
#include "common/random/csprng.h"

namespace fedmf::cdr {

// RMSprop (the paper's optimizer for the GAN) over one parameter block.
struct RmsProp {
  Eigen::MatrixXd mean_square;
  void Step(Eigen::MatrixXd& param, const Eigen::MatrixXd& grad, double lr, double decay = 0.9,
            double eps = 1e-8);
};

// G(u) = sigmoid(W2 relu(W1 e_u + b1) + b2).
class Generator {
 public:
  Generator() = default;
  Generator(int32_t num_users, int32_t num_items, int32_t latent, int32_t hidden,
            random::Csprng& rng);

  // Columns are the fake vectors of `users`.
  Eigen::MatrixXd Forward(const std::vector<int32_t>& users) const;
  // Every user's fake vector, one row per user (what the target party samples).
  Eigen::MatrixXd GenerateAll() const;
  // One RMSprop step given d loss / d output (columns aligned with `users`).
  void Backward(const std::vector<int32_t>& users, const Eigen::MatrixXd& output_grad, double lr);

  int32_t num_users() const { return static_cast<int32_t>(embedding_.rows()); }
  int32_t num_items() const { return static_cast<int32_t>(w2_.rows()); }

 private:
  Eigen::MatrixXd embedding_;  // users x latent
  Eigen::MatrixXd w1_, b1_;    // hidden x latent, hidden x 1
  Eigen::MatrixXd w2_, b2_;    // items x hidden, items x 1
  RmsProp opt_[5];
};

// D(r, u) = w2 . relu(A r + B_u + b1) + b2, weights clipped to
// [-weight_clip, weight_clip] after each step (WGAN's Lipschitz control).
class Discriminator {
 public:
  Discriminator() = default;
  Discriminator(int32_t num_users, int32_t num_items, int32_t hidden, random::Csprng& rng);

  // D of each column of `x` with its user.
  Eigen::VectorXd Forward(const Eigen::MatrixXd& x, const std::vector<int32_t>& users) const;
  // Per-example d D(x_i, u_i) / d x_i, one column per example.
  Eigen::MatrixXd InputGradient(const Eigen::MatrixXd& x, const std::vector<int32_t>& users) const;
  // One RMSprop step on the WGAN critic loss with the GAN stabilizer:
  //   mean D(fake) - mean D(real) + tau/2 (mean D(real)^2 + mean D(fake)^2)
  // (paper Eq. 1 and 6-7, written as a loss to minimise). Returns the loss.
  double TrainStep(const Eigen::MatrixXd& real, const Eigen::MatrixXd& fake,
                   const std::vector<int32_t>& users, double tau, double lr, double weight_clip);

 private:
  Eigen::MatrixXd a_;        // hidden x items
  Eigen::MatrixXd b_;        // hidden x users (user condition)
  Eigen::MatrixXd b1_, w2_;  // hidden x 1 each
  Eigen::MatrixXd b2_;       // 1 x 1
  RmsProp opt_[5];
};

}  // namespace fedmf::cdr

#endif  // FEDMF_COMMON_CDR_GENERATOR_H_
