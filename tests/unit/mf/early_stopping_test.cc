#include "common/mf/early_stopping.h"

#include <vector>

#include "gtest/gtest.h"

namespace fedmf::mf {
namespace {

// Runs `errors` (epochs 1, 2, ...) until the rule stops; returns the epochs run.
int32_t EpochsRun(EarlyStopping& stopping, const std::vector<double>& errors) {
  int32_t e = 0;
  while (e < static_cast<int32_t>(errors.size()) && !stopping.ShouldStop()) {
    ++e;
    stopping.Observe(e, errors[static_cast<size_t>(e - 1)]);
  }
  return e;
}

TEST(EarlyStoppingTest, KeepsTheInitialModelWhenNoEpochBeatsIt) {
  EarlyStopping stopping(1.0, 3);
  EXPECT_EQ(EpochsRun(stopping, {1.0, 1.1, 1.2, 0.5}), 3);  // 1.0 is no new best
  EXPECT_EQ(stopping.best_epoch(), 0);
  EXPECT_DOUBLE_EQ(stopping.best_error(), 1.0);
}

TEST(EarlyStoppingTest, StopsAfterPatienceEpochsWithoutANewBest) {
  EarlyStopping stopping(2.0, 2);
  EXPECT_TRUE(stopping.Observe(1, 1.5));
  EXPECT_FALSE(stopping.Observe(2, 1.6));
  EXPECT_FALSE(stopping.ShouldStop());
  EXPECT_TRUE(stopping.Observe(3, 1.4));  // a new best resets the count
  EXPECT_FALSE(stopping.Observe(4, 1.4));
  EXPECT_FALSE(stopping.Observe(5, 1.45));
  EXPECT_TRUE(stopping.ShouldStop());
  EXPECT_EQ(stopping.best_epoch(), 3);
  EXPECT_DOUBLE_EQ(stopping.best_error(), 1.4);
}

// Party 0's refit on the 70k synthetic VFL set (s = 5, per rating, epsilon 1,
// --lr 9.6; docs/archive/results-2026.md, section stage3-patience): validation MSE after
// epochs 1-14. It rises for 7 epochs after epoch 1 before it falls; the
// default patience must wait that out (a patience of 5 stopped at epoch 6 and
// kept epoch 1).
TEST(EarlyStoppingTest, TheDefaultPatienceWaitsOutTheRiseSeenOnTheSyntheticSet) {
  const std::vector<double> trace = {1.00727, 1.02001, 1.02914, 1.03634, 1.03762, 1.03469, 1.02734,
                                     1.00992, 0.98710, 0.95791, 0.92520, 0.89198, 0.86231, 0.83180};
  const double initial = 1.05995;  // epoch 0: the model the refit starts from
  EarlyStopping patient(initial, kValidationPatience);
  EXPECT_EQ(EpochsRun(patient, trace), static_cast<int32_t>(trace.size()));
  EXPECT_EQ(patient.best_epoch(), 14);

  EarlyStopping impatient(initial, 5);
  EXPECT_EQ(EpochsRun(impatient, trace), 6);
  EXPECT_EQ(impatient.best_epoch(), 1);
}

}  // namespace
}  // namespace fedmf::mf
