// Messages between the roles of Hua et al. section 4 (recommender, users,
// semi-honest third party). Plain structs: the daemons convert them to wire
// types at the edge.
//
// EncodedBytes(m) is the size of m in a compact binary encoding, the number
// the simulator reports per user and iteration: int32 = 4 bytes, an enum = 1,
// a vector = a 4-byte length then its elements (double and Z_2^64 values are
// 8 bytes, int32 4).
#ifndef FEDMF_COMMON_HUA_MESSAGES_H_
#define FEDMF_COMMON_HUA_MESSAGES_H_

#include <cstdint>
#include <vector>

namespace fedmf::hua {

// Which kind of masked aggregation a report or a sum belongs to.
enum class Phase : uint8_t {
  kInit,       // S3 initialization: fixes eta_j once (beta masks, alpha_j)
  kIteration,  // one gradient iteration (psi masks)
};

// user -> recommender, once: the items the user rated (the paper's set R is
// public; only the rating values and u_i are private).
struct UserHello {
  int32_t user = 0;
  std::vector<int32_t> items;  // sorted, distinct
};

// One item in a recommender -> user request.
struct ItemRequest {
  int32_t item = 0;
  std::vector<double> v;  // v_j(t-1)
  // S2 / S2-TP, in a user's first request only: H_j and k = |User_j|.
  int32_t eta_users = 0;
  std::vector<double> h;
  // S2-TP / S3: H~_j(t) for this iteration's rho~ pieces (the paper's
  // mechanism only; empty in the valid variant), and their count k' (both).
  int32_t rho_users = 0;
  std::vector<double> h_rho;
  // S2-TP: psi_j(t), uniform in Z_2^64. S3: psi_j(t) + the user's share of
  // tau^_j (the user only ever adds the two, so they travel as one vector).
  std::vector<uint64_t> mask;
};

// recommender -> user: iteration t (1-based), pass 0, or a repair pass > 0
// that re-asks the users still online for items whose sum was withheld.
struct IterationRequest {
  int32_t iteration = 0;
  int32_t pass = 0;
  int32_t user = 0;
  std::vector<ItemRequest> items;
};

// S3 initialization: recommender -> user.
struct InitItem {
  int32_t item = 0;
  int32_t users = 0;           // k: how many users share eta_j
  std::vector<double> h;       // H_j
  std::vector<uint64_t> beta;  // beta_j^{i_s}, uniform in Z_2^64
};
struct InitRequest {
  int32_t round = 0;
  int32_t user = 0;
  std::vector<InitItem> items;
};

// S2 without third party: user -> recommender, grad + eta^{i_s} + rho(t).
struct NoisyGradient {
  int32_t item = 0;
  std::vector<double> value;
};
struct DirectReport {
  int32_t iteration = 0;
  int32_t user = 0;
  std::vector<NoisyGradient> items;
};

// user -> third party: masked values in Z_2^64. `shares`: the number of
// users k' the user split this item's noise among (the request's
// rho_users); the third party accepts the value only if the plan has exactly
// that many users for the item, so a recommender that lies about k' cannot
// thin the noise of a sum (third_party.h).
struct MaskedValue {
  int32_t item = 0;
  std::vector<uint64_t> value;
  int32_t shares = 0;
};
struct MaskedReport {
  Phase phase = Phase::kIteration;
  int32_t round = 0;  // iteration t, or the init round
  int32_t pass = 0;
  int32_t user = 0;
  std::vector<MaskedValue> items;
};

// recommender -> third party: who must report on which item. The third party
// forwards an item's sum only when every listed user reported.
struct PlannedItem {
  int32_t item = 0;
  std::vector<int32_t> users;  // sorted
};
struct AggregationPlan {
  Phase phase = Phase::kIteration;
  int32_t round = 0;
  int32_t pass = 0;
  std::vector<PlannedItem> items;
  // The valid variant (Gaussian shares): no eta_j, so S3 has no
  // initialization rounds and the third party no alpha_j pads. false: the
  // paper's mechanism.
  bool gaussian = false;
};

// third party -> recommender: complete sums only.
struct ItemSum {
  int32_t item = 0;
  int32_t contributors = 0;
  std::vector<uint64_t> sum;
};
struct AggregateForward {
  Phase phase = Phase::kIteration;
  int32_t round = 0;
  int32_t pass = 0;
  std::vector<ItemSum> items;
  std::vector<int32_t> incomplete_items;  // sums withheld: someone did not report
  std::vector<int32_t> missing_users;     // who did not report on those items
};

int64_t EncodedBytes(const UserHello& m);
int64_t EncodedBytes(const IterationRequest& m);
int64_t EncodedBytes(const InitRequest& m);
int64_t EncodedBytes(const DirectReport& m);
int64_t EncodedBytes(const MaskedReport& m);
int64_t EncodedBytes(const AggregationPlan& m);
int64_t EncodedBytes(const AggregateForward& m);

}  // namespace fedmf::hua

#endif  // FEDMF_COMMON_HUA_MESSAGES_H_
