// Choosing a number of training epochs by a held-out error.
#ifndef FEDMF_COMMON_MF_EARLY_STOPPING_H_
#define FEDMF_COMMON_MF_EARLY_STOPPING_H_

#include <cstdint>

namespace fedmf::mf {

// Epochs without a new best after which a fit stops. SGD's held-out error is
// not monotone: off a noisy or released model it can rise for several epochs
// before it falls. On the 70k synthetic VFL set the refit's error rose for up
// to 7 epochs (1.007 -> 1.038) before falling to 0.555; a patience of 5 kept
// the model from epoch 1 (docs/archive/results-2026.md, section stage3-patience).
inline constexpr int32_t kValidationPatience = 10;

// Epoch 0 is the model before any training, with `initial_error`. Observe()
// each epoch's held-out error in order (1, 2, ...); ShouldStop() once
// `patience` epochs in a row brought no new best (strictly lower error).
class EarlyStopping {
 public:
  EarlyStopping(double initial_error, int32_t patience)
      : best_error_(initial_error), patience_(patience) {}

  // Returns true when `error` is a new best, i.e. epoch `epoch` is the one
  // to keep so far.
  bool Observe(int32_t epoch, double error) {
    if (error < best_error_) {
      best_error_ = error;
      best_epoch_ = epoch;
      since_best_ = 0;
      return true;
    }
    ++since_best_;
    return false;
  }
  bool ShouldStop() const { return since_best_ >= patience_; }
  int32_t best_epoch() const { return best_epoch_; }  // 0: keep the initial model
  double best_error() const { return best_error_; }

 private:
  double best_error_;
  int32_t best_epoch_ = 0;
  int32_t since_best_ = 0;
  int32_t patience_;
};

}  // namespace fedmf::mf

#endif  // FEDMF_COMMON_MF_EARLY_STOPPING_H_
