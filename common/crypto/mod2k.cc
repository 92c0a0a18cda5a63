#include "common/crypto/mod2k.h"

#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"

namespace fedmf::crypto {
namespace {

absl::Status CheckArgs(size_t acc, size_t x, int bits) {
  RETURN_IF_ERROR(CheckModulusBits(bits));
  if (acc != x) return absl::InvalidArgumentError(absl::StrCat("size mismatch: ", acc, " vs ", x));
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckModulusBits(int bits) {
  if (bits < 1 || bits > 64) {
    return absl::InvalidArgumentError(absl::StrCat("bit width must be in [1, 64], got ", bits));
  }
  return absl::OkStatus();
}

absl::Status AddMod2k(std::span<uint64_t> acc, std::span<const uint64_t> x, int bits) {
  RETURN_IF_ERROR(CheckArgs(acc.size(), x.size(), bits));
  const uint64_t mask = LowBitsMask(bits);
  for (size_t i = 0; i < acc.size(); ++i) acc[i] = (acc[i] + x[i]) & mask;
  return absl::OkStatus();
}

absl::Status SubMod2k(std::span<uint64_t> acc, std::span<const uint64_t> x, int bits) {
  RETURN_IF_ERROR(CheckArgs(acc.size(), x.size(), bits));
  const uint64_t mask = LowBitsMask(bits);
  for (size_t i = 0; i < acc.size(); ++i) acc[i] = (acc[i] - x[i]) & mask;
  return absl::OkStatus();
}

}  // namespace fedmf::crypto
