#include "tools/fedmf/accounting_json.h"

#include <charconv>
#include <string>

#include "absl/strings/str_cat.h"

namespace fedmf::cli {
namespace {

// The shortest text that reads back as exactly x (std::to_chars), so the
// command recomputes the very number.
std::string Exact(double x) {
  char buf[64];
  const auto end = std::to_chars(buf, buf + sizeof(buf), x).ptr;
  return std::string(buf, end);
}

}  // namespace

void AddFmfAccounting(const fmf::JobConfig& config, const fmf::NoisePlan& plan, int parties,
                      nlohmann::json& j) {
  j["sampling_unit"] = fmf::SamplingUnitName(plan.sampling_unit);
  j["sample_rate"] = plan.sample_rate;
  j["noise_multiplier"] = plan.noise_multiplier;
  j["steps"] = plan.steps;
  j["count_noise_multiplier"] = plan.count_noise_multiplier;
  if (!plan.private_training) {
    j["accounting"] = nullptr;
    return;
  }
  nlohmann::json releases = nlohmann::json::array();
  releases.push_back({{"release", "gradient steps"},
                      {"mechanism", "poisson_subsampled_gaussian"},
                      {"sampling_unit", fmf::SamplingUnitName(plan.sampling_unit)},
                      {"sample_rate", plan.sample_rate},
                      {"noise_multiplier", plan.noise_multiplier},
                      {"steps", plan.steps}});
  std::string command = absl::StrCat(
      "fedmf privacy epsilon --sample-rate ", Exact(plan.sample_rate), " --noise-multiplier ",
      Exact(plan.noise_multiplier), " --steps ", plan.steps, " --delta ", Exact(plan.delta));
  if (plan.count_noise_multiplier > 0) {
    releases.push_back({{"release", "size"},
                        {"mechanism", "gaussian"},
                        {"sample_rate", 1.0},
                        {"noise_multiplier", plan.count_noise_multiplier},
                        {"steps", 1}});
    absl::StrAppend(&command, " --count-noise-multiplier ", Exact(plan.count_noise_multiplier));
  }
  nlohmann::json a = {
      {"accountant", "rdp"},
      {"rdp_orders", "1.25 to 10 in steps of 0.25, 11 to 64, 80, 96, 128, 192, 256, 512, 1024"},
      {"conversion", "improved RDP to (epsilon, delta) (Balle et al. 2020, as dp_accounting)"},
      {"delta", plan.delta},
      {"neighbours",
       fmf::GranularityName(config.setting == fmf::Setting::kCoupling ? fmf::Granularity::kRating
                                                                      : config.granularity)},
      {"composes", releases},
      {"epsilon_command", command}};
  if (config.setting == fmf::Setting::kVfl && config.granularity == fmf::Granularity::kUser) {
    // A user's ratings sit at every party: the parties' curves compose.
    a["epsilon_per_user_global_command"] = absl::StrCat(command, " --parties ", parties);
  }
  j["accounting"] = std::move(a);
}

}  // namespace fedmf::cli
