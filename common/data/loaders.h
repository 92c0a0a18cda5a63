// Rating file loaders. Every row is validated; the first bad row fails the
// whole load with "<file>:<line>: <reason>" so nothing is silently dropped.
#ifndef FEDMF_COMMON_DATA_LOADERS_H_
#define FEDMF_COMMON_DATA_LOADERS_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/data/ratings.h"

namespace fedmf::data {

struct LoadOptions {
  // Declared rating range; values outside it are errors. MovieLens files use
  // [0.5, 5] (latest/10M) or [1, 5] (100K/1M); the default accepts all of them.
  // The loaded Dataset::range is this declared range (pass {1, 5} for 100K/1M
  // if predictions should be clamped at 1 rather than 0.5).
  RatingRange range{0.5, 5.0};
};

// MovieLens 100K `u.data`: user \t item \t rating \t timestamp.
absl::StatusOr<Dataset> LoadMovieLens100K(const std::string& path, const LoadOptions& options = {});
// MovieLens 1M/10M `ratings.dat`: user::item::rating::timestamp.
absl::StatusOr<Dataset> LoadMovieLensDat(const std::string& path, const LoadOptions& options = {});
// MovieLens latest `ratings.csv`: header userId,movieId,rating,timestamp.
absl::StatusOr<Dataset> LoadMovieLensCsv(const std::string& path, const LoadOptions& options = {});
// Generic `user,item,rating` CSV, optional header line, extra columns are errors.
// The first line is taken as a header iff none of its fields is a number
// ("user,item,rating"), so "1,2,oops" on line 1 is a bad row, not a header.
// Ids are any non-empty token compared as text (no quoting); MovieLens ids
// must be non-negative integers and compare as integers ("007" is user 7).
// Dense indices follow first appearance; Dataset keeps each id's first text.
absl::StatusOr<Dataset> LoadGenericCsv(const std::string& path, const LoadOptions& options = {});

// `path` may be a file or a directory (u.data, then ratings.dat, then
// ratings.csv is looked up inside). The format is detected from the first line
// (header "userId,..." -> csv, "::" -> dat, tab -> 100K), else from the file
// name (*.data, *.dat, *.csv); anything else is an error suggesting csv:PATH.
absl::StatusOr<Dataset> LoadMovieLens(const std::string& path, const LoadOptions& options = {});

// Parses from an in-memory buffer; `name` is used in error messages. Used by
// the file loaders above and by fuzz targets.
enum class RatingFormat { kMovieLens100K, kMovieLensDat, kMovieLensCsv, kGenericCsv };
absl::StatusOr<Dataset> ParseRatings(std::string_view contents, RatingFormat format,
                                     const std::string& name, const LoadOptions& options = {});
// The same grammar over a file read through a buffer of `chunk_bytes` (the
// file loaders above; tests pass small ones): the Dataset and errors of
// ParseRatings over the file's contents, without holding them all.
absl::StatusOr<Dataset> ParseRatingsFile(const std::string& path, RatingFormat format,
                                         const LoadOptions& options = {},
                                         size_t chunk_bytes = size_t{1} << 16);

// MovieLens 100K genres, in u.item flag order (see u.genre).
inline constexpr int kMovieLensGenreCount = 19;
inline constexpr std::array<std::string_view, kMovieLensGenreCount> kMovieLensGenreNames = {
    "unknown",     "Action", "Adventure", "Animation", "Children's", "Comedy",  "Crime",
    "Documentary", "Drama",  "Fantasy",   "Film-Noir", "Horror",     "Musical", "Mystery",
    "Romance",     "Sci-Fi", "Thriller",  "War",       "Western"};

// MovieLens 100K `u.item` genre flags: result[item_index] lists the genre ids
// (0..18) of that item, aligned with `dataset.item_ids`, exactly as flagged
// (possibly empty; PartitionVflByGenre treats "no flag" as genre 0, unknown).
// Items absent from u.item are an error; u.item movies nobody rated are ignored.
absl::StatusOr<std::vector<std::vector<int>>> LoadMovieLensGenres(const std::string& u_item_path,
                                                                  const Dataset& dataset);

// Data specs used by the CLI and the daemons:
//   movielens:PATH   (format detected)
//   csv:PATH         (generic user,item,rating CSV)
//   synthetic[:key=value,...]  (see SyntheticOptions in synthetic.h; `options`
//                               does not apply, the generator has min=/max=)
// Any other scheme is an error listing these.
absl::StatusOr<Dataset> LoadDataSpec(const std::string& spec, const LoadOptions& options = {});

// What a data spec reads, to tell whether loading it again would give the
// same data without reading it: the file (inside a MovieLens directory, the
// one LoadDataSpec picks) by device, inode, size and modification time. A
// generated spec reads no file (`file` empty): its data is a function of the
// spec. Taken before a load, a stamp that still compares equal afterwards
// means nothing replaced or wrote the file in between (a write moves the
// modification time; a replacement changes the inode).
struct DataSourceStamp {
  std::string file;
  uint64_t device = 0;
  uint64_t inode = 0;
  int64_t size = 0;
  int64_t mtime_ns = 0;
  bool operator==(const DataSourceStamp&) const = default;
};
// The spec's stamp now; the errors of LoadDataSpec for a missing path or an
// unknown scheme.
absl::StatusOr<DataSourceStamp> StampDataSpec(const std::string& spec);

}  // namespace fedmf::data

#endif  // FEDMF_COMMON_DATA_LOADERS_H_
