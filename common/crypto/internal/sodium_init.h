// libsodium must be initialised once before use (it picks the fastest
// implementation for the CPU and seeds its own RNG, which we never use:
// every key comes from random::Csprng).
#ifndef FEDMF_COMMON_CRYPTO_INTERNAL_SODIUM_INIT_H_
#define FEDMF_COMMON_CRYPTO_INTERNAL_SODIUM_INIT_H_

#include "absl/status/status.h"

namespace fedmf::crypto::internal {

// OK once sodium_init() succeeded; cheap after the first call (a function
// static, so no lock is taken again).
absl::Status EnsureSodium();

}  // namespace fedmf::crypto::internal

#endif  // FEDMF_COMMON_CRYPTO_INTERNAL_SODIUM_INIT_H_
