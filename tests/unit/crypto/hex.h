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

}  // namespace fedmf::crypto::testing

#endif  // FEDMF_TESTS_UNIT_CRYPTO_HEX_H_
