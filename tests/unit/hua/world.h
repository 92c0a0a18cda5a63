// A tiny federation of Hua et al.'s roles, wired by hand so tests can watch
// and interfere with every message.
#ifndef FEDMF_TESTS_UNIT_HUA_WORLD_H_
#define FEDMF_TESTS_UNIT_HUA_WORLD_H_

#include <memory>
#include <optional>
#include <set>
#include <vector>

#include "absl/status/statusor.h"
#include "common/hua/recommender.h"
#include "common/hua/third_party.h"
#include "common/hua/user.h"
#include "common/hua/zp_codec.h"

namespace fedmf::hua::testing {

struct World {
  HuaParams params;
  data::RatingRange range{1.0, 5.0};
  std::unique_ptr<random::Csprng> root;
  std::optional<ZpCodec> codec;
  std::optional<Recommender> server;
  std::optional<ThirdParty> tp;
  std::vector<User> users;  // users[i] has id i
  std::vector<std::vector<RatedItem>> ratings;
};

// Users 0..ratings.size()-1; every role's stream forked from FromSeed(seed)
// as the simulator does. `paper_noise`: the paper's mechanism (the tests of
// its noise and masking), or the valid variant.
std::unique_ptr<World> MakeWorld(Scenario scenario, uint64_t seed,
                                 const std::vector<std::vector<RatedItem>>& ratings,
                                 int32_t num_items, int32_t dim, double epsilon,
                                 bool paper_noise = true);

// The default test ratings: 6 users, 4 items, every item with >= 3 raters.
std::vector<std::vector<RatedItem>> SmallRatings();

// S3 initialization with `online` users (all report).
absl::Status RunInit(World& w, const std::vector<int32_t>& online);

// One pass of a masked iteration: every requested user reports to the third
// party except those in `drop`; returns the recommender's next (repair)
// round. `seen`, if non-null, receives the reports the third party got.
absl::StatusOr<Round> RunMaskedPass(World& w, const Round& round, const std::set<int32_t>& drop,
                                    std::vector<MaskedReport>* seen = nullptr);

// A whole masked iteration with `participants`, `drop` vanishing after
// downloading pass 0; ends with FinishIteration.
absl::Status RunMaskedIteration(World& w, const std::vector<int32_t>& participants,
                                const std::set<int32_t>& drop);

}  // namespace fedmf::hua::testing

#endif  // FEDMF_TESTS_UNIT_HUA_WORLD_H_
