// MovieLens 100K u.item: "id|title|release|video release|url|19 genre flags".
// Titles are latin-1; only the id and the flags are interpreted, so the bytes
// of the other fields never need decoding.
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/base/status_macros.h"
#include "common/data/internal/file_io.h"
#include "common/data/internal/text_scan.h"
#include "common/data/loaders.h"

namespace fedmf::data {

absl::StatusOr<std::vector<std::vector<int>>> LoadMovieLensGenres(const std::string& u_item_path,
                                                                  const Dataset& dataset) {
  ASSIGN_OR_RETURN(std::string contents, internal::ReadWholeFile(u_item_path));
  auto at = [&u_item_path](int64_t line, absl::string_view reason) {
    return absl::InvalidArgumentError(absl::StrCat(u_item_path, ":", line, ": ", reason));
  };

  if (static_cast<size_t>(dataset.num_items) != dataset.item_ids.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("dataset has ", dataset.num_items, " items but ", dataset.item_ids.size(),
                     " item ids; genres can only be joined to a dataset loaded from MovieLens"));
  }
  absl::flat_hash_map<absl::string_view, int32_t> item_index;
  item_index.reserve(dataset.item_ids.size());
  for (size_t i = 0; i < dataset.item_ids.size(); ++i) {
    item_index.emplace(dataset.item_ids[i], static_cast<int32_t>(i));
  }

  std::vector<std::vector<int>> genres(dataset.item_ids.size());
  std::vector<int64_t> seen_on_line(dataset.item_ids.size(), 0);
  absl::flat_hash_map<absl::string_view, int64_t> all_ids;  // duplicates among unrated movies too
  internal::LineReader lines(contents);
  // Far more fields than u.item has; only the count and the last 19 matter.
  constexpr size_t kMaxFields = 64;
  std::vector<absl::string_view> f(kMaxFields);
  while (std::optional<absl::string_view> line = lines.Next()) {
    const int64_t ln = lines.line_number();
    if (internal::IsBlank(*line)) {
      return at(ln, "blank line inside the data; delete it");
    }
    const size_t n = internal::SplitFields(*line, "|", f.data(), f.size());
    if (n < 1 + kMovieLensGenreCount || n > kMaxFields) {
      return at(ln, absl::StrCat("expected '|'-separated fields: movie id, title, dates, url and ",
                                 kMovieLensGenreCount, " genre flags, but found ", n, " fields"));
    }
    const absl::string_view id = internal::Trim(f[0]);
    auto id_value = internal::ParseInt64(id);
    if (!id_value.has_value() || *id_value < 0) {
      return at(
          ln, absl::StrCat("movie id '", internal::Excerpt(id), "' is not a non-negative integer"));
    }
    if (auto [it, inserted] = all_ids.try_emplace(id, ln); !inserted) {
      return at(ln, absl::StrCat("duplicate movie id '", id, "' (first on line ", it->second,
                                 "); keep one line per movie"));
    }
    std::vector<int> flags;
    for (int g = 0; g < kMovieLensGenreCount; ++g) {
      const absl::string_view flag = internal::Trim(f[n - kMovieLensGenreCount + g]);
      if (flag == "1") {
        flags.push_back(g);
      } else if (flag != "0") {
        return at(ln, absl::StrCat("genre flag ", g, " (", std::string(kMovieLensGenreNames[g]),
                                   ") is '", internal::Excerpt(flag), "', expected 0 or 1"));
      }
    }
    auto it = item_index.find(id);
    if (it == item_index.end()) continue;  // a movie nobody rated in this dataset
    genres[it->second] = std::move(flags);
    seen_on_line[it->second] = ln;
  }
  for (size_t i = 0; i < seen_on_line.size(); ++i) {
    if (seen_on_line[i] == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          u_item_path, ": item '", dataset.item_ids[i], "' (rated in ", dataset.source,
          ") has no line in this u.item; use the u.item shipped with the same ratings"));
    }
  }
  return genres;
}

}  // namespace fedmf::data
