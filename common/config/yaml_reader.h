// Strict YAML config reading: every key must be known, every value must have
// the right type, and every error names the file, line and key with a fix.
// yaml-cpp throws; this wrapper keeps exceptions inside this module.
#ifndef FEDMF_COMMON_CONFIG_YAML_READER_H_
#define FEDMF_COMMON_CONFIG_YAML_READER_H_

#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace YAML {
class Node;
}

namespace fedmf::config {

// A mapping node being read. Get* record the key as known; Finish() fails on
// any key that was never asked for (a typo must not be silently ignored).
class YamlMap {
 public:
  // Parses a whole file (or text, for tests and fuzzing) whose root is a map.
  static absl::StatusOr<YamlMap> FromFile(const std::string& path);
  static absl::StatusOr<YamlMap> FromString(const std::string& text, const std::string& name);

  YamlMap(YamlMap&&) noexcept;
  YamlMap& operator=(YamlMap&&) noexcept;
  ~YamlMap();

  bool Has(const std::string& key) const;
  // Each leaves *out unchanged when the key is absent (so defaults stay).
  absl::Status GetString(const std::string& key, std::string* out);
  absl::Status GetInt(const std::string& key, int64_t* out);
  absl::Status GetInt(const std::string& key, int32_t* out);
  absl::Status GetDouble(const std::string& key, double* out);  // accepts .inf / inf
  absl::Status GetBool(const std::string& key, bool* out);
  absl::Status GetStringList(const std::string& key, std::vector<std::string>* out);
  // A nested map; NotFound when absent.
  absl::StatusOr<YamlMap> GetMap(const std::string& key);
  // Fails on unknown keys, listing the known ones.
  absl::Status Finish(const std::vector<std::string>& known_for_help = {}) const;

  // "file:line: " for a key (or the map itself when key is empty).
  std::string Where(const std::string& key = "") const;

 private:
  YamlMap(std::unique_ptr<YAML::Node> node, std::string file, std::string path);
  absl::Status TypeError(const std::string& key, const std::string& want) const;

  std::unique_ptr<YAML::Node> node_;
  std::string file_;
  std::string path_;  // dotted path of this map, for messages
  std::set<std::string> used_;
};

// The first error of a series of reads: `check(map.GetInt(...))` for every
// key, then one RETURN_IF_ERROR(check.status()). Every key is still read,
// so Finish() reports unknown keys only after the known ones are checked.
class FirstError {
 public:
  void operator()(absl::Status st) {
    if (status_.ok() && !st.ok()) status_ = std::move(st);
  }
  const absl::Status& status() const { return status_; }

 private:
  absl::Status status_;
};

}  // namespace fedmf::config

#endif  // FEDMF_COMMON_CONFIG_YAML_READER_H_
