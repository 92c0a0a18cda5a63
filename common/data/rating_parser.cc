// ParseRatings: the row grammar of every supported rating format. One pass
// over the buffer; the first bad row fails the load with "<name>:<line>: why".
#include <array>
#include <cmath>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/base/status_macros.h"
#include "common/data/internal/dataset_builder.h"
#include "common/data/internal/duplicates.h"
#include "common/data/internal/file_io.h"
#include "common/data/internal/text_scan.h"
#include "common/data/loaders.h"

namespace fedmf::data {
namespace {

using internal::DatasetBuilder;
using internal::Excerpt;
using internal::LineReader;
using internal::ParseDouble;
using internal::ParseInt64;
using internal::SplitFields;
using internal::Trim;

constexpr absl::string_view kMovieLensCsvHeader = "userId,movieId,rating,timestamp";

struct FormatSpec {
  absl::string_view delim;
  absl::string_view delim_name;  // for messages
  size_t num_fields;
  absl::string_view columns;  // for messages
  // MovieLens ids are integers; the generic CSV keeps any non-empty token.
  bool integer_ids;
  bool has_timestamp;
};

const FormatSpec& SpecFor(RatingFormat format) {
  static constexpr FormatSpec k100K{"\t", "tab-separated", 4, "user, item, rating, timestamp", true,
                                    true};
  static constexpr FormatSpec kDat{"::", "'::'-separated", 4, "user, item, rating, timestamp", true,
                                   true};
  static constexpr FormatSpec kCsv{
      ",", "comma-separated", 4, "userId, movieId, rating, timestamp", true, true};
  static constexpr FormatSpec kGeneric{",",  "comma-separated", 3, "user, item, rating", false,
                                       false};
  switch (format) {
    case RatingFormat::kMovieLens100K: return k100K;
    case RatingFormat::kMovieLensDat: return kDat;
    case RatingFormat::kMovieLensCsv: return kCsv;
    case RatingFormat::kGenericCsv: break;
  }
  return kGeneric;
}

constexpr size_t kMaxFields = 4;

// When a line is one field because it uses another separator than the
// format's: which one it uses and how to read it.
std::string SeparatorHint(absl::string_view line, const FormatSpec& spec, size_t found) {
  if (found != 1) return "";
  struct Other {
    absl::string_view delim, name;
  };
  for (const Other& o :
       {Other{"\t", "tabs"}, Other{";", "semicolons"}, Other{"::", "'::'"}, Other{",", "commas"}}) {
    if (o.delim == spec.delim || !absl::StrContains(line, o.delim)) continue;
    return absl::StrCat("; the line is separated by ", o.name, " but this format is ",
                        spec.delim_name,
                        o.delim == "\t" ? " (MovieLens u.data's tab format: movielens:PATH)" : "",
                        o.delim == "::" ? " (MovieLens ratings.dat: movielens:PATH)" : "");
  }
  return "";
}

absl::Status FieldCountError(const FormatSpec& spec, size_t found, absl::string_view line) {
  const bool missing = found < spec.num_fields;
  return absl::InvalidArgumentError(
      absl::StrCat(missing ? "missing field" : "extra field", ": expected ", spec.num_fields, " ",
                   spec.delim_name, " fields (", spec.columns, ") but found ", found,
                   missing ? "" : "; remove the extra columns", SeparatorHint(line, spec, found)));
}

// Validates an id field and returns its dense index.
absl::StatusOr<int32_t> InternId(absl::string_view id, absl::string_view what,
                                 const FormatSpec& spec, internal::IdIndex& index) {
  if (id.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("missing field: the ", what, " id is empty"));
  }
  if (!spec.integer_ids) return index.InternText(id);
  std::optional<int64_t> v = ParseInt64(id);
  if (!v.has_value() || *v < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " id '", Excerpt(id), "' is not a non-negative integer"));
  }
  return index.InternNumber(*v, id);
}

std::string RangeText(const RatingRange& range) {
  return absl::StrCat("[", range.min, ", ", range.max, "]");
}

