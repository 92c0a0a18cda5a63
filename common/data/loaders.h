// Rating file loaders. Every row is validated; the first bad row fails the
// whole load with "<file>:<line>: <reason>" so nothing is silently dropped.
#ifndef FEDMF_COMMON_DATA_LOADERS_H_
#define FEDMF_COMMON_DATA_LOADERS_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "common/data/ratings.h"

namespace fedmf::data {

struct LoadOptions {
  // Declared rating range; values outside it are errors. MovieLens files use
  // [0.5, 5] (latest/10M) or [1, 5] (100K/1M); the default accepts all of them.
  RatingRange range{0.5, 5.0};
};

// MovieLens 100K `u.data`: user \t item \t rating \t timestamp.
absl::StatusOr<Dataset> LoadMovieLens100K(const std::string& path, const LoadOptions& options = {});
// MovieLens 1M/10M `ratings.dat`: user::item::rating::timestamp.
absl::StatusOr<Dataset> LoadMovieLensDat(const std::string& path, const LoadOptions& options = {});
// MovieLens latest `ratings.csv`: header userId,movieId,rating,timestamp.
absl::StatusOr<Dataset> LoadMovieLensCsv(const std::string& path, const LoadOptions& options = {});
// Generic `user,item,rating` CSV, optional header line, extra columns are errors.
absl::StatusOr<Dataset> LoadGenericCsv(const std::string& path, const LoadOptions& options = {});

// `path` may be a file or a directory (u.data / ratings.dat / ratings.csv is
// looked up inside); the format is detected from the file name and first line.
absl::StatusOr<Dataset> LoadMovieLens(const std::string& path, const LoadOptions& options = {});

// Parses from an in-memory buffer; `name` is used in error messages. Used by
// the file loaders above and by fuzz targets.
enum class RatingFormat { kMovieLens100K, kMovieLensDat, kMovieLensCsv, kGenericCsv };
absl::StatusOr<Dataset> ParseRatings(std::string_view contents, RatingFormat format,
                                     const std::string& name, const LoadOptions& options = {});

// MovieLens 100K `u.item` genre flags: result[item_index] lists the genre ids
// (0..18) of that item, aligned with `dataset.item_ids`. Items absent from
// u.item are an error.
absl::StatusOr<std::vector<std::vector<int>>> LoadMovieLensGenres(const std::string& u_item_path,
                                                                   const Dataset& dataset);

// Data specs used by the CLI and the daemons:
//   movielens:PATH   (format detected)
//   csv:PATH         (generic user,item,rating CSV)
//   synthetic[:key=value,...]  (see SyntheticOptions in synthetic.h)
absl::StatusOr<Dataset> LoadDataSpec(const std::string& spec, const LoadOptions& options = {});

}  // namespace fedmf::data

#endif  // FEDMF_COMMON_DATA_LOADERS_H_
