// Ratings loaders on arbitrary bytes: the first byte picks the format, the
// rest is the file. Any input must give a Dataset or an error, never a crash.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/data/loaders.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  using fedmf::data::RatingFormat;
  constexpr RatingFormat kFormats[] = {RatingFormat::kMovieLens100K, RatingFormat::kMovieLensDat,
                                       RatingFormat::kMovieLensCsv, RatingFormat::kGenericCsv};
  const RatingFormat format = kFormats[data[0] % 4];
  std::string_view contents(reinterpret_cast<const char*>(data + 1), size - 1);
  auto dataset = fedmf::data::ParseRatings(contents, format, "fuzz");
  if (dataset.ok()) {
    // What a loaded dataset promises: dense, in-range indices.
    for (const auto& r : dataset->ratings) {
      if (r.user < 0 || r.user >= dataset->num_users || r.item < 0 ||
          r.item >= dataset->num_items) {
        __builtin_trap();
      }
    }
  }
  return 0;
}
