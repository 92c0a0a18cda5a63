// An item catalogue: the public list of external item ids an HFL federation
// shares, identified by its digest. Every party maps its own item ids into
// it (never by position in its own file), and a job names the catalogue by
// digest so a party holding another list refuses before reading any data.
#ifndef FEDMF_COMMON_DATA_CATALOGUE_H_
#define FEDMF_COMMON_DATA_CATALOGUE_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"

namespace fedmf::data {

class Catalogue {
 public:
  // One external id per line; blank lines and lines starting with '#' are
  // skipped, surrounding whitespace is trimmed. A repeated id is an error
  // naming both lines.
  static absl::StatusOr<Catalogue> Load(const std::string& path);
  static absl::StatusOr<Catalogue> Parse(std::string_view contents, const std::string& name);
  // From ids in the given order (distinct, non-empty).
  static absl::StatusOr<Catalogue> FromIds(std::vector<std::string> ids, std::string source);

  const std::vector<std::string>& ids() const { return ids_; }
  int32_t size() const { return static_cast<int32_t>(ids_.size()); }
  // Index of `id`, or nullopt for an id outside the catalogue.
  std::optional<int32_t> Find(std::string_view id) const;
  // "sha256:<hex>" over the ids, each followed by '\n': formatting, comments
  // and blank lines do not change it; order and content do.
  const std::string& digest() const { return digest_; }
  const std::string& source() const { return source_; }

 private:
  Catalogue() = default;
  std::vector<std::string> ids_;
  absl::flat_hash_map<std::string, int32_t> index_;
  std::string digest_;
  std::string source_;
};

}  // namespace fedmf::data

#endif  // FEDMF_COMMON_DATA_CATALOGUE_H_
