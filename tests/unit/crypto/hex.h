// Test helper: hex <-> bytes for known-answer vectors.
#ifndef FEDMF_TESTS_UNIT_CRYPTO_HEX_H_
#define FEDMF_TESTS_UNIT_CRYPTO_HEX_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"

namespace fedmf::crypto::testing {

// Whitespace is ignored so long vectors can be split like in the RFCs.
inline std::vector<uint8_t> Hex(std::string_view s) {
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::vector<uint8_t> out;
  int high = -1;
  for (char c : s) {
    if (c == ' ' || c == '\n') continue;
    const int v = nibble(c);
    if (v < 0) {
      ADD_FAILURE() << "bad hex digit '" << c << "'";
      return {};
    }
    if (high < 0) {
      high = v;
    } else {
      out.push_back(static_cast<uint8_t>(high << 4 | v));
      high = -1;
    }
  }
  if (high >= 0) ADD_FAILURE() << "odd number of hex digits";
  return out;
}

inline std::string ToHex(std::span<const uint8_t> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (uint8_t b : bytes) {
    out.push_back(kDigits[b >> 4]);
    out.push_back(kDigits[b & 15]);
  }
  return out;
}

// NIST SP 800-38A F.5.5 (CTR-AES256.Encrypt): key, initial counter block,
// plaintext and ciphertext of four blocks; keystream = CT xor PT.
struct NistCtrAes256Vector {
  std::vector<uint8_t> key =
      Hex("603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4");
  std::vector<uint8_t> counter = Hex("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff");
  std::vector<uint8_t> plaintext =
      Hex("6bc1bee22e409f96e93d7e117393172a ae2d8a571e03ac9c9eb76fac45af8e51"
          "30c81c46a35ce411e5fbc1191a0a52ef f69f2445df4f9b17ad2b417be66c3710");
  std::vector<uint8_t> ciphertext =
      Hex("601ec313775789a5b7a7f504bbf3d228 f443e3ca4d62b59aca84e990cacaf5c5"
          "2b0930daa23de94ce87017ba2d84988d dfc9c58db67aada613c2dd08457941a6");
};

}  // namespace fedmf::crypto::testing

#endif  // FEDMF_TESTS_UNIT_CRYPTO_HEX_H_
