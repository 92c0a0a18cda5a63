// Named random streams of one simulated run, forked from one root so every
// role's randomness is independent of every other's and of call order.
#ifndef FEDMF_COMMON_HUA_STREAMS_H_
#define FEDMF_COMMON_HUA_STREAMS_H_

#include <cstdint>
#include <string>

#include "common/random/csprng.h"

namespace fedmf::hua {

inline random::Csprng UserStream(const random::Csprng& root, int32_t user) {
  return root.Fork("hua/user/" + std::to_string(user));
}
inline random::Csprng RecommenderStream(const random::Csprng& root) {
  return root.Fork("hua/recommender");
}
inline random::Csprng ThirdPartyStream(const random::Csprng& root) {
  return root.Fork("hua/third-party");
}
// Who is online, who drops out: the simulated world, not a protocol role.
inline random::Csprng DynamicsStream(const random::Csprng& root) {
  return root.Fork("hua/dynamics");
}

}  // namespace fedmf::hua

#endif  // FEDMF_COMMON_HUA_STREAMS_H_
