#include "tools/fedmf/lfl_train.h"

#include <cmath>
#include <iostream>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "common/data/loaders.h"
#include "common/lfl/lfl_simulator.h"
#include "tools/fedmf/cli_util.h"

namespace fedmf::cli {

int RunLflTrain(const JobFlags& a) {
  auto dataset = data::LoadDataSpec(a.data);
  if (!dataset.ok()) {
    std::cerr << "fedmf train: --data: " << dataset.status().message() << "\n";
    return 2;
  }
  lfl::LflConfig c;
  auto eps = ParseEpsilon(a.epsilon, "--epsilon");
  if (!eps.ok()) {
    std::cerr << "fedmf train: " << eps.status().message() << "\n";
    return 2;
  }
  c.epsilon = *eps;
  c.delta = a.delta;
  c.iterations = a.rounds;
  c.dim = a.dim;
  c.omega = a.omega;
  c.learning_rate = a.lr;
  c.lr_final_ratio = a.lr_final_ratio;
  c.seed = a.seed;
  c.device.rating_max = dataset->range.max;
  c.device.sgd_learning_rate = a.sgd_lr;
  c.device.sgd_l2 = a.sgd_l2;
  c.device.pretrain_epochs = a.pretrain_epochs;
  c.device.finetune_epochs = a.finetune_epochs;
  std::vector<std::string> parts = absl::StrSplit(a.dropout, ',');
  if (parts.size() != 2 || !absl::SimpleAtod(parts[0], &c.dropout_round1) ||
      !absl::SimpleAtod(parts[1], &c.dropout_round2)) {
    std::cerr << "fedmf train: --dropout '" << a.dropout << "': expected P1,P2, e.g. 0.1,0.05\n";
    return 2;
  }
  if (auto s = lfl::ValidateLflConfig(c); !s.ok()) {
    std::cerr << "fedmf train: " << s.message() << "\n";
    return 2;
  }
  // Until the secure aggregation is wired in here, only the ideal sum runs.
  auto r = lfl::SimulateLfl(c, *dataset, lfl::IdealSum);
  if (!r.ok()) {
    std::cerr << "fedmf train: " << r.status().message() << "\n";
    return 1;
  }
  if (!a.quiet) {
    for (const auto& it : r->iterations) {
      std::cerr << absl::StrFormat("iteration %3d/%d  U1 %5d  U2 %5d  %s\n", it.iteration + 1,
                                   c.iterations, it.round1_survivors, it.round2_survivors,
                                   it.skipped ? "skipped (too few survivors)" : "");
    }
  }
  int64_t skipped = 0;
  for (const auto& it : r->iterations) skipped += it.skipped ? 1 : 0;
  if (a.json) {
    nlohmann::json j = {{"setting", "lfl"},
                        {"data", a.data},
                        {"test_mse", r->test.mse},
                        {"test_rmse", r->test.rmse},
                        {"stage1_test_mse", r->stage1_test.mse},
                        {"epsilon", JsonNumber(r->epsilon)},
                        {"epsilon_target", JsonNumber(c.epsilon)},
                        {"delta", c.delta},
                        {"noise_multiplier", r->noise_multiplier},
                        {"sigma_v", r->sigma_v},
                        {"omega", c.omega},
                        {"dropout_round1", c.dropout_round1},
                        {"dropout_round2", c.dropout_round2},
                        {"rounds", c.iterations},
                        {"skipped", skipped},
                        {"parties", r->devices},
                        {"learning_rate", c.EffectiveLearningRate()},
                        {"aggregation", "ideal"},
                        {"seconds", r->seconds}};
    std::cout << j.dump() << "\n";
  } else {
    std::cout << absl::StrFormat(
        "lfl: %d devices, test MSE %.4f (Stage 1 alone %.4f); epsilon %s at delta %g (z = %.4f, "
        "sigma_v = %.3f); %d iterations, %d skipped; %.1f s\n",
        r->devices, r->test.mse, r->stage1_test.mse,
        std::isinf(r->epsilon) ? "inf" : absl::StrFormat("%.4f", r->epsilon), c.delta,
        r->noise_multiplier, r->sigma_v, c.iterations, skipped, r->seconds);
  }
  return 0;
}

}  // namespace fedmf::cli
