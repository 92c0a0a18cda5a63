// Internal: zero-copy helpers for the rating/genre parsers. Everything works on
// string_views into the text being parsed (a buffer of the file), so loading
// MovieLens 10M costs one pass and no per-row allocation.
#ifndef FEDMF_COMMON_DATA_INTERNAL_TEXT_SCAN_H_
#define FEDMF_COMMON_DATA_INTERNAL_TEXT_SCAN_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace fedmf::data::internal {

// Iterates the lines of a buffer. Strips a UTF-8 byte-order mark, the "\n"
// terminator and a trailing "\r" (CRLF files). Trailing blank lines at EOF end
// the iteration (editors add them); a blank line followed by more data is
// returned as-is so the caller can reject it instead of silently skipping it.
class LineReader {
 public:
  explicit LineReader(absl::string_view contents);

  // The next line, or nullopt at the end of the data.
  std::optional<absl::string_view> Next();
  // 1-based number of the line last returned by Next().
  int64_t line_number() const { return line_number_; }
  // Lines remaining, a cheap upper bound used to reserve memory.
  size_t CountRemainingLines() const;

 private:
  absl::string_view rest_;
  int64_t line_number_ = 0;
};

// True for an empty or whitespace-only string.
bool IsBlank(absl::string_view s);
// Strips ASCII spaces and tabs on both ends.
absl::string_view Trim(absl::string_view s);

// Splits `line` on `delim` into `out[0..max_fields)`; returns the TOTAL number
// of fields (may exceed max_fields, so callers can report "extra field").
size_t SplitFields(absl::string_view line, absl::string_view delim, absl::string_view* out,
                   size_t max_fields);

// Whole-field parses: the entire string must be consumed, no leading '+' or
// whitespace. ParseDouble accepts "nan"/"inf" (callers reject non-finite
// values with a precise message); nullopt means "not a number" or overflow.
std::optional<double> ParseDouble(absl::string_view s);
std::optional<int64_t> ParseInt64(absl::string_view s);
std::optional<uint64_t> ParseUint64(absl::string_view s);

// Shortens long user-supplied text for error messages.
std::string Excerpt(absl::string_view s, size_t max_len = 40);

}  // namespace fedmf::data::internal

#endif  // FEDMF_COMMON_DATA_INTERNAL_TEXT_SCAN_H_
