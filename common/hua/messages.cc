#include "common/hua/messages.h"

namespace fedmf::hua {
namespace {

constexpr int64_t kInt = 4;
constexpr int64_t kEnum = 1;
constexpr int64_t kLength = 4;

template <typename T>
int64_t Vec(const std::vector<T>& v) {
  return kLength + static_cast<int64_t>(v.size() * sizeof(T));
}

template <typename T, typename F>
int64_t Sum(const std::vector<T>& items, F size) {
  int64_t total = kLength;
  for (const T& x : items) total += size(x);
  return total;
}

}  // namespace

int64_t EncodedBytes(const UserHello& m) { return kInt + Vec(m.items); }

int64_t EncodedBytes(const IterationRequest& m) {
  return 3 * kInt + Sum(m.items, [](const ItemRequest& r) {
           return 3 * kInt + Vec(r.v) + Vec(r.h) + Vec(r.h_rho) + Vec(r.mask);
         });
}

int64_t EncodedBytes(const InitRequest& m) {
  return 2 * kInt +
         Sum(m.items, [](const InitItem& r) { return 2 * kInt + Vec(r.h) + Vec(r.beta); });
}

int64_t EncodedBytes(const DirectReport& m) {
  return 2 * kInt + Sum(m.items, [](const NoisyGradient& r) { return kInt + Vec(r.value); });
}

int64_t EncodedBytes(const MaskedReport& m) {
  return kEnum + 3 * kInt +
         Sum(m.items, [](const MaskedValue& r) { return 2 * kInt + Vec(r.value); });
}

int64_t EncodedBytes(const AggregationPlan& m) {
  return 2 * kEnum + 2 * kInt +
         Sum(m.items, [](const PlannedItem& r) { return kInt + Vec(r.users); });
}

int64_t EncodedBytes(const AggregateForward& m) {
  return kEnum + 2 * kInt + Sum(m.items, [](const ItemSum& r) { return 2 * kInt + Vec(r.sum); }) +
         Vec(m.incomplete_items) + Vec(m.missing_users);
}

}  // namespace fedmf::hua