absl::StatusOr<float> ParseRatingValue(absl::string_view text, const RatingRange& range) {
  if (text.empty()) {
    return absl::InvalidArgumentError("missing field: the rating is empty");
  }
  std::optional<double> v = ParseDouble(text);
  if (!v.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat("rating '", Excerpt(text),
                                                   "' is not a number (expected a value in ",
                                                   RangeText(range), ")"));
  }
  if (!std::isfinite(*v)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "rating '", Excerpt(text), "' is not finite (expected a value in ", RangeText(range), ")"));
  }
  if (*v < range.min || *v > range.max) {
    return absl::InvalidArgumentError(
        absl::StrCat("rating ", text, " is outside the declared rating range ", RangeText(range),
                     "; fix the value or declare a wider range (fedmf train/demo --rating-range "
                     "MIN,MAX; a party's data.rating_min and data.rating_max)"));
  }
  return static_cast<float>(*v);
}

// Parses one data line into the builder. Duplicate pairs are checked later,
// for the whole file at once (duplicates.h).
absl::Status ParseRow(absl::string_view line, const FormatSpec& spec, const RatingRange& range,
                      DatasetBuilder& builder) {
  if (internal::IsBlank(line)) {
    return absl::InvalidArgumentError(
        "blank line inside the data; delete it (only blank lines at the end of the file are "
        "allowed)");
  }
  std::array<absl::string_view, kMaxFields> f;
  const size_t n = SplitFields(line, spec.delim, f.data(), f.size());
  if (n != spec.num_fields) return FieldCountError(spec, n, line);
  for (size_t k = 0; k < spec.num_fields; ++k) f[k] = Trim(f[k]);

  ASSIGN_OR_RETURN(int32_t user, InternId(f[0], "user", spec, builder.users()));
  ASSIGN_OR_RETURN(int32_t item, InternId(f[1], "item", spec, builder.items()));
  ASSIGN_OR_RETURN(float value, ParseRatingValue(f[2], range));
  if (spec.has_timestamp && !ParseInt64(f[3]).has_value()) {
    if (f[3].empty()) return absl::InvalidArgumentError("missing field: the timestamp is empty");
    return absl::InvalidArgumentError(
        absl::StrCat("timestamp '", Excerpt(f[3]), "' is not an integer"));
  }
  builder.Add(user, item, value);
  return absl::OkStatus();
}

// Generic CSV header rule: the first line is a header when none of its
// fields is a number ("user,item,rating"). A first row with numeric ids but a
// bad rating ("1,2,x") is therefore data and fails loudly, not skipped.
bool LooksLikeGenericHeader(absl::string_view line) {
  std::array<absl::string_view, kMaxFields> f;
  const size_t n = SplitFields(line, ",", f.data(), f.size());
  for (size_t k = 0; k < std::min(n, f.size()); ++k) {
    if (ParseDouble(Trim(f[k])).has_value()) return false;
  }
  return true;
}

absl::Status ValidateRange(const RatingRange& r) {
  if (!std::isfinite(r.min) || !std::isfinite(r.max) || !(r.min < r.max)) {
    return absl::InvalidArgumentError(absl::StrCat("declared rating range [", r.min, ", ", r.max,
                                                   "] is invalid: need finite min < max"));
  }
  return absl::OkStatus();
}

std::string SourceFor(RatingFormat format, const std::string& name) {
  return absl::StrCat(format == RatingFormat::kGenericCsv ? "csv:" : "movielens:", name);
}

// How many rows to reserve for once the header is read: exact in memory, an
// estimate from the bytes left in a file (a short guess costs a regrowth).
size_t RemainingLines(const LineReader& lines) { return lines.CountRemainingLines(); }
size_t RemainingLines(const internal::FileLineReader& lines) {
  return lines.EstimateRemainingLines();
}
absl::Status ReadStatus(const LineReader&) { return absl::OkStatus(); }
absl::Status ReadStatus(const internal::FileLineReader& lines) { return lines.status(); }

