// A byte buffer for key material that is wiped (OPENSSL_cleanse) when it dies.
//
// Its size is fixed at construction: growing a std::vector reallocates and
// would leave an unwiped copy of the old contents on the heap, so there is
// deliberately no resize/push_back. Equality is constant-time.
#ifndef FEDMF_COMMON_CRYPTO_SECRET_BYTES_H_
#define FEDMF_COMMON_CRYPTO_SECRET_BYTES_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace fedmf::crypto {

class SecretBytes {
 public:
  SecretBytes() = default;
  // `n` zero bytes, to be filled through data() / mutable_span().
  explicit SecretBytes(size_t n);
  // A copy of `bytes` (the caller still owns, and should wipe, the source).
  explicit SecretBytes(std::span<const uint8_t> bytes);

  SecretBytes(const SecretBytes& other);
  SecretBytes& operator=(const SecretBytes& other);
  SecretBytes(SecretBytes&& other) noexcept;
  SecretBytes& operator=(SecretBytes&& other) noexcept;
  ~SecretBytes();

  uint8_t* data() { return bytes_.data(); }
  const uint8_t* data() const { return bytes_.data(); }
  size_t size() const { return bytes_.size(); }
  bool empty() const { return bytes_.empty(); }
  std::span<const uint8_t> span() const { return bytes_; }
  std::span<uint8_t> mutable_span() { return bytes_; }

  // Constant-time in the contents (not in the sizes, which are public).
  friend bool operator==(const SecretBytes& a, const SecretBytes& b);

 private:
  void Wipe();
  std::vector<uint8_t> bytes_;
};

// Constant-time comparison for equal-size buffers; false if the sizes differ.
bool ConstantTimeEquals(std::span<const uint8_t> a, std::span<const uint8_t> b);

}  // namespace fedmf::crypto

#endif  // FEDMF_COMMON_CRYPTO_SECRET_BYTES_H_
