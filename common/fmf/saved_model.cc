#include "common/fmf/saved_model.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unordered_set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/base/status_macros.h"
#include "common/mf/metrics.h"
#include "common/mf/top_n.h"
#include "nlohmann/json.hpp"

namespace fedmf::fmf {
namespace {

namespace fs = std::filesystem;
constexpr int kVersion = 1;
static_assert(std::endian::native == std::endian::little, "the model files are little-endian");

bool SafeName(const std::string& name) {
  return !name.empty() && name != "." && name != ".." &&
         std::all_of(name.begin(), name.end(), [](char c) {
           return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '.' || c == '_' || c == '-';
         });
}

absl::Status CheckShapes(const SavedPartyModel& p) {
  if (!SafeName(p.name)) {
    return absl::InvalidArgumentError(
        absl::StrCat("party name '", p.name, "': use letters, digits, '.', '_' or '-'"));
  }
  if (p.u.rows() != static_cast<int64_t>(p.user_ids.size()) ||
      p.v.rows() != static_cast<int64_t>(p.item_ids.size()) || p.u.cols() != p.v.cols()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "party '", p.name, "': U is ", p.u.rows(), "x", p.u.cols(), " for ", p.user_ids.size(),
        " users, V ", p.v.rows(), "x", p.v.cols(), " for ", p.item_ids.size(), " items"));
  }
  for (const auto* ids : {&p.user_ids, &p.item_ids}) {
    for (const std::string& id : *ids) {
      if (id.find('\n') != std::string::npos) {
        return absl::InvalidArgumentError(
            absl::StrCat("party '", p.name, "': an id holds a newline"));
      }
    }
  }
  for (const auto& [user, item] : p.rated) {
    if (user < 0 || user >= p.u.rows() || item < 0 || item >= p.v.rows()) {
      return absl::InvalidArgumentError(absl::StrCat("party '", p.name, "': rated pair (", user,
                                                     ", ", item, ") outside the model"));
    }
  }
  return absl::OkStatus();
}

absl::Status WriteFile(const fs::path& path, const std::string& bytes) {
  const fs::path tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out.flush())
      return absl::PermissionDeniedError(absl::StrCat("cannot write ", tmp.string()));
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec)
    return absl::PermissionDeniedError(
        absl::StrCat("cannot write ", path.string(), ": ", ec.message()));
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadWhole(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path.string(), ": cannot open"));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Lines(const std::vector<std::string>& ids) {
  std::string out;
  for (const std::string& id : ids) absl::StrAppend(&out, id, "\n");
  return out;
}

absl::StatusOr<std::vector<std::string>> ReadLines(const fs::path& path, int64_t expected) {
  ASSIGN_OR_RETURN(std::string text, ReadWhole(path));
  std::vector<std::string> ids;
  if (!text.empty()) {
    if (text.back() != '\n') return absl::DataLossError(absl::StrCat(path.string(), ": truncated"));
    text.pop_back();
    ids = absl::StrSplit(text, '\n');
  }
  if (static_cast<int64_t>(ids.size()) != expected) {
    return absl::DataLossError(
        absl::StrCat(path.string(), ": ", ids.size(), " ids but model.json says ", expected));
  }
  return ids;
}

std::string Bytes(const mf::Matrix& m) {
  return std::string(reinterpret_cast<const char*>(m.data()), static_cast<size_t>(m.size()) * 8);
}

absl::StatusOr<mf::Matrix> ReadMatrix(const fs::path& path, int64_t rows, int64_t cols) {
  ASSIGN_OR_RETURN(std::string bytes, ReadWhole(path));
  if (static_cast<int64_t>(bytes.size()) != rows * cols * 8) {
    return absl::DataLossError(absl::StrCat(path.string(), ": ", bytes.size(), " bytes, not ", rows,
                                            " x ", cols, " doubles"));
  }
  mf::Matrix m(rows, cols);
  std::memcpy(m.data(), bytes.data(), bytes.size());
  if (!m.allFinite())
    return absl::DataLossError(absl::StrCat(path.string(), ": a value is not finite"));
  return m;
}

}  // namespace

