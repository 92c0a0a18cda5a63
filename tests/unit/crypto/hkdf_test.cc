#include "common/crypto/hkdf.h"

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/params.h>

#include <vector>

#include "common/random/csprng.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"
#include "tests/unit/crypto/hex.h"

using ::fedmf::testing::IsOk;

namespace fedmf::crypto {
namespace {

using testing::Hex;
using testing::ToHex;

struct Rfc5869Case {
  const char* name;
  const char* ikm;
  const char* salt;
  const char* info;
  size_t length;
  const char* prk;
  const char* okm;
};

// RFC 5869 Appendix A, test cases 1-3 (SHA-256).
const Rfc5869Case kRfc5869Cases[] = {
    {"A.1 basic", "0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b", "000102030405060708090a0b0c",
     "f0f1f2f3f4f5f6f7f8f9", 42, "077709362c2e32df0ddc3f0dc47bba6390b6c73bb50f9c3122ec844ad7c2b3e5",
     "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865"},
    {"A.2 long inputs/outputs",
     "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
     "202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f"
     "404142434445464748494a4b4c4d4e4f",
     "606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f"
     "808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f"
     "a0a1a2a3a4a5a6a7a8a9aaabacadaeaf",
     "b0b1b2b3b4b5b6b7b8b9babbbcbdbebfc0c1c2c3c4c5c6c7c8c9cacbcccdcecf"
     "d0d1d2d3d4d5d6d7d8d9dadbdcdddedfe0e1e2e3e4e5e6e7e8e9eaebecedeeef"
     "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff",
     82, "06a6b88c5853361a06104c9ceb35b45cef760014904671014a193f40c15fc244",
     "b11e398dc80327a1c8e7f78c596a49344f012eda2d4efad8a050cc4c19afa97c"
     "59045a99cac7827271cb41c65e590e09da3275600c2f09b8367793a9aca3db71"
     "cc30c58179ec3e87c14c01d5c1f3434f1d87"},
    {"A.3 zero-length salt and info", "0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b", "", "", 42,
     "19ef24a32c717b167f33a91d6f648bdf96596776afdb6377ac434c1c293ccb04",
     "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8"},
};

TEST(HkdfTest, Rfc5869TestCases) {
  for (const Rfc5869Case& c : kRfc5869Cases) {
    SCOPED_TRACE(c.name);
    const auto ikm = Hex(c.ikm), salt = Hex(c.salt), info = Hex(c.info);
    ASSERT_OK_AND_ASSIGN(auto okm, HkdfSha256(ikm, salt, info, c.length));
    EXPECT_EQ(ToHex(okm.span()), c.okm);

    ASSERT_OK_AND_ASSIGN(auto prk, HkdfSha256Extract(salt, ikm));
    EXPECT_EQ(ToHex(prk.span()), c.prk);

    ASSERT_OK_AND_ASSIGN(auto expanded, HkdfSha256Expand(prk.span(), info, c.length));
    EXPECT_EQ(ToHex(expanded.span()), c.okm);
  }
}

TEST(HkdfTest, OutputIsAPrefixOfLongerOutput) {
  const auto ikm = Hex("0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b");
  auto a = HkdfSha256(ikm, {}, Hex("01"), 16);
  auto b = HkdfSha256(ikm, {}, Hex("01"), 8160);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(ToHex(a->span()), ToHex(b->span().first(16)));
  // Different info, different key: what separates the GCM key from the PRG seed.
  ASSERT_OK_AND_ASSIGN(auto c, HkdfSha256(ikm, {}, Hex("02"), 16));
  EXPECT_NE(*a, c);
}

// OpenSSL's own HKDF (EVP_KDF), the reference for what RFC 5869 test cases
// do not reach: keys longer than SHA-256's block (hashed first), empty salt
// and info, outputs that end mid-block.
std::vector<uint8_t> OpenSslHkdf(int mode, const std::vector<uint8_t>& key,
                                 const std::vector<uint8_t>& salt, const std::vector<uint8_t>& info,
                                 size_t length) {
  EVP_KDF* kdf = EVP_KDF_fetch(nullptr, "HKDF", nullptr);
  EVP_KDF_CTX* ctx = EVP_KDF_CTX_new(kdf);
  char digest[] = "SHA256";
  std::vector<OSSL_PARAM> params = {
      OSSL_PARAM_construct_int(OSSL_KDF_PARAM_MODE, &mode),
      OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, digest, 0),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, const_cast<uint8_t*>(key.data()),
                                        key.size())};
  if (!salt.empty()) {
    params.push_back(OSSL_PARAM_construct_octet_string(
        OSSL_KDF_PARAM_SALT, const_cast<uint8_t*>(salt.data()), salt.size()));
  }
  if (!info.empty()) {
    params.push_back(OSSL_PARAM_construct_octet_string(
        OSSL_KDF_PARAM_INFO, const_cast<uint8_t*>(info.data()), info.size()));
  }
  params.push_back(OSSL_PARAM_construct_end());
  std::vector<uint8_t> out(length);
  EXPECT_EQ(EVP_KDF_derive(ctx, out.data(), out.size(), params.data()), 1);
  EVP_KDF_CTX_free(ctx);
  EVP_KDF_free(kdf);
  return out;
}

TEST(HkdfTest, EqualsOpenSslsHkdfForLongKeysAndOddLengths) {
  random::Csprng rng = random::Csprng::FromSeed(3);
  auto bytes = [&](size_t n) {
    std::vector<uint8_t> b(n);
    rng.FillBytes(b.data(), n);
    return b;
  };
  for (size_t key_len : {1u, 32u, 63u, 64u, 65u, 200u}) {
    for (size_t salt_len : {0u, 13u, 64u, 100u}) {
      for (size_t length : {1u, 32u, 33u, 100u}) {
        SCOPED_TRACE(::testing::Message() << key_len << " " << salt_len << " " << length);
        const auto key = bytes(key_len), salt = bytes(salt_len), info = bytes(salt_len / 2);
        ASSERT_OK_AND_ASSIGN(auto full, HkdfSha256(key, salt, info, length));
        EXPECT_EQ(ToHex(full.span()), ToHex(OpenSslHkdf(EVP_KDF_HKDF_MODE_EXTRACT_AND_EXPAND, key,
                                                        salt, info, length)));
        ASSERT_OK_AND_ASSIGN(auto prk, HkdfSha256Extract(salt, key));
        EXPECT_EQ(ToHex(prk.span()),
                  ToHex(OpenSslHkdf(EVP_KDF_HKDF_MODE_EXTRACT_ONLY, key, salt, {}, 32)));
        if (key_len >= 32) {  // Expand takes the key as the PRK
          ASSERT_OK_AND_ASSIGN(auto okm, HkdfSha256Expand(key, info, length));
          EXPECT_EQ(ToHex(okm.span()),
                    ToHex(OpenSslHkdf(EVP_KDF_HKDF_MODE_EXPAND_ONLY, key, {}, info, length)));
        }
      }
    }
  }
}

TEST(HkdfTest, RejectsBadArguments) {
  const auto ikm = Hex("0b0b0b0b");
  EXPECT_EQ(HkdfSha256(ikm, {}, {}, 0).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(HkdfSha256(ikm, {}, {}, 8161).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(HkdfSha256({}, {}, {}, 32).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(HkdfSha256Expand(std::vector<uint8_t>(31, 1), {}, 32).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(HkdfSha256Extract({}, {}).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace fedmf::crypto
