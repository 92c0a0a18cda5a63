#include "common/fmf/wire/model_codec.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace fedmf::net {
namespace {

static_assert(std::endian::native == std::endian::little, "the wire form is little-endian");

std::string Bytes(const mf::Matrix& m) {
  return std::string(reinterpret_cast<const char*>(m.data()), static_cast<size_t>(m.size()) * 8);
}

absl::StatusOr<mf::Matrix> Matrix(const std::string& bytes, int64_t rows, int64_t cols,
                                  const char* field) {
  if (static_cast<int64_t>(bytes.size()) != rows * cols * 8) {
    return absl::InvalidArgumentError(absl::StrCat("field '", field, "': ", bytes.size(),
                                                   " bytes, not ", rows, " x ", cols, " doubles"));
  }
  mf::Matrix m(rows, cols);
  if (!bytes.empty()) std::memcpy(m.data(), bytes.data(), bytes.size());
  if (!m.allFinite())
    return absl::InvalidArgumentError(absl::StrCat("field '", field, "': not finite"));
  return m;
}

}  // namespace

v1::ExportModelResponse ModelToProto(const fmf::SavedPartyModel& model, const std::string& job_id,
                                     const std::string& setting) {
  v1::ExportModelResponse out;
  out.set_job_id(job_id);
  out.set_setting(setting);
  for (const std::string& id : model.user_ids) out.add_user_ids(id);
  for (const std::string& id : model.item_ids) out.add_item_ids(id);
  out.set_dim(static_cast<int32_t>(model.u.cols()));
  out.set_u(Bytes(model.u));
  out.set_v(Bytes(model.v));
  out.set_range_min(model.range.min);
  out.set_range_max(model.range.max);
  out.set_rating_offset(model.rating_offset);
  std::string rated;
  for (const auto& [user, item] : model.rated) {
    rated.append(reinterpret_cast<const char*>(&user), 4);
    rated.append(reinterpret_cast<const char*>(&item), 4);
  }
  out.set_rated(std::move(rated));
  out.set_ranking_shrinkage(model.ranking.shrinkage);
  out.set_ranking_popularity_weight(model.ranking.popularity_weight);
  out.set_ranking_mean(model.ranking.mean);
  return out;
}

absl::StatusOr<fmf::SavedPartyModel> ModelFromProto(const v1::ExportModelResponse& proto,
                                                    const std::string& name) {
  if (proto.dim() < 1) return absl::InvalidArgumentError("field 'dim': must be >= 1");
  fmf::SavedPartyModel m;
  m.name = name;
  m.user_ids.assign(proto.user_ids().begin(), proto.user_ids().end());
  m.item_ids.assign(proto.item_ids().begin(), proto.item_ids().end());
  auto u = Matrix(proto.u(), proto.user_ids_size(), proto.dim(), "u");
  if (!u.ok()) return u.status();
  auto v = Matrix(proto.v(), proto.item_ids_size(), proto.dim(), "v");
  if (!v.ok()) return v.status();
  m.u = std::move(*u);
  m.v = std::move(*v);
  m.range = {proto.range_min(), proto.range_max()};
  m.rating_offset = proto.rating_offset();
  if (!std::isfinite(proto.ranking_shrinkage()) || proto.ranking_shrinkage() < 0 ||
      !std::isfinite(proto.ranking_popularity_weight()) || proto.ranking_popularity_weight() < 0 ||
      !std::isfinite(proto.ranking_mean())) {
    return absl::InvalidArgumentError(
        "fields 'ranking_*': need finite shrinkage >= 0, popularity weight >= 0 and mean");
  }
  m.ranking = {proto.ranking_shrinkage(), proto.ranking_popularity_weight(), proto.ranking_mean()};
  if (proto.rated().size() % 8 != 0) {
    return absl::InvalidArgumentError("field 'rated': not whole (user, item) pairs");
  }
  for (size_t i = 0; i < proto.rated().size(); i += 8) {
    int32_t user = 0, item = 0;
    std::memcpy(&user, proto.rated().data() + i, 4);
    std::memcpy(&item, proto.rated().data() + i + 4, 4);
    if (user < 0 || user >= m.u.rows() || item < 0 || item >= m.v.rows()) {
      return absl::InvalidArgumentError(
          absl::StrCat("field 'rated': pair (", user, ", ", item, ") outside the model"));
    }
    m.rated.emplace_back(user, item);
  }
  return m;
}

}  // namespace fedmf::net