absl::StatusOr<SavedPartyModel> PartyModelFrom(std::string name, const data::PartyData& data,
                                               const mf::Matrix& u, const mf::Matrix& v,
                                               double rating_offset,
                                               const std::vector<std::string>& user_ids,
                                               const std::vector<std::string>& item_ids,
                                               const mf::RankingRule& ranking) {
  SavedPartyModel out;
  out.ranking = ranking;
  out.name = std::move(name);
  out.u = u;
  out.v = v;
  out.range = data.range;
  out.rating_offset = rating_offset;
  for (int32_t g : data.global_users) {
    if (g < 0 || g >= static_cast<int32_t>(user_ids.size())) {
      return absl::InvalidArgumentError(absl::StrCat("user ", g, " has no external id"));
    }
    out.user_ids.push_back(user_ids[g]);
  }
  for (int32_t g : data.global_items) {
    if (g < 0 || g >= static_cast<int32_t>(item_ids.size())) {
      return absl::InvalidArgumentError(absl::StrCat("item ", g, " has no external id"));
    }
    out.item_ids.push_back(item_ids[g]);
  }
  for (const auto* part : {&data.train, &data.test}) {
    for (const data::Rating& r : *part) out.rated.emplace_back(r.user, r.item);
  }
  std::sort(out.rated.begin(), out.rated.end());
  out.rated.erase(std::unique(out.rated.begin(), out.rated.end()), out.rated.end());
  RETURN_IF_ERROR(CheckShapes(out));
  return out;
}

absl::Status WriteSavedModel(const std::string& dir, const SavedModel& model) {
  for (const SavedPartyModel& p : model.parties) RETURN_IF_ERROR(CheckShapes(p));
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    return absl::PermissionDeniedError(absl::StrCat("cannot create ", dir, ": ", ec.message()));
  nlohmann::json parties = nlohmann::json::array();
  for (const SavedPartyModel& p : model.parties) {
    const fs::path base = fs::path(dir) / p.name;
    RETURN_IF_ERROR(WriteFile(base.string() + ".users.txt", Lines(p.user_ids)));
    RETURN_IF_ERROR(WriteFile(base.string() + ".items.txt", Lines(p.item_ids)));
    RETURN_IF_ERROR(WriteFile(base.string() + ".u.f64", Bytes(p.u)));
    RETURN_IF_ERROR(WriteFile(base.string() + ".v.f64", Bytes(p.v)));
    std::string rated;
    for (const auto& [user, item] : p.rated) {
      rated.append(reinterpret_cast<const char*>(&user), 4);
      rated.append(reinterpret_cast<const char*>(&item), 4);
    }
    RETURN_IF_ERROR(WriteFile(base.string() + ".rated.i32", rated));
    parties.push_back({{"name", p.name},
                       {"users", p.user_ids.size()},
                       {"items", p.item_ids.size()},
                       {"dim", p.u.cols()},
                       {"range", {p.range.min, p.range.max}},
                       {"rating_offset", p.rating_offset},
                       {"rated", p.rated.size()},
                       {"ranking",
                        {{"shrinkage", p.ranking.shrinkage},
                         {"popularity_weight", p.ranking.popularity_weight},
                         {"mean", p.ranking.mean}}}});
  }
  const nlohmann::json meta = {{"format", "fedmf-model"},
                               {"version", kVersion},
                               {"setting", model.setting},
                               {"job", model.job},
                               {"parties", parties}};
  // model.json last: a directory with it is complete.
  return WriteFile(fs::path(dir) / "model.json", meta.dump(2) + "\n");
}

