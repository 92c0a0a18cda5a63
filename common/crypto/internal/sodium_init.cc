#include "common/crypto/internal/sodium_init.h"

#include <sodium.h>

namespace fedmf::crypto::internal {

absl::Status EnsureSodium() {
  static const bool ok = sodium_init() >= 0;  // 1 = already initialised: fine
  if (!ok) return absl::InternalError("sodium_init failed");
  return absl::OkStatus();
}

}  // namespace fedmf::crypto::internal
