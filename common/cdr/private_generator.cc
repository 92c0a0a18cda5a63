#include "common/cdr/private_generator.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_format.h"
#include "common/base/status_macros.h"
#include "common/dp/calibration.h"
#include "common/dp/noise.h"
#include "common/dp/rdp_accountant.h"

namespace fedmf::cdr {

double StepNoiseMultiplier(double noise_sigma, int32_t batch) {
  return noise_sigma / (2.0 * std::sqrt(static_cast<double>(batch)));
}

absl::StatusOr<double> CalibrateFeedbackSigma(double target_epsilon, double delta, int32_t steps,
                                              int32_t batch) {
  if (batch < 1) return absl::InvalidArgumentError("generator batch must be >= 1");
  ASSIGN_OR_RETURN(double z, dp::CalibrateNoiseMultiplier(1.0, steps, delta, target_epsilon));
  return z * 2.0 * std::sqrt(static_cast<double>(batch));
}

Eigen::MatrixXd ClippedFeedback(const Discriminator& d, const Eigen::MatrixXd& fake,
                                const std::vector<int32_t>& users, double clip) {
  Eigen::MatrixXd g = -d.InputGradient(fake, users);
  for (Eigen::Index k = 0; k < g.cols(); ++k) {
    const double norm = g.col(k).norm();
    if (norm > clip) g.col(k) *= clip / norm;
  }
  return g;
}

Eigen::MatrixXd DenseColumns(const std::vector<std::vector<int32_t>>& source, int32_t num_items,
                             const std::vector<int32_t>& users) {
  Eigen::MatrixXd x = Eigen::MatrixXd::Zero(num_items, static_cast<Eigen::Index>(users.size()));
  for (size_t k = 0; k < users.size(); ++k) {
    for (int32_t i : source[users[k]]) x(i, static_cast<Eigen::Index>(k)) = 1.0;
  }
  return x;
}

namespace {

// N distinct users, uniformly (the batch is public: it is the generator's
// own choice and needs no privacy).
std::vector<int32_t> SampleBatch(random::Csprng& rng, int32_t num_users, int32_t n) {
  std::vector<int32_t> all(static_cast<size_t>(num_users));
  for (int32_t u = 0; u < num_users; ++u) all[u] = u;
  const int32_t take = std::min(n, num_users);
  for (int32_t k = 0; k < take; ++k) {
    const auto j = k + static_cast<int32_t>(rng.UniformInt(static_cast<uint64_t>(num_users - k)));
    std::swap(all[k], all[j]);
  }
  all.resize(static_cast<size_t>(take));
  return all;
}

}  // namespace

absl::StatusOr<PrivateGeneratorResult> TrainPrivateGenerator(
    const std::vector<std::vector<int32_t>>& source, int32_t num_items, const GanOptions& o,
    double delta) {
  const auto num_users = static_cast<int32_t>(source.size());
  if (num_users < 1 || num_items < 1) {
    return absl::InvalidArgumentError("private generator: no users or no source items");
  }
  if (o.latent < 1 || o.hidden < 1 || o.steps < 1 || o.batch < 1 || o.critic_steps < 1 ||
      !(o.clip > 0) || !(o.noise_sigma >= 0) || !(o.tau >= 0) || !std::isfinite(o.noise_sigma)) {
    return absl::InvalidArgumentError(
        "private generator: latent, hidden, steps, batch and critic steps must be >= 1, clip > 0, "
        "noise sigma >= 0 and finite, tau >= 0");
  }
  if (!(delta > 0 && delta < 1)) {
    return absl::InvalidArgumentError(absl::StrFormat("delta %g: must be in (0, 1)", delta));
  }
  for (const auto& row : source) {
    for (int32_t i : row) {
      if (i < 0 || i >= num_items) {
        return absl::InvalidArgumentError(
            absl::StrFormat("source item %d outside [0, %d)", i, num_items));
      }
    }
  }
  random::Csprng root = random::Csprng::FromOptionalSeed(o.seed);
  random::Csprng init = root.Fork("cdr/gan/init");
  random::Csprng batches = root.Fork("cdr/gan/batches");
  random::Csprng noise = root.Fork("cdr/gan/noise");

  PrivateGeneratorResult r;
  r.generator = Generator(num_users, num_items, o.latent, o.hidden, init);
  Discriminator d(num_users, num_items, o.hidden, init);
  const int32_t n = std::min(o.batch, num_users);
  r.noise_multiplier = StepNoiseMultiplier(o.noise_sigma, n);
  dp::RdpAccountant accountant;
  for (int32_t step = 0; step < o.steps; ++step) {
    // The discriminator trains on the private vectors (never released).
    for (int32_t c = 0; c < o.critic_steps; ++c) {
      const std::vector<int32_t> users = SampleBatch(batches, num_users, n);
      d.TrainStep(DenseColumns(source, num_items, users), r.generator.Forward(users), users, o.tau,
                  o.discriminator_lr, o.weight_clip);
    }
    // The generator learns from the sanitized feedback only.
    const std::vector<int32_t> users = SampleBatch(batches, num_users, n);
    Eigen::MatrixXd feedback = ClippedFeedback(d, r.generator.Forward(users), users, o.clip);
    if (o.noise_sigma > 0) {
      dp::AddGaussian(noise, o.noise_sigma * o.clip, feedback.data(),
                      static_cast<size_t>(feedback.size()));
      accountant.AddSteps(1.0, r.noise_multiplier, 1);
    }
    r.generator.Backward(users, feedback / static_cast<double>(n), o.generator_lr);
    ++r.steps;
  }
  r.delta = delta;
  if (o.noise_sigma > 0) {
    ASSIGN_OR_RETURN(dp::EpsilonResult e, accountant.GetEpsilon(delta));
    r.epsilon = e.epsilon;
  } else {
    r.epsilon = std::numeric_limits<double>::infinity();
  }
  return r;
}

}  // namespace fedmf::cdr
