// spdlog plus what it needs to print our types. Debian's Abseil has its own
// absl::string_view (not std::string_view), which fmt cannot format by
// itself; every daemon logs Status messages, so the formatter lives here.
#ifndef FEDMF_COMMON_LOG_LOG_H_
#define FEDMF_COMMON_LOG_LOG_H_

#include "absl/strings/string_view.h"
#include "spdlog/spdlog.h"

template <>
struct fmt::formatter<absl::string_view> : fmt::formatter<fmt::string_view> {
  template <typename FormatContext>
  auto format(absl::string_view s, FormatContext& ctx) const {
    return fmt::formatter<fmt::string_view>::format(fmt::string_view(s.data(), s.size()), ctx);
  }
};

#endif  // FEDMF_COMMON_LOG_LOG_H_
