#include "common/data/internal/text_scan.h"

#include <algorithm>
#include <charconv>
#include <system_error>

namespace fedmf::data::internal {
namespace {

constexpr absl::string_view kUtf8Bom = "\xEF\xBB\xBF";

template <typename T>
std::optional<T> ParseWhole(absl::string_view s) {
  if (s.empty()) return std::nullopt;
  T value{};
  const char* end = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(s.data(), end, value);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

}  // namespace

LineReader::LineReader(absl::string_view contents) : rest_(contents) {
  if (rest_.substr(0, kUtf8Bom.size()) == kUtf8Bom) rest_.remove_prefix(kUtf8Bom.size());
}

std::optional<absl::string_view> LineReader::Next() {
  if (rest_.empty()) return std::nullopt;
  const size_t nl = rest_.find('\n');
  absl::string_view line = rest_.substr(0, nl);
  absl::string_view after =
      nl == absl::string_view::npos ? absl::string_view() : rest_.substr(nl + 1);
  if (IsBlank(line) && IsBlank(after)) {
    // Only blank lines remain: the file simply ends with spare newlines.
    rest_ = {};
    return std::nullopt;
  }
  rest_ = after;
  ++line_number_;
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

size_t LineReader::CountRemainingLines() const {
  return static_cast<size_t>(std::count(rest_.begin(), rest_.end(), '\n')) + 1;
}

bool IsBlank(absl::string_view s) {
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; });
}

absl::string_view Trim(absl::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

size_t SplitFields(absl::string_view line, absl::string_view delim, absl::string_view* out,
                   size_t max_fields) {
  size_t count = 0;
  while (true) {
    const size_t pos = line.find(delim);
    if (count < max_fields) out[count] = line.substr(0, pos);
    ++count;
    if (pos == absl::string_view::npos) return count;
    line.remove_prefix(pos + delim.size());
  }
}

std::optional<double> ParseDouble(absl::string_view s) { return ParseWhole<double>(s); }
std::optional<int64_t> ParseInt64(absl::string_view s) { return ParseWhole<int64_t>(s); }
std::optional<uint64_t> ParseUint64(absl::string_view s) { return ParseWhole<uint64_t>(s); }

std::string Excerpt(absl::string_view s, size_t max_len) {
  if (s.size() <= max_len) return std::string(s);
  return std::string(s.substr(0, max_len)) + "...";
}

}  // namespace fedmf::data::internal
