#include "tools/fedmf/privacy_command.h"

#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include "absl/strings/str_format.h"
#include "common/cli/command_line.h"
#include "common/dp/calibration.h"
#include "common/dp/rdp_accountant.h"
#include "common/dp/rdp_conversion.h"
#include "tools/fedmf/cli_util.h"

namespace fedmf::cli {
namespace {

struct PrivacyArgs {
  double sample_rate = 0.01;
  double noise_multiplier = 1.0;
  int64_t steps = 1000;
  double delta = 1e-5;
  // epsilon: one more Gaussian release (rate 1, one step) composed with the
  // steps — an FMF job's size release — and the whole composed K times (K
  // parties' releases about one record: VFL per user).
  double count_noise_multiplier = 0;
  int parties = 1;
  std::string epsilon = "1";
  bool json = false;
};

int RunEpsilon(const PrivacyArgs& a) {
  auto rdp_orders = dp::DefaultRdpOrders();
  auto rdp = dp::ComputeRdp(a.sample_rate, a.noise_multiplier, a.steps, rdp_orders);
  if (a.count_noise_multiplier > 0) {
    const auto count = dp::ComputeRdp(1.0, a.count_noise_multiplier, 1, rdp_orders);
    for (size_t i = 0; i < rdp.size(); ++i) rdp[i] += count[i];
  }
  for (double& r : rdp) r *= a.parties;
  auto eps = dp::RdpToEpsilon(rdp_orders, rdp, a.delta);
  if (!eps.ok()) {
    return Report("fedmf privacy epsilon", UsageError(eps.status()));
  }
  if (a.json) {
    nlohmann::json j = {{"epsilon", JsonNumber(eps->epsilon)},
                        {"delta", a.delta},
                        {"order", eps->order},
                        {"sample_rate", a.sample_rate},
                        {"noise_multiplier", a.noise_multiplier},
                        {"steps", a.steps},
                        {"count_noise_multiplier", a.count_noise_multiplier},
                        {"parties", a.parties}};
    std::cout << j.dump() << "\n";
  } else {
    std::cout << absl::StrFormat(
        "epsilon = %.6g at delta = %g (RDP order %g; q = %g, z = %g, %d steps%s%s)\n", eps->epsilon,
        a.delta, eps->order, a.sample_rate, a.noise_multiplier, a.steps,
        a.count_noise_multiplier > 0
            ? absl::StrFormat(", one Gaussian at z = %g", a.count_noise_multiplier)
            : "",
        a.parties > 1 ? absl::StrFormat(", all composed %d times", a.parties) : "");
  }
  return 0;
}

int RunNoise(const PrivacyArgs& a) {
  auto target = ParseEpsilon(a.epsilon, "--epsilon");
  if (!target.ok()) {
    return Report("fedmf privacy noise", UsageError(target.status()));
  }
  auto z = dp::CalibrateNoiseMultiplier(a.sample_rate, a.steps, a.delta, *target);
  if (!z.ok()) {
    return Report("fedmf privacy noise", UsageError(z.status()));
  }
  auto reached = dp::ComputeEpsilon(a.sample_rate, *z, a.steps, a.delta);
  if (a.json) {
    nlohmann::json j = {{"noise_multiplier", *z},
                        {"epsilon", *target},
                        {"epsilon_reached", reached.ok() ? JsonNumber(*reached) : nullptr},
                        {"delta", a.delta},
                        {"sample_rate", a.sample_rate},
                        {"steps", a.steps}};
    std::cout << j.dump() << "\n";
  } else {
    std::cout << absl::StrFormat(
        "noise multiplier z = %.6f for epsilon = %g, delta = %g (q = %g, %d steps; reaches "
        "epsilon = %.6g)\n",
        *z, *target, a.delta, a.sample_rate, a.steps, reached.ok() ? *reached : -1.0);
  }
  return 0;
}

void AddCommon(CLI::App* cmd, PrivacyArgs* a) {
  cmd->add_option("--sample-rate", a->sample_rate, "Poisson sampling rate q")
      ->required()
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--steps", a->steps, "number of steps")->required()->check(CLI::PositiveNumber);
  cmd->add_option("--delta", a->delta, "target delta")->required()->check(CLI::Range(0.0, 1.0));
  cmd->add_flag("--json", a->json, "print one JSON object");
}

}  // namespace

void RegisterPrivacyCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<PrivacyArgs>();
  CLI::App* privacy =
      app.add_subcommand("privacy", "privacy accounting (RDP, subsampled Gaussian)");
  privacy->require_subcommand(1);
  CLI::App* eps = privacy->add_subcommand("epsilon", "epsilon for a noise multiplier");
  AddCommon(eps, args.get());
  eps->add_option("--noise-multiplier", args->noise_multiplier, "noise multiplier z")
      ->required()
      ->check(CLI::PositiveNumber);
  eps->add_option("--count-noise-multiplier", args->count_noise_multiplier,
                  "compose one more Gaussian release at this z (an FMF job's size release: "
                  "`count_noise_multiplier` in fedmf train's JSON)")
      ->check(CLI::NonNegativeNumber);
  eps->add_option("--parties", args->parties,
                  "compose everything this many times (VFL per user: every party's releases "
                  "touch the user)")
      ->check(CLI::PositiveNumber);
  eps->callback([args, exit_code] { *exit_code = RunEpsilon(*args); });
  CLI::App* noise =
      privacy->add_subcommand("noise", "smallest noise multiplier for a target epsilon");
  AddCommon(noise, args.get());
  noise->add_option("--epsilon", args->epsilon, "target epsilon")->required();
  noise->callback([args, exit_code] { *exit_code = RunNoise(*args); });
}

}  // namespace fedmf::cli
