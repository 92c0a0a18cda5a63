#include "common/random/csprng.h"

#include <openssl/evp.h>
#include <openssl/sha.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/crypto/internal/aes256_ctr_kernel.h"
#include "gtest/gtest.h"

namespace fedmf::random {
namespace {

TEST(CsprngTest, SameSeedSameStream) {
  Csprng a = Csprng::FromSeed(7), b = Csprng::FromSeed(7);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(a.NextU64(), b.NextU64());
}

// The stream is AES-256-CTR (zero initial counter) under the key
// SHA-256("fedmf/csprng/seed/v1:" + seed), whichever engine the CPU runs
// (the VAES kernel or OpenSSL): seeded runs reproduce across machines.
TEST(CsprngTest, SeededStreamIsAes256CtrUnderTheSeedsKey) {
  const std::string material = "fedmf/csprng/seed/v1:42";
  uint8_t key[32];
  ASSERT_NE(SHA256(reinterpret_cast<const uint8_t*>(material.data()), material.size(), key),
            nullptr);
  constexpr size_t kBytes = 3 * 4096 + 100;  // across refills
  std::vector<uint8_t> zeros(kBytes, 0), want(kBytes), got(kBytes);
  const uint8_t counter[16] = {0};
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  int len = 0;
  ASSERT_EQ(EVP_EncryptInit_ex(ctx, EVP_aes_256_ctr(), nullptr, key, counter), 1);
  ASSERT_EQ(EVP_EncryptUpdate(ctx, want.data(), &len, zeros.data(), static_cast<int>(kBytes)), 1);
  EVP_CIPHER_CTX_free(ctx);
  Csprng rng = Csprng::FromSeed(42);
  rng.FillBytes(got.data(), got.size());
  EXPECT_EQ(got, want);
}

// The same stream with the kernel turned off (OpenSSL), replicas included.
TEST(CsprngTest, KernelAndOpenSslGiveTheSameStream) {
  // Without VAES every stream runs on OpenSSL: still the same stream.
  auto read = [] {
    Csprng rng = Csprng::FromSeed(43);
    std::vector<uint8_t> a(4096 + 77);
    rng.FillBytes(a.data(), a.size());
    Csprng replica = rng.Replica();
    std::vector<uint64_t> b;
    for (int i = 0; i < 1000; ++i) b.push_back(replica.NextU64());
    return std::make_pair(a, b);
  };
  const auto kernel = read();
  {
    crypto::internal::OpenSslAesCtrForTesting openssl;
    EXPECT_EQ(read(), kernel);
  }
  // A replica runs on its source's engine, whatever new streams use.
  Csprng source = Csprng::FromSeed(43);
  std::vector<uint8_t> skip(kernel.first.size());
  source.FillBytes(skip.data(), skip.size());
  crypto::internal::OpenSslAesCtrForTesting openssl;
  Csprng replica = source.Replica();
  for (uint64_t want : kernel.second) ASSERT_EQ(replica.NextU64(), want);
}

TEST(CsprngTest, DifferentSeedsDiffer) {
  Csprng a = Csprng::FromSeed(7), b = Csprng::FromSeed(8);
  int equal = 0;
  for (int i = 0; i < 100; ++i) equal += a.NextU64() == b.NextU64();
  EXPECT_EQ(equal, 0);
}

TEST(CsprngTest, OsEntropyStreamsDiffer) {
  Csprng a = Csprng::FromOsEntropy(), b = Csprng::FromOsEntropy();
  EXPECT_NE(a.NextU64(), b.NextU64());
}

TEST(CsprngTest, ForkIsDeterministicAndIndependentOfParentPosition) {
  Csprng a = Csprng::FromSeed(1);
  Csprng child1 = a.Fork("party-3");
  a.NextU64();
  Csprng child2 = a.Fork("party-3");
  Csprng other = a.Fork("party-4");
  uint64_t x = child1.NextU64();
  EXPECT_EQ(x, child2.NextU64());
  EXPECT_NE(x, other.NextU64());
}

// A replica taken mid-buffer and mid-stream yields exactly what its source
// yields next, across refills, and the two then run independently.
TEST(CsprngTest, ReplicaYieldsWhatTheSourceYieldsNext) {
  Csprng a = Csprng::FromSeed(5);
  std::vector<uint8_t> skip(4096 + 13);
  a.FillBytes(skip.data(), skip.size());  // past one refill, mid-buffer
  Csprng replica = a.Replica();
  std::vector<uint8_t> from_a(20000), from_replica(20000);
  a.FillBytes(from_a.data(), from_a.size());
  replica.FillBytes(from_replica.data(), from_replica.size());
  EXPECT_EQ(from_a, from_replica);
  EXPECT_EQ(a.NextU64(), replica.NextU64());
  // Independent afterwards: advancing one does not move the other.
  a.NextU64();
  Csprng fresh = Csprng::FromSeed(5);
  std::vector<uint8_t> prefix(skip.size() + from_a.size() + 8);
  fresh.FillBytes(prefix.data(), prefix.size());
  EXPECT_EQ(replica.NextU64(), fresh.NextU64());
}

TEST(CsprngTest, FillBytesMatchesAcrossChunkBoundaries) {
  Csprng a = Csprng::FromSeed(3), b = Csprng::FromSeed(3);
  std::vector<uint8_t> one(10000), two(10000);
  a.FillBytes(one.data(), one.size());
  size_t off = 0;
  for (size_t chunk : {1, 7, 4096, 3000, 2896}) {
    b.FillBytes(two.data() + off, chunk);
    off += chunk;
  }
  ASSERT_EQ(off, two.size());
  EXPECT_EQ(one, two);
}

TEST(CsprngTest, UniformDoubleMoments) {
  Csprng rng = Csprng::FromSeed(11);
  const int n = 200000;
  double sum = 0, sum2 = 0, lo = 1, hi = 0;
  for (int i = 0; i < n; ++i) {
    double x = rng.NextOpenDouble();
    ASSERT_GT(x, 0.0);
    ASSERT_LT(x, 1.0);
    sum += x;
    sum2 += x * x;
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  }
  double mean = sum / n, var = sum2 / n - mean * mean;
  EXPECT_NEAR(mean, 0.5, 0.005);
  EXPECT_NEAR(var, 1.0 / 12, 0.002);
}

TEST(CsprngTest, UniformIntIsInRangeAndCoversAllValues) {
  Csprng rng = Csprng::FromSeed(5);
  std::vector<int> counts(7, 0);
  for (int i = 0; i < 70000; ++i) {
    uint64_t v = rng.UniformInt(7);
    ASSERT_LT(v, 7u);
    counts[v]++;
  }
  for (int c : counts) EXPECT_NEAR(c, 10000, 500);
  EXPECT_EQ(rng.UniformInt(1), 0u);
}

TEST(CsprngTest, WorksWithStdShuffle) {
  Csprng rng = Csprng::FromSeed(9);
  std::vector<int> v(100);
  for (int i = 0; i < 100; ++i) v[i] = i;
  std::shuffle(v.begin(), v.end(), rng);
  std::set<int> s(v.begin(), v.end());
  EXPECT_EQ(s.size(), 100u);
  EXPECT_FALSE(std::is_sorted(v.begin(), v.end()));
}

}  // namespace
}  // namespace fedmf::random
