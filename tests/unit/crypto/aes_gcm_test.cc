#include "common/crypto/aes_gcm.h"

#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"
#include "tests/unit/crypto/hex.h"

using ::fedmf::testing::IsOk;
using ::fedmf::testing::StatusIs;

namespace fedmf::crypto {
namespace {

using testing::Hex;
using testing::ToHex;

struct GcmCase {
  const char* name;
  const char* key;
  const char* iv;
  const char* pt;
  const char* aad;
  const char* ct;
  const char* tag;
};

// McGrew & Viega, "The Galois/Counter Mode of Operation (GCM)", test cases
// 13-16 (the AES-256 cases with 96-bit IVs).
const GcmCase kGcmCases[] = {
    {"TC13 empty", "0000000000000000000000000000000000000000000000000000000000000000",
     "000000000000000000000000", "", "", "", "530f8afbc74536b9a963b4f1c4cb738b"},
    {"TC14 one block", "0000000000000000000000000000000000000000000000000000000000000000",
     "000000000000000000000000", "00000000000000000000000000000000", "",
     "cea7403d4d606b6e074ec5d3baf39d18", "d0d1c8a799996bf0265b98b5d48ab919"},
    {"TC15 64 bytes", "feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308",
     "cafebabefacedbaddecaf888",
     "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
     "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b391aafd255",
     "",
     "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa"
     "8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662898015ad",
     "b094dac5d93471bdec1a502270e3cc6c"},
    {"TC16 60 bytes + AAD", "feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308",
     "cafebabefacedbaddecaf888",
     "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
     "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39",
     "feedfacedeadbeeffeedfacedeadbeefabaddad2",
     "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa"
     "8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662",
     "76fc6ece0f4e1768cddf8853bb2d551b"},
};

TEST(AesGcmTest, McGrewViegaVectors) {
  for (const GcmCase& c : kGcmCases) {
    SCOPED_TRACE(c.name);
    const auto key = Hex(c.key), iv = Hex(c.iv), pt = Hex(c.pt), aad = Hex(c.aad);
    ASSERT_OK_AND_ASSIGN(auto sealed, AesGcmSealWithNonce(key, iv, pt, aad));
    EXPECT_EQ(ToHex(sealed), std::string(c.iv) + c.ct + c.tag);
    ASSERT_OK_AND_ASSIGN(auto opened, AesGcmOpen(key, sealed, aad));
    EXPECT_EQ(ToHex(opened.span()), c.pt);
  }
}

class AesGcmTamperTest : public ::testing::Test {
 protected:
  void SetUp() override {
    key_ = Hex("feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308");
    aad_ = Hex("73656e6465723d332c726563697069656e743d372c726f756e643d3132");
    plaintext_ = Hex("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f2021");
    ASSERT_OK_AND_ASSIGN(auto sealed, AesGcmSeal(key_, plaintext_, aad_, rng_));
    sealed_ = sealed;
  }
  void ExpectRejected(const std::vector<uint8_t>& sealed, const std::vector<uint8_t>& aad) {
    auto r = AesGcmOpen(key_, sealed, aad);
    ASSERT_THAT(r, StatusIs(absl::StatusCode::kDataLoss));
    EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss) << r.status();
  }

  random::Csprng rng_ = random::Csprng::FromSeed(99);
  std::vector<uint8_t> key_, aad_, plaintext_, sealed_;
};

TEST_F(AesGcmTamperTest, RoundTrips) {
  ASSERT_EQ(sealed_.size(), plaintext_.size() + kAesGcmOverheadBytes);
  ASSERT_OK_AND_ASSIGN(auto opened, AesGcmOpen(key_, sealed_, aad_));
  EXPECT_EQ(ToHex(opened.span()), ToHex(plaintext_));
}

// Every single-bit flip anywhere in nonce, ciphertext or tag is caught, at two
// bit positions per byte.
TEST_F(AesGcmTamperTest, DetectsAnyFlippedByteOfNonceCiphertextOrTag) {
  for (size_t i = 0; i < sealed_.size(); ++i) {
    for (uint8_t flip : {uint8_t{0x01}, uint8_t{0x80}}) {
      SCOPED_TRACE(i);
      std::vector<uint8_t> bad = sealed_;
      bad[i] ^= flip;
      ExpectRejected(bad, aad_);
    }
  }
}

TEST_F(AesGcmTamperTest, DetectsAnyFlippedByteOfAssociatedData) {
  for (size_t i = 0; i < aad_.size(); ++i) {
    SCOPED_TRACE(i);
    std::vector<uint8_t> bad = aad_;
    bad[i] ^= 0x01;
    ExpectRejected(sealed_, bad);
  }
  std::vector<uint8_t> longer = aad_;
  longer.push_back(0);
  ExpectRejected(sealed_, longer);
  ExpectRejected(sealed_, {});
}

TEST_F(AesGcmTamperTest, DetectsTruncationExtensionAndWrongKey) {
  std::vector<uint8_t> truncated(sealed_.begin(), sealed_.end() - 1);
  ExpectRejected(truncated, aad_);
  std::vector<uint8_t> extended = sealed_;
  extended.push_back(0);
  ExpectRejected(extended, aad_);
  std::vector<uint8_t> other_key = key_;
  other_key[0] ^= 1;
  auto r = AesGcmOpen(other_key, sealed_, aad_);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss);
}