// The grammar over any line source with LineReader's interface: one pass,
// the first bad row fails with "<name>:<line>: why".
template <typename Lines>
absl::StatusOr<Dataset> ParseLines(Lines& lines, RatingFormat format, const std::string& name,
                                   const LoadOptions& options) {
  RETURN_IF_ERROR(ValidateRange(options.range));
  const FormatSpec& spec = SpecFor(format);
  auto at = [&name](int64_t line, absl::string_view reason) {
    return absl::InvalidArgumentError(absl::StrCat(name, ":", line, ": ", reason));
  };

  std::optional<absl::string_view> line = lines.Next();
  RETURN_IF_ERROR(ReadStatus(lines));
  if (!line.has_value()) {
    return at(1, absl::StrCat("no ratings: the file is empty (expected ", spec.delim_name,
                              " rows of ", spec.columns, ")"));
  }
  int64_t first_data_line = 1;
  bool has_header = false;
  if (format == RatingFormat::kMovieLensCsv) {
    if (Trim(*line) != kMovieLensCsvHeader) {
      return at(
          1, absl::StrCat("expected the MovieLens header '", kMovieLensCsvHeader, "' but found '",
                          Excerpt(*line), "'; for a plain user,item,rating file use csv:PATH"));
    }
    has_header = true;
  } else if (format == RatingFormat::kGenericCsv && LooksLikeGenericHeader(*line)) {
    std::array<absl::string_view, kMaxFields> f;
    const size_t n = SplitFields(*line, ",", f.data(), f.size());
    if (n != spec.num_fields) {
      return at(1, absl::StrCat("header has ", n,
                                " columns but the generic CSV takes exactly 3 (user,item,rating)"
                                "; for MovieLens ratings.csv use movielens:PATH",
                                SeparatorHint(*line, spec, n)));
    }
    has_header = true;
  }
  if (has_header) {
    line = lines.Next();
    first_data_line = 2;
    if (!line.has_value()) return at(2, "no ratings after the header");
  }

  DatasetBuilder builder(RemainingLines(lines) + 1);
  // Data lines are contiguous (blank lines inside are errors), so row r is on
  // line first_data_line + r.
  auto line_of = [first_data_line](size_t row) {
    return first_data_line + static_cast<int64_t>(row);
  };
  // The first duplicate among the rows parsed so far, as an error.
  auto duplicate_error = [&]() -> std::optional<absl::Status> {
    std::optional<internal::Duplicate> dup = internal::FindFirstDuplicate(
        builder.ratings(), builder.ratings().size(), builder.num_users(), builder.num_items());
    if (!dup.has_value()) return std::nullopt;
    const Rating& r = builder.ratings()[dup->row];
    return at(line_of(dup->row),
              absl::StrCat("duplicate rating for user '", Excerpt(builder.users().ids()[r.user]),
                           "' and item '", Excerpt(builder.items().ids()[r.item]),
                           "' (first rated on line ", line_of(dup->first),
                           "); keep one row per user-item pair"));
  };
  for (; line.has_value(); line = lines.Next()) {
    absl::Status s = ParseRow(*line, spec, options.range, builder);
    if (!s.ok()) {
      // Report the first bad row of the file: a duplicate above this line
      // comes first.
      if (auto dup = duplicate_error(); dup.has_value()) return *dup;
      return at(lines.line_number(), s.message());
    }
  }
  // A read error ends the lines early: never a silently shorter data set.
  RETURN_IF_ERROR(ReadStatus(lines));
  if (auto dup = duplicate_error(); dup.has_value()) return *dup;
  Dataset d = std::move(builder).Finish(options.range, SourceFor(format, name));
  d.file = name;
  d.first_data_line = first_data_line;
  return d;
}

}  // namespace

absl::StatusOr<Dataset> ParseRatings(std::string_view contents, RatingFormat format,
                                     const std::string& name, const LoadOptions& options) {
  // Debian's Abseil has its own string_view type; the parser uses it.
  LineReader lines(absl::string_view(contents.data(), contents.size()));
  return ParseLines(lines, format, name, options);
}

absl::StatusOr<Dataset> ParseRatingsFile(const std::string& path, RatingFormat format,
                                         const LoadOptions& options, size_t chunk_bytes) {
  ASSIGN_OR_RETURN(internal::FileLineReader lines,
                   internal::FileLineReader::Open(path, chunk_bytes));
  return ParseLines(lines, format, path, options);
}

}  // namespace fedmf::data
