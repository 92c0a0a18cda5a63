// The server's view of one device's masked input is independent of that
// input: with everybody else's randomness fixed, y_i - x_i is the same
// vector whatever x_i is (it is the device's own mask sum), and over fresh
// randomness y_i is uniform in Z_{2^bits} coordinate by coordinate, for any
// x_i — so two different inputs give identically distributed masked vectors.
#include <array>
#include <cstdint>
#include <vector>

#include "common/crypto/mod2k.h"
#include "common/secagg/simulate.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

using ::fedmf::testing::IsOk;

namespace fedmf::secagg {
namespace {

constexpr size_t kDevices = 6;
constexpr size_t kTarget = 2;  // the device whose privacy we look at

SimulationSpec Spec(uint64_t seed, size_t length, int bits, std::vector<uint64_t> target_input) {
  SimulationSpec spec;
  spec.num_devices = kDevices;
  spec.vector_length = length;
  spec.bits = bits;
  spec.graph = GraphKind::kComplete;
  spec.parameters = GraphParameters{GraphKind::kComplete, 0, 4, 4};
  spec.seed = seed;
  spec.record_masked_inputs = true;
  spec.input = [seed, length, bits, target_input](size_t index, DeviceId id) {
    if (index == kTarget) return target_input;
    return SimulationInput(seed, id, length, bits);
  };
  return spec;
}

std::vector<uint64_t> Constant(size_t n, uint64_t v) { return std::vector<uint64_t>(n, v); }

TEST(PrivacyTest, MaskedInputMinusInputDoesNotDependOnTheInput) {
  constexpr size_t kLen = 256;
  constexpr int kBits = 20;
  std::vector<uint64_t> x(kLen), x2(kLen);
  for (size_t i = 0; i < kLen; ++i) {
    x[i] = (i * 7919) & crypto::LowBitsMask(kBits);
    x2[i] = crypto::LowBitsMask(kBits) - i;
  }
  auto a = Simulate(Spec(42, kLen, kBits, x));
  auto b = Simulate(Spec(42, kLen, kBits, x2));
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_EQ(a->server_state, ServerState::kCompleted);
  const DeviceId target = a->config.roster[kTarget];
  // Everybody else's messages are bit-for-bit the same...
  for (const auto& [id, y] : a->masked_inputs) {
    if (id != target) {
      EXPECT_EQ(y, b->masked_inputs.at(id)) << id;
    }
  }
  // ...and the target's masked vector moved by exactly x2 - x: the mask
  // y - x is a function of the device's own randomness only.
  std::vector<uint64_t> mask_a = a->masked_inputs.at(target), mask_b = b->masked_inputs.at(target);
  ASSERT_THAT(crypto::SubMod2k(mask_a, x, kBits), IsOk());
  ASSERT_THAT(crypto::SubMod2k(mask_b, x2, kBits), IsOk());
  EXPECT_EQ(mask_a, mask_b);
  EXPECT_NE(a->masked_inputs.at(target), b->masked_inputs.at(target));
  EXPECT_EQ(a->sum, a->expected_sum);
  EXPECT_EQ(b->sum, b->expected_sum);
}

// Chi-square with 15 degrees of freedom; 37.70 is the p = 0.001 cut-off.
double ChiSquareUniform(const std::array<int, 16>& hist, int total) {
  const double e = total / 16.0;
  double chi2 = 0;
  for (int h : hist) chi2 += (h - e) * (h - e) / e;
  return chi2;
}

TEST(PrivacyTest, MaskedInputIsUniformPerCoordinateWhateverTheInput) {
  constexpr int kBits = 4;
  constexpr int kSeeds = 320;
  constexpr size_t kLen = 3;
  std::array<std::array<int, 16>, 2> first{};  // coordinate 0, per input
  std::array<std::array<int, 16>, 2> last{};   // coordinate kLen - 1
  const std::vector<uint64_t> inputs[2] = {Constant(kLen, 0), Constant(kLen, 15)};
  for (int s = 0; s < kSeeds; ++s) {
    for (int which = 0; which < 2; ++which) {
      ASSERT_OK_AND_ASSIGN(
          auto r, Simulate(Spec(1000 + static_cast<uint64_t>(s), kLen, kBits, inputs[which])));
      const auto& y = r.masked_inputs.at(r.config.roster[kTarget]);
      ++first[which][y[0]];
      ++last[which][y[kLen - 1]];
    }
  }
  for (int which = 0; which < 2; ++which) {
    EXPECT_LT(ChiSquareUniform(first[which], kSeeds), 37.70) << which;
    EXPECT_LT(ChiSquareUniform(last[which], kSeeds), 37.70) << which;
  }
  // Two-sample homogeneity between the inputs 0 and 15 (15 dof).
  double chi2 = 0;
  for (int v = 0; v < 16; ++v) {
    const double a = first[0][v], b = first[1][v];
    if (a + b > 0) chi2 += (a - b) * (a - b) / (a + b);
  }
  EXPECT_LT(chi2, 37.70);
}

TEST(PrivacyTest, MaskedVectorIsUniformAcrossCoordinates) {
  // One run, a long vector: the target's coordinates, whose input is all
  // zeros, look like uniform bytes (255 dof, p = 0.001 cut-off 330.5).
  constexpr size_t kLen = 1 << 14;
  ASSERT_OK_AND_ASSIGN(auto r, Simulate(Spec(7, kLen, 8, Constant(kLen, 0))));
  std::array<int, 256> hist{};
  for (uint64_t v : r.masked_inputs.at(r.config.roster[kTarget])) ++hist[v];
  const double e = kLen / 256.0;
  double chi2 = 0;
  for (int h : hist) chi2 += (h - e) * (h - e) / e;
  EXPECT_LT(chi2, 330.5);
}

}  // namespace
}  // namespace fedmf::secagg
