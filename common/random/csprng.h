// The one source of randomness for privacy (noise, sampling, masks, keys).
//
// AES-256-CTR keystream (OpenSSL EVP, AES-NI where available). By default the
// key comes from OpenSSL's RAND_bytes; an explicit seed derives the key with
// SHA-256 and is only for tests and reproducible experiments. Streams can be
// forked into independent children (per party, per round) deterministically.
#ifndef FEDMF_COMMON_RANDOM_CSPRNG_H_
#define FEDMF_COMMON_RANDOM_CSPRNG_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>

namespace fedmf::random {

class Csprng {
 public:
  // Seeded from the OS via OpenSSL RAND_bytes. Aborts if the OS has no entropy
  // (there is no safe fallback for a privacy system).
  static Csprng FromOsEntropy();
  // Deterministic stream for tests / reproducible experiments ONLY.
  static Csprng FromSeed(uint64_t seed);
  // `seed` if present, else OS entropy. The usual constructor for configs.
  static Csprng FromOptionalSeed(std::optional<uint64_t> seed);

  Csprng(Csprng&&) noexcept;
  Csprng& operator=(Csprng&&) noexcept;
  ~Csprng();

  // An independent child stream keyed by (this stream's key, label). Does not
  // advance this stream, so forks are stable regardless of call order.
  Csprng Fork(std::string_view label) const;
  // A second stream at this stream's exact position: it yields the very bytes
  // this stream yields next. Only for values the caller must reproduce later
  // without storing them (a device regenerating the noise it must cancel,
  // instead of holding a vector per device); never for fresh randomness,
  // which must not repeat.
  Csprng Replica() const;

  void FillBytes(uint8_t* out, size_t n);
  uint64_t NextU64();
  // Uniform in [0, 1) with 53 random bits.
  double NextDouble();
  // Uniform in (0, 1): never 0, safe for log().
  double NextOpenDouble();
  // Uniform integer in [0, bound), unbiased (rejection). bound > 0.
  uint64_t UniformInt(uint64_t bound);
  bool Bernoulli(double p);

  // UniformRandomBitGenerator, so std::shuffle works (never std::mt19937).
  using result_type = uint64_t;
  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return ~result_type{0}; }
  result_type operator()() { return NextU64(); }

 private:
  // On the VAES kernel iff `kernel` (else OpenSSL); same stream either way.
  Csprng(const std::array<uint8_t, 32>& key, bool kernel);
  explicit Csprng(const std::array<uint8_t, 32>& key);
  void Refill();

  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fedmf::random

#endif  // FEDMF_COMMON_RANDOM_CSPRNG_H_
