#include "common/config/yaml_reader.h"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/base/status_macros.h"

namespace fedmf::config {

YamlMap::YamlMap(std::unique_ptr<YAML::Node> node, std::string file, std::string path)
    : node_(std::move(node)), file_(std::move(file)), path_(std::move(path)) {}
YamlMap::YamlMap(YamlMap&&) noexcept = default;
YamlMap& YamlMap::operator=(YamlMap&&) noexcept = default;
YamlMap::~YamlMap() = default;

absl::StatusOr<YamlMap> YamlMap::FromString(const std::string& text, const std::string& name) {
  try {
    auto node = std::make_unique<YAML::Node>(YAML::Load(text));
    if (node->IsNull()) {
      // An empty file is an empty config: every default applies.
      return YamlMap(std::make_unique<YAML::Node>(YAML::NodeType::Map), name, "");
    }
    if (!node->IsMap()) {
      return absl::InvalidArgumentError(absl::StrCat(name, ":", node->Mark().line + 1,
                                                     ": the top level must be a mapping "
                                                     "(key: value lines)"));
    }
    return YamlMap(std::move(node), name, "");
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, ":", e.mark.line + 1, ":", e.mark.column + 1, ": YAML syntax error: ", e.msg));
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": cannot parse: ", e.what()));
  }
}

absl::StatusOr<YamlMap> YamlMap::FromFile(const std::string& path) {
  try {
    std::ifstream in(path);
    if (!in) {
      return absl::NotFoundError(absl::StrCat("config file '", path, "' cannot be opened"));
    }
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return FromString(text, path);
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": cannot read: ", e.what()));
  }
}

std::string YamlMap::Where(const std::string& key) const {
  try {
    if (!key.empty() && (*node_)[key]) {
      return absl::StrCat(file_, ":", (*node_)[key].Mark().line + 1, ": ");
    }
    const int line = node_->Mark().line;
    return line >= 0 ? absl::StrCat(file_, ":", line + 1, ": ") : absl::StrCat(file_, ": ");
  } catch (const std::exception&) {
    return absl::StrCat(file_, ": ");
  }
}

absl::Status YamlMap::TypeError(const std::string& key, const std::string& want) const {
  return absl::InvalidArgumentError(
      absl::StrCat(Where(key), "key '", path_, key, "': expected ", want));
}

bool YamlMap::Has(const std::string& key) const {
  try {
    return static_cast<bool>((*node_)[key]);
  } catch (const std::exception&) {
    return false;
  }
}

absl::Status YamlMap::GetString(const std::string& key, std::string* out) {
  used_.insert(key);
  try {
    YAML::Node v = (*node_)[key];
    if (!v) return absl::OkStatus();
    if (!v.IsScalar()) return TypeError(key, "a string");
    *out = v.as<std::string>();
    return absl::OkStatus();
  } catch (const std::exception&) {
    return TypeError(key, "a string");
  }
}

absl::Status YamlMap::GetInt(const std::string& key, int64_t* out) {
  std::string text;
  if (!Has(key)) {
    used_.insert(key);
    return absl::OkStatus();
  }
  if (auto s = GetString(key, &text); !s.ok()) return TypeError(key, "an integer");
  int64_t v = 0;
  if (!absl::SimpleAtoi(text, &v))
    return TypeError(key, absl::StrCat("an integer, got '", text, "'"));
  *out = v;
  return absl::OkStatus();
}

absl::Status YamlMap::GetInt(const std::string& key, int32_t* out) {
  int64_t v = *out;
  RETURN_IF_ERROR(GetInt(key, &v));
  if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()) {
    return TypeError(key, "an integer in 32-bit range");
  }
  *out = static_cast<int32_t>(v);
  return absl::OkStatus();
}

absl::Status YamlMap::GetDouble(const std::string& key, double* out) {
  std::string text;
  if (!Has(key)) {
    used_.insert(key);
    return absl::OkStatus();
  }
  if (auto s = GetString(key, &text); !s.ok()) return TypeError(key, "a number");
  const std::string lower = absl::AsciiStrToLower(text);
  if (lower == "inf" || lower == ".inf" || lower == "infinity") {
    *out = std::numeric_limits<double>::infinity();
    return absl::OkStatus();
  }
  double v = 0;
  if (!absl::SimpleAtod(text, &v) || std::isnan(v)) {
    return TypeError(key, absl::StrCat("a number, got '", text, "'"));
  }
  *out = v;
  return absl::OkStatus();
}

absl::Status YamlMap::GetBool(const std::string& key, bool* out) {
  std::string text;
  if (!Has(key)) {
    used_.insert(key);
    return absl::OkStatus();
  }
  if (auto s = GetString(key, &text); !s.ok()) return TypeError(key, "true or false");
  const std::string lower = absl::AsciiStrToLower(text);
  if (lower == "true" || lower == "yes") {
    *out = true;
  } else if (lower == "false" || lower == "no") {
    *out = false;
  } else {
    return TypeError(key, absl::StrCat("true or false, got '", text, "'"));
  }
  return absl::OkStatus();
}

absl::Status YamlMap::GetStringList(const std::string& key, std::vector<std::string>* out) {
  used_.insert(key);
  try {
    YAML::Node v = (*node_)[key];
    if (!v) return absl::OkStatus();
    if (!v.IsSequence()) return TypeError(key, "a list ([a, b] or '- a' lines)");
    std::vector<std::string> items;
    for (const auto& item : v) {
      if (!item.IsScalar()) return TypeError(key, "a list of strings");
      items.push_back(item.as<std::string>());
    }
    *out = std::move(items);
    return absl::OkStatus();
  } catch (const std::exception&) {
    return TypeError(key, "a list of strings");
  }
}

absl::StatusOr<YamlMap> YamlMap::GetMap(const std::string& key) {
  used_.insert(key);
  try {
    YAML::Node v = (*node_)[key];
    if (!v) return absl::NotFoundError(absl::StrCat("no key '", path_, key, "'"));
    if (!v.IsMap()) return TypeError(key, "a mapping (indented key: value lines)");
    return YamlMap(std::make_unique<YAML::Node>(v), file_, absl::StrCat(path_, key, "."));
  } catch (const std::exception&) {
    return TypeError(key, "a mapping");
  }
}

absl::Status YamlMap::Finish(const std::vector<std::string>& known_for_help) const {
  try {
    for (const auto& kv : *node_) {
      const std::string key = kv.first.as<std::string>();
      if (used_.count(key) == 0) {
        std::vector<std::string> known(known_for_help);
        if (known.empty()) known.assign(used_.begin(), used_.end());
        return absl::InvalidArgumentError(
            absl::StrCat(file_, ":", kv.first.Mark().line + 1, ": unknown key '", path_, key,
                         "' (known keys here: ", absl::StrJoin(known, ", "), ")"));
      }
    }
    return absl::OkStatus();
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(file_, ": bad mapping: ", e.what()));
  }
}

}  // namespace fedmf::config