TEST_F(AesGcmTamperTest, RandomNoncesDiffer) {
  ASSERT_OK_AND_ASSIGN(auto again, AesGcmSeal(key_, plaintext_, aad_, rng_));
  EXPECT_NE(ToHex(std::span(again).first(kAesGcmNonceBytes)),
            ToHex(std::span(sealed_).first(kAesGcmNonceBytes)));
  EXPECT_NE(again, sealed_);
}

// Each thread re-keys one context per direction for every call: a call's
// answer must not depend on the calls before it on that thread (another
// key, a failed authentication, empty or long texts) or on other threads
// doing the same at the same time.
TEST(AesGcmTest, EveryCallStandsAloneOnEveryThread) {
  const auto& tc = kGcmCases[3];  // TC16: AAD and a partial last block
  const std::vector<uint8_t> key = Hex(tc.key), nonce = Hex(tc.iv), pt = Hex(tc.pt),
                             aad = Hex(tc.aad);
  const std::string want = ToHex(Hex(tc.iv)) + tc.ct + tc.tag;
  const std::vector<uint8_t> other_key(32, 0x5a), long_pt(5000, 3);
  const auto round = [&](int i) -> bool {
    // Something different before each known-answer call.
    switch (i % 4) {
      case 0: {
        auto s = AesGcmSealWithNonce(other_key, nonce, long_pt, {});
        if (!s.ok() || AesGcmOpen(key, *s, {}).status().code() != absl::StatusCode::kDataLoss) {
          return false;
        }
        break;
      }
      case 1:
        if (!AesGcmSealWithNonce(other_key, nonce, {}, aad).ok()) return false;
        break;
      case 2: {
        std::vector<uint8_t> bad = Hex(want);
        bad.back() ^= 1;  // a failed open leaves the context mid-message
        if (AesGcmOpen(key, bad, aad).ok()) return false;
        break;
      }
      default: break;
    }
    auto sealed = AesGcmSealWithNonce(key, nonce, pt, aad);
    if (!sealed.ok() || ToHex(*sealed) != want) return false;
    auto opened = AesGcmOpen(key, *sealed, aad);
    return opened.ok() && std::vector<uint8_t>(opened->span().begin(), opened->span().end()) == pt;
  };
  for (int i = 0; i < 8; ++i) EXPECT_TRUE(round(i)) << i;
  std::vector<int> failures(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 500; ++i) failures[t] += round(i + t) ? 0 : 1;
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(failures, std::vector<int>(4, 0));
}

TEST(AesGcmTest, RejectsMalformedInputs) {
  random::Csprng rng = random::Csprng::FromSeed(1);
  const std::vector<uint8_t> key(32, 7), pt(10, 1);
  EXPECT_EQ(AesGcmSeal(std::vector<uint8_t>(16), pt, {}, rng).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(AesGcmSealWithNonce(key, std::vector<uint8_t>(16), pt, {}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(AesGcmOpen(std::vector<uint8_t>(31), std::vector<uint8_t>(40), {}).status().code(),
            absl::StatusCode::kInvalidArgument);
  for (size_t n : {0, 1, 12, 27}) {
    EXPECT_EQ(AesGcmOpen(key, std::vector<uint8_t>(n), {}).status().code(),
              absl::StatusCode::kInvalidArgument)
        << n;
  }
  // 28 bytes = empty plaintext with a bogus tag: authentication, not format.
  EXPECT_EQ(AesGcmOpen(key, std::vector<uint8_t>(28), {}).status().code(),
            absl::StatusCode::kDataLoss);
  // Empty plaintext round-trips.
  ASSERT_OK_AND_ASSIGN(auto sealed, AesGcmSeal(key, {}, {}, rng));
  ASSERT_OK_AND_ASSIGN(auto opened, AesGcmOpen(key, sealed, {}));
  EXPECT_TRUE(opened.empty());
}

}  // namespace
}  // namespace fedmf::crypto
