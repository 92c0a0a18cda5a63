// File-level loaders: read the file once, pick the format, delegate the row
// grammar to ParseRatings (rating_parser.cc); and the data-spec front door.
#include "common/data/loaders.h"

#include <sys/stat.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/base/status_macros.h"
#include "common/data/internal/file_io.h"
#include "common/data/internal/text_scan.h"
#include "common/data/synthetic.h"

namespace fedmf::data {
namespace {

absl::StatusOr<Dataset> LoadFile(const std::string& path, RatingFormat format,
                                 const LoadOptions& options) {
  return ParseRatingsFile(path, format, options);
}

// The MovieLens release a file belongs to, from its first line (the content
// is the stronger signal) and then its name.
absl::StatusOr<RatingFormat> DetectMovieLensFormat(const std::string& path) {
  // A small buffer: only the first line is read.
  ASSIGN_OR_RETURN(internal::FileLineReader lines, internal::FileLineReader::Open(path, 4096));
  const std::optional<absl::string_view> line = lines.Next();
  RETURN_IF_ERROR(lines.status());
  const absl::string_view first = line.value_or(absl::string_view());
  if (absl::StartsWith(internal::Trim(first), "userId,")) return RatingFormat::kMovieLensCsv;
  if (absl::StrContains(first, "::")) return RatingFormat::kMovieLensDat;
  if (absl::StrContains(first, "\t")) return RatingFormat::kMovieLens100K;
  const std::string name = std::filesystem::path(path).filename().string();
  if (name == "u.data" || absl::EndsWith(name, ".data")) return RatingFormat::kMovieLens100K;
  if (absl::EndsWith(name, ".dat")) return RatingFormat::kMovieLensDat;
  if (absl::EndsWith(name, ".csv")) return RatingFormat::kMovieLensCsv;
  return absl::InvalidArgumentError(absl::StrCat(
      path,
      ":1: cannot tell which MovieLens format this is: expected u.data (tab-separated), "
      "ratings.dat ('::'-separated) or ratings.csv (header userId,movieId,rating,timestamp)"
      "; for a plain user,item,rating file use csv:PATH"));
}

// In a directory, the ratings file of each MovieLens release, newest last.
constexpr std::array<absl::string_view, 3> kMovieLensFiles = {"u.data", "ratings.dat",
                                                              "ratings.csv"};

absl::StatusOr<std::string> ResolveMovieLensPath(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_directory(path, ec)) return path;
  for (absl::string_view name : kMovieLensFiles) {
    std::filesystem::path candidate = std::filesystem::path(path) / std::string(name);
    if (std::filesystem::is_regular_file(candidate, ec)) return candidate.string();
  }
  return absl::NotFoundError(
      absl::StrCat(path,
                   ": directory has no MovieLens ratings file (looked for u.data, ratings.dat, "
                   "ratings.csv)"));
}

}  // namespace

absl::StatusOr<Dataset> LoadMovieLens100K(const std::string& path, const LoadOptions& options) {
  return LoadFile(path, RatingFormat::kMovieLens100K, options);
}

absl::StatusOr<Dataset> LoadMovieLensDat(const std::string& path, const LoadOptions& options) {
  return LoadFile(path, RatingFormat::kMovieLensDat, options);
}

absl::StatusOr<Dataset> LoadMovieLensCsv(const std::string& path, const LoadOptions& options) {
  return LoadFile(path, RatingFormat::kMovieLensCsv, options);
}

absl::StatusOr<Dataset> LoadGenericCsv(const std::string& path, const LoadOptions& options) {
  return LoadFile(path, RatingFormat::kGenericCsv, options);
}

absl::StatusOr<Dataset> LoadMovieLens(const std::string& path, const LoadOptions& options) {
  ASSIGN_OR_RETURN(std::string file, ResolveMovieLensPath(path));
  ASSIGN_OR_RETURN(RatingFormat format, DetectMovieLensFormat(file));
  return ParseRatingsFile(file, format, options);
}

namespace {

// A data spec's scheme and the rest after its colon, validated: a known
// scheme, and a path where the scheme reads a file.
struct SpecParts {
  absl::string_view scheme;
  absl::string_view rest;
};

absl::StatusOr<SpecParts> SplitDataSpec(const std::string& spec) {
  const absl::string_view s = spec;
  const size_t colon = s.find(':');
  SpecParts parts{s.substr(0, colon), colon == absl::string_view::npos ? "" : s.substr(colon + 1)};
  constexpr absl::string_view kValid =
      "valid specs are movielens:PATH, csv:PATH, synthetic and synthetic:key=value,...";
  if (parts.scheme == "synthetic") return parts;
  if (parts.scheme == "movielens" || parts.scheme == "csv") {
    if (parts.rest.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("data spec '", spec, "' has no path: write ", parts.scheme, ":PATH"));
    }
    return parts;
  }
  if (colon == absl::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("data spec '", spec, "' has no scheme; ", kValid));
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown data spec scheme '", parts.scheme, "' in '", spec, "'; ", kValid));
}

}  // namespace

absl::StatusOr<Dataset> LoadDataSpec(const std::string& spec, const LoadOptions& options) {
  ASSIGN_OR_RETURN(const SpecParts parts, SplitDataSpec(spec));
  if (parts.scheme == "synthetic") {
    // The synthetic generator declares its own range (min=, max=), so
    // `options` does not apply to it.
    ASSIGN_OR_RETURN(SyntheticOptions synthetic, ParseSyntheticOptions(std::string(parts.rest)));
    return GenerateSynthetic(synthetic);
  }
  return parts.scheme == "movielens" ? LoadMovieLens(std::string(parts.rest), options)
                                     : LoadGenericCsv(std::string(parts.rest), options);
}

absl::StatusOr<DataSourceStamp> StampDataSpec(const std::string& spec) {
  ASSIGN_OR_RETURN(const SpecParts parts, SplitDataSpec(spec));
  DataSourceStamp stamp;
  if (parts.scheme == "synthetic") return stamp;
  if (parts.scheme == "movielens") {
    ASSIGN_OR_RETURN(stamp.file, ResolveMovieLensPath(std::string(parts.rest)));
  } else {
    stamp.file = std::string(parts.rest);
  }
  struct stat st;
  if (::stat(stamp.file.c_str(), &st) != 0) {
    const int err = errno;
    std::string message = absl::StrCat("cannot stat ", stamp.file, ": ", std::strerror(err));
    if (err == ENOENT) return absl::NotFoundError(message);
    return absl::UnavailableError(message);
  }
  stamp.device = static_cast<uint64_t>(st.st_dev);
  stamp.inode = static_cast<uint64_t>(st.st_ino);
  stamp.size = static_cast<int64_t>(st.st_size);
  stamp.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
  return stamp;
}

}  // namespace fedmf::data
