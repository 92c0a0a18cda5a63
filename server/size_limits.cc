#include "server/size_limits.h"

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/base/peer_text.h"
#include "common/base/status_macros.h"
#include "common/pki/ca.h"

namespace fedmf::server {
namespace {

int64_t GrantedDevices(const google::protobuf::RepeatedPtrField<v1::DeviceGrant>& grants) {
  int64_t n = 0;
  for (const v1::DeviceGrant& g : grants) n += g.count();  // count is uint32: no overflow
  return n;
}

absl::Status CheckProduct(const std::string& what, int64_t a, int64_t b, const SizeLimits& limits) {
  // a, b are already bounded (< 2^31 each), so the product fits int64.
  if (a > 0 && b > 0 && a * b > limits.max_matrix_values) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " = ", a, " x ", b, " = ", a * b,
                     " values exceeds the server's max_matrix_values = ", limits.max_matrix_values,
                     ": declare the real data size and dim, or ask the server's operator to raise "
                     "limits.max_matrix_values in the server config (docs/configuration.md)"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckJobSpecText(const v1::JobSpec& spec) {
  const std::string& id = spec.job_id();
  const bool id_ok = id.size() <= 128 && std::all_of(id.begin(), id.end(), [](char c) {
                       return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' ||
                              c == '_' || c == ':' || c == '-';
                     });
  if (!id_ok) {
    return absl::InvalidArgumentError(absl::StrCat(
        "field 'job_id': '", base::EscapePeerText(id, 128),
        "' is not a job id (1-128 characters of A-Z, a-z, 0-9, '.', '_', ':' and '-')"));
  }
  for (const std::string& name : spec.roster()) {
    if (name.size() > 64) {
      return absl::InvalidArgumentError(absl::StrCat("field 'roster': a name of ", name.size(),
                                                     " bytes (certificate names have 1-64)"));
    }
    if (absl::Status s = pki::ValidateName(name); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("field 'roster': ", s.message()));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateSizeLimits(const SizeLimits& l) {
  const std::pair<const char*, int64_t> all[] = {
      {"max_users", l.max_users},
      {"max_items", l.max_items},
      {"max_dim", l.max_dim},
      {"max_devices", l.max_devices},
      {"max_parties", l.max_parties},
      {"max_matrix_values", l.max_matrix_values},
      {"upload_buffer_bytes", l.upload_buffer_bytes},
      {"psi_mailbox_bytes", l.psi_mailbox_bytes},
      {"psi_fetch_bytes", l.psi_fetch_bytes},
      {"max_text_bytes", l.max_text_bytes},
      {"max_rejections_per_response", l.max_rejections_per_response},
      {"rejection_log_lines_per_minute", l.rejection_log_lines_per_minute}};
  for (const auto& [key, v] : all) {
    if (v < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("key 'limits.", key, "': must be >= 1 (got ", v, ")"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckBound(const std::string& field, int64_t value, const std::string& limit_key,
                        int64_t limit) {
  if (value < 0) {
    return absl::InvalidArgumentError(absl::StrCat(field, " = ", value, " is negative"));
  }
  if (value > limit) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, " = ", value, " exceeds the server's ", limit_key, " = ", limit,
                     ": declare the real size, or ask the server's operator to raise limits.",
                     limit_key, " in the server config (docs/configuration.md)"));
  }
  return absl::OkStatus();
}

absl::Status CheckDeclaredSizes(const std::string& what, int64_t users, int64_t items,
                                int64_t global_users, int64_t global_items, bool vertical,
                                int64_t dim, const SizeLimits& l) {
  if (auto s = CheckBound(absl::StrCat(what, ".users"), users, "max_users", l.max_users); !s.ok()) {
    return s;
  }
  if (auto s = CheckBound(absl::StrCat(what, ".items"), items, "max_items", l.max_items); !s.ok()) {
    return s;
  }
  if (auto s =
          CheckBound(absl::StrCat(what, ".global_users"), global_users, "max_users", l.max_users);
      !s.ok()) {
    return s;
  }
  if (auto s =
          CheckBound(absl::StrCat(what, ".global_items"), global_items, "max_items", l.max_items);
      !s.ok()) {
    return s;
  }
  // The shared matrix: users x dim for VFL, items x dim for HFL.
  return vertical
             ? CheckProduct(absl::StrCat(what, ".global_users x JobSpec.dim"), global_users, dim, l)
             : CheckProduct(absl::StrCat(what, ".global_items x JobSpec.dim"), global_items, dim,
                            l);
}

absl::Status CheckOfferReply(const v1::OfferReply& r, bool vertical, int64_t dim,
                             const SizeLimits& l) {
  return CheckDeclaredSizes("OfferReply", r.users(), r.items(), r.global_users(), r.global_items(),
                            vertical, dim, l);
}

absl::Status CheckJobSpecSizes(const v1::JobSpec& spec, const SizeLimits& l) {
  RETURN_IF_ERROR(CheckBound("JobSpec.dim", spec.dim(), "max_dim", l.max_dim));
  if (auto s =
          CheckBound("JobSpec.roster (parties)", spec.roster_size(), "max_parties", l.max_parties);
      !s.ok()) {
    return s;
  }
  if (spec.setting() == v1::SETTING_LFL) {
    const v1::LflSpec& lfl = spec.lfl();
    if (auto s = CheckBound("JobSpec.lfl.num_items", lfl.num_items(), "max_items", l.max_items);
        !s.ok()) {
      return s;
    }
    if (auto s = CheckBound("JobSpec.lfl.grants (devices)", GrantedDevices(lfl.grants()),
                            "max_devices", l.max_devices);
        !s.ok()) {
      return s;
    }
    if (auto s =
            CheckProduct("JobSpec.lfl.num_items x JobSpec.dim", lfl.num_items(), spec.dim(), l);
        !s.ok()) {
      return s;
    }
  }
  if (spec.setting() == v1::SETTING_HUA_S3) {
    const v1::HuaSpec& hua = spec.hua();
    if (auto s = CheckBound("JobSpec.hua.num_items", hua.num_items(), "max_items", l.max_items);
        !s.ok()) {
      return s;
    }
    if (auto s = CheckBound("JobSpec.hua.expected_users", hua.expected_users(), "max_users",
                            l.max_users);
        !s.ok()) {
      return s;
    }
    if (auto s = CheckBound("JobSpec.hua.max_online", hua.max_online(), "max_users", l.max_users);
        !s.ok()) {
      return s;
    }
    if (auto s = CheckBound("JobSpec.hua.grants (users)", GrantedDevices(hua.grants()), "max_users",
                            l.max_users);
        !s.ok()) {
      return s;
    }
    if (auto s =
            CheckProduct("JobSpec.hua.num_items x JobSpec.dim", hua.num_items(), spec.dim(), l);
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

absl::Status CheckHostHello(const v1::HostHello& hello, const SizeLimits& l) {
  return CheckBound("HostHello.devices", hello.devices_size(), "max_devices", l.max_devices);
}

}  // namespace fedmf::server
