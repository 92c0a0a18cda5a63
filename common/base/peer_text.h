// Text a peer sent (a party's refusal, a claimed name, a job id in a header,
// a device's reason), made safe to store, log and show: bounded in length and
// with every byte that could steer a terminal or a log reader escaped. A
// refusal of 8 MB once made every ListJobs answer too large to send; one with
// ESC sequences erased an operator's terminal lines and wrote the clipboard.
// Header-only, no dependencies: the daemons and the CLI share it.
#ifndef FEDMF_COMMON_BASE_PEER_TEXT_H_
#define FEDMF_COMMON_BASE_PEER_TEXT_H_

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace fedmf::base {

// What a peer's free text may keep (bytes, before escaping).
inline constexpr size_t kMaxPeerTextBytes = 512;

namespace peer_text_internal {

// Length of the well-formed UTF-8 sequence at s[i] (shortest form, no
// surrogates, <= U+10FFFF), 0 if it is not one; `cp` receives its code point.
inline size_t Utf8Sequence(std::string_view s, size_t i, uint32_t* cp) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  size_t n = 0;
  uint32_t v = 0;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
    v = c & 0x1F;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    v = c & 0x0F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    v = c & 0x07;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) return 0;
    v = (v << 6) | (b(i + k) & 0x3F);
  }
  if ((n == 3 && v < 0x800) || (n == 4 && (v < 0x10000 || v > 0x10FFFF)) ||
      (v >= 0xD800 && v <= 0xDFFF)) {
    return 0;
  }
  *cp = v;
  return n;
}

// C1 controls, and the bidirectional overrides/isolates that reorder what a
// reader sees (U+202A..U+202E, U+2066..U+2069), plus line/paragraph separators.
inline bool UnsafeCodePoint(uint32_t cp) {
  return (cp >= 0x80 && cp <= 0x9F) || (cp >= 0x202A && cp <= 0x202E) ||
         (cp >= 0x2066 && cp <= 0x2069) || cp == 0x2028 || cp == 0x2029;
}

}  // namespace peer_text_internal

// `text` with control characters, invalid UTF-8 and reordering code points
// escaped (\n, \t, \\xHH, \\u{HHHH}); printable ASCII and other well-formed
// UTF-8 kept as they are. At most `max_bytes` of `text` are looked at; the
// rest is replaced by "...[N more bytes]" so a reader knows it was cut.
inline std::string EscapePeerText(std::string_view text, size_t max_bytes = kMaxPeerTextBytes) {
  using peer_text_internal::UnsafeCodePoint;
  using peer_text_internal::Utf8Sequence;
  const std::string_view head = text.substr(0, max_bytes);
  std::string out;
  out.reserve(head.size() + 16);
  char buf[16];
  size_t i = 0;
  while (i < head.size()) {
    const unsigned char c = static_cast<unsigned char>(head[i]);
    if (c >= 0x20 && c < 0x7F) {
      out.push_back(static_cast<char>(c));
      ++i;
      continue;
    }
    if (c == '\n') {
      out += "\\n";
      ++i;
      continue;
    }
    if (c == '\t') {
      out += "\\t";
      ++i;
      continue;
    }
    uint32_t cp = 0;
    const size_t n = c >= 0x80 ? Utf8Sequence(head, i, &cp) : 0;
    if (n == 0) {
      std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      out += buf;
      ++i;
    } else if (UnsafeCodePoint(cp)) {
      std::snprintf(buf, sizeof(buf), "\\u{%04x}", static_cast<unsigned>(cp));
      out += buf;
      i += n;
    } else {
      out.append(head.substr(i, n));
      i += n;
    }
  }
  if (text.size() > head.size()) {
    out += "...[" + std::to_string(text.size() - head.size()) + " more bytes]";
  }
  return out;
}

}  // namespace fedmf::base

#endif  // FEDMF_COMMON_BASE_PEER_TEXT_H_