absl::StatusOr<SavedModel> ReadSavedModel(const std::string& dir) {
  const fs::path meta_path = fs::path(dir) / "model.json";
  ASSIGN_OR_RETURN(std::string text, ReadWhole(meta_path));
  const std::string where = meta_path.string();
  nlohmann::json meta = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (meta.is_discarded() || !meta.is_object()) {
    return absl::DataLossError(absl::StrCat(where, ": not JSON"));
  }
  if (meta.value("format", "") != "fedmf-model") {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": field 'format' is not \"fedmf-model\""));
  }
  if (!meta.contains("version") || !meta["version"].is_number_integer() ||
      meta["version"].get<int>() != kVersion) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": field 'version' must be ", kVersion,
                                                   " (a model from another fedmf version)"));
  }
  SavedModel model;
  model.setting = meta.value("setting", "");
  model.job = meta.value("job", "");
  if (!meta.contains("parties") || !meta["parties"].is_array() || meta["parties"].empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": field 'parties' must list the parties"));
  }
  for (size_t k = 0; k < meta["parties"].size(); ++k) {
    const nlohmann::json& p = meta["parties"][k];
    const std::string field = absl::StrCat(where, ": parties[", k, "]");
    const bool ok =
        p.is_object() && p.contains("name") && p["name"].is_string() && p.contains("users") &&
        p["users"].is_number_unsigned() && p.contains("items") && p["items"].is_number_unsigned() &&
        p.contains("dim") && p["dim"].is_number_unsigned() && p.contains("range") &&
        p["range"].is_array() && p["range"].size() == 2 && p["range"][0].is_number() &&
        p["range"][1].is_number() && p.contains("rating_offset") &&
        p["rating_offset"].is_number() && p.contains("rated") && p["rated"].is_number_unsigned();
    if (!ok) {
      return absl::InvalidArgumentError(absl::StrCat(
          field, ": needs name, users, items, dim, range [min, max], rating_offset, rated"));
    }
    SavedPartyModel party;
    party.name = p["name"].get<std::string>();
    if (!SafeName(party.name)) {
      return absl::InvalidArgumentError(absl::StrCat(field, ": field 'name' is not a file name"));
    }
    const int64_t users = p["users"].get<int64_t>(), items = p["items"].get<int64_t>();
    const int64_t dim = p["dim"].get<int64_t>(), rated = p["rated"].get<int64_t>();
    party.range = {p["range"][0].get<double>(), p["range"][1].get<double>()};
    party.rating_offset = p["rating_offset"].get<double>();
    if (p.contains("ranking")) {
      const nlohmann::json& r = p["ranking"];
      const auto number = [&r](const char* key) {
        return r.is_object() && r.contains(key) && r[key].is_number() &&
               std::isfinite(r[key].get<double>());
      };
      if (!number("shrinkage") || !number("popularity_weight") || !number("mean") ||
          r["shrinkage"].get<double>() < 0 || r["popularity_weight"].get<double>() < 0) {
        return absl::DataLossError(absl::StrCat(
            field, ".ranking: needs finite shrinkage >= 0, popularity_weight >= 0 and mean"));
      }
      party.ranking = {r["shrinkage"].get<double>(), r["popularity_weight"].get<double>(),
                       r["mean"].get<double>()};
    }
    const std::string base = (fs::path(dir) / party.name).string();
    ASSIGN_OR_RETURN(party.user_ids, ReadLines(base + ".users.txt", users));
    ASSIGN_OR_RETURN(party.item_ids, ReadLines(base + ".items.txt", items));
    ASSIGN_OR_RETURN(party.u, ReadMatrix(base + ".u.f64", users, dim));
    ASSIGN_OR_RETURN(party.v, ReadMatrix(base + ".v.f64", items, dim));
    ASSIGN_OR_RETURN(std::string pairs, ReadWhole(base + ".rated.i32"));
    if (static_cast<int64_t>(pairs.size()) != rated * 8) {
      return absl::DataLossError(
          absl::StrCat(base, ".rated.i32: ", pairs.size(), " bytes, not ", rated, " pairs"));
    }
    for (int64_t i = 0; i < rated; ++i) {
      int32_t user = 0, item = 0;
      std::memcpy(&user, pairs.data() + 8 * i, 4);
      std::memcpy(&item, pairs.data() + 8 * i + 4, 4);
      party.rated.emplace_back(user, item);
    }
    if (auto s = CheckShapes(party); !s.ok()) {
      return absl::DataLossError(absl::StrCat(base, ": ", s.message()));
    }
    model.parties.push_back(std::move(party));
  }
  return model;
}

absl::StatusOr<std::vector<std::pair<std::string, double>>> RecommendFromModel(
    const SavedPartyModel& model, const std::string& user, int32_t top_n, bool include_rated) {
  if (top_n < 1) return absl::InvalidArgumentError("--top must be >= 1");
  auto it = std::find(model.user_ids.begin(), model.user_ids.end(), user);
  if (it == model.user_ids.end()) {
    return absl::NotFoundError(
        absl::StrCat("user '", user, "' is not in party '", model.name, "''s model"));
  }
  const int32_t row = static_cast<int32_t>(it - model.user_ids.begin());
  std::unordered_set<int32_t> rated;
  if (!include_rated) {
    for (const auto& [u, i] : model.rated) {
      if (u == row) rated.insert(i);
    }
  }
  std::vector<int32_t> support(model.item_ids.size(), 0);
  for (const auto& [u, i] : model.rated) ++support[i];
  // Ordered by the rule, shown as predicted ratings.
  std::vector<std::pair<int32_t, double>> ranked;
  for (int32_t j = 0; j < static_cast<int32_t>(model.item_ids.size()); ++j) {
    if (rated.count(j)) continue;
    ranked.emplace_back(
        j, mf::RankingScore(model.ranking, model.u.row(row).dot(model.v.row(j)), support[j]));
  }
  mf::KeepTopN(top_n, &ranked);
  std::vector<std::pair<std::string, double>> out;
  for (const auto& [item, rule_score] : ranked) {
    out.emplace_back(model.item_ids[item],
                     mf::Predict(model.u, model.v, row, item, model.range) + model.rating_offset);
  }
  return out;
}

}  // namespace fedmf::fmf
