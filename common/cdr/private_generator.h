// The source party's stable privacy-preserving generator (SPPG, paper Eq.
// 1-7) with GS-WGAN's privacy analysis (Chen, Orekondy, Fritz 2020), which
// is what the paper's Theorem 1 computes:
//   * only the discriminator reads the private source vectors, and it is
//     never released;
//   * the generator learns only from the "sanitized feedback": per example
//     of a generator batch, the gradient of the generator loss -D(G(u), u)
//     with respect to the generated sample, clipped to L2 norm C, plus
//     N(0, (sigma C)^2 I);
//   * neighbouring = one user's whole source vector replaced (the user set
//     is the PSI intersection, public to both parties). The discriminator can
//     change arbitrarily with it, so every one of the N clipped vectors of a
//     step may change by up to 2C: the step's L2 sensitivity is 2 C sqrt(N),
//     its noise std sigma C, i.e. a Gaussian mechanism with noise multiplier
//     z = sigma / (2 sqrt(N)): (alpha, 2 N alpha / sigma^2)-RDP, Theorem 1's
//     value. Composed over the T generator steps with no subsampling
//     amplification (the discriminator sees every user, so no user sits a
//     step out). docs/privacy.md, section cdr, has the derivation.
#ifndef FEDMF_COMMON_CDR_PRIVATE_GENERATOR_H_
#define FEDMF_COMMON_CDR_PRIVATE_GENERATOR_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "Eigen/Dense"
#include "absl/status/statusor.h"
#include "common/cdr/generator.h"
#include "common/random/csprng.h"

namespace fedmf::cdr {

struct GanOptions {
  int32_t latent = 32;       // the generator's user embedding (the paper: K = 200)
  int32_t hidden = 64;       // hidden units of G and of D
  int32_t steps = 300;       // generator steps T, each charged to the accountant
  int32_t batch = 64;        // N users per step (the paper: 128)
  int32_t critic_steps = 2;  // discriminator steps per generator step
  double generator_lr = 1e-3;
  double discriminator_lr = 1e-3;
  double tau = 0.5;          // the GAN stabilizer; 0 = off (the "-GS" ablation)
  double weight_clip = 0.1;  // the discriminator's WGAN weight clipping
  double clip = 1.0;         // C: per-example L2 bound of the feedback
  // sigma: the feedback noise std is sigma * C per coordinate; 0 = no noise
  // (the non-private pipeline, epsilon = inf).
  double noise_sigma = 0;
  // Initialisation, batches and noise; empty = OS entropy (production). A
  // seed is a local test and experiment knob, never taken from a peer.
  std::optional<uint64_t> seed;
};

// The accountant's noise multiplier of one step: sensitivity 2 C sqrt(N),
// std sigma C, so z = sigma / (2 sqrt(N)).
double StepNoiseMultiplier(double noise_sigma, int32_t batch);
// The smallest sigma whose T steps give epsilon <= target at delta
// (dp::CalibrateNoiseMultiplier at q = 1, then sigma = 2 sqrt(N) z).
absl::StatusOr<double> CalibrateFeedbackSigma(double target_epsilon, double delta, int32_t steps,
                                              int32_t batch);

// The feedback before noise: column k is -dD(x_k, u_k)/dx_k scaled to L2 norm
// <= clip. The only function through which the discriminator (hence the
// private data) reaches the generator; exposed for the sensitivity test.
Eigen::MatrixXd ClippedFeedback(const Discriminator& d, const Eigen::MatrixXd& fake,
                                const std::vector<int32_t>& users, double clip);

struct PrivateGeneratorResult {
  Generator generator;  // the only thing that leaves the source party
  double epsilon = 0;   // +inf without noise
  double delta = 0;
  int64_t steps = 0;            // steps charged
  double noise_multiplier = 0;  // z per step (0: no noise)
};

// Trains G against D on the users' source vectors (`source[u]` = the sorted
// positive items of user u), charging an RDP accountant (common/dp) one
// Gaussian step per generator step; epsilon is read from it at `delta`.
absl::StatusOr<PrivateGeneratorResult> TrainPrivateGenerator(
    const std::vector<std::vector<int32_t>>& source, int32_t num_items, const GanOptions& options,
    double delta);

// The users' 0/1 vectors as columns.
Eigen::MatrixXd DenseColumns(const std::vector<std::vector<int32_t>>& source, int32_t num_items,
                             const std::vector<int32_t>& users);

}  // namespace fedmf::cdr

#endif  // FEDMF_COMMON_CDR_PRIVATE_GENERATOR_H_
