#include "common/hua/wire/hua_codec.h"

#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"
#include "common/net/device_grants.h"

namespace fedmf::net {
namespace {

absl::Status Bad(const std::string& what) { return absl::InvalidArgumentError(what); }

// A vector of exactly `dim` finite doubles.
template <typename Field>
absl::StatusOr<std::vector<double>> Doubles(const Field& f, int32_t dim, const std::string& name) {
  if (f.size() != dim) {
    return Bad(absl::StrCat("field '", name, "': ", f.size(), " values, expected dim = ", dim));
  }
  std::vector<double> out(f.begin(), f.end());
  for (size_t l = 0; l < out.size(); ++l) {
    if (!std::isfinite(out[l])) {
      return Bad(absl::StrCat("field '", name, "[", l, "]': not a finite number"));
    }
  }
  return out;
}

// A vector of exactly `dim` elements of Z_P (fixed64: each < 2^64 = P).
template <typename Field>
absl::StatusOr<std::vector<uint64_t>> ZpVector(const Field& f, int32_t dim,
                                               const std::string& name) {
  if (f.size() != dim) {
    return Bad(absl::StrCat("field '", name, "': ", f.size(), " values, expected dim = ", dim));
  }
  return std::vector<uint64_t>(f.begin(), f.end());
}

absl::Status NonNegative(int64_t x, const std::string& name) {
  if (x < 0) return Bad(absl::StrCat("field '", name, "': must be >= 0, got ", x));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<HuaJob> HuaJobFromSpec(const v1::JobSpec& spec) {
  if (spec.setting() != v1::SETTING_HUA_S3) return Bad("field 'setting': must be hua-s3");
  const v1::HuaSpec& h = spec.hua();
  HuaJob job;
  hua::HuaParams& p = job.params;
  p.scenario = hua::Scenario::kDynamic;
  p.dim = spec.dim();
  p.gamma = h.gamma();
  p.lambda = h.lambda();
  p.mu = h.mu();
  p.iterations = spec.rounds();
  p.epsilon = spec.epsilon();
  p.join_prob = h.join_prob();
  p.leave_prob = h.leave_prob();
  p.initial_online = h.initial_online();
  p.max_online = h.max_online();
  p.zp.frac_bits = h.zp_frac_bits();
  p.zp.max_abs = h.zp_max_abs();
  p.zp.max_summands = h.zp_max_summands();
  p.paper_noise = h.paper_noise();
  if (spec.delta() > 0) p.delta = spec.delta();
  if (spec.theta() > 0) p.theta = spec.theta();
  p.clip = h.clip();
  p.validation_fraction = h.validation_fraction();
  if (auto s = hua::ValidateHuaParams(p); !s.ok()) {
    return Bad(absl::StrCat("field 'hua' / 'dim' / 'rounds' / 'epsilon' / 'delta' / 'theta': ",
                            s.message()));
  }
  job.range = {h.rating_min(), spec.rating_max()};
  if (!(job.range.max > job.range.min)) {
    return Bad("fields 'hua.rating_min' < 'rating_max' required");
  }
  if (h.num_items() < 1) return Bad("field 'hua.num_items': must be >= 1");
  job.num_items = h.num_items();
  if (!(spec.test_fraction() >= 0 && spec.test_fraction() < 1)) {
    return Bad("field 'test_fraction': must be in [0, 1)");
  }
  job.test_fraction = spec.test_fraction();
  job.has_seed = spec.has_seed();
  job.seed = spec.seed();
  // User ids are int32 on the wire of the Hua messages.
  if (auto granted = ValidateDeviceGrants(h.grants(), "hua.grants", uint64_t{1} << 31);
      !granted.ok()) {
    return granted.status();
  }
  if (h.expected_users() < 0) return Bad("field 'hua.expected_users': must be >= 0");
  return job;
}

v1::JobSpec SpecFromHuaJob(const HuaJob& job) {
  const hua::HuaParams& p = job.params;
  v1::JobSpec spec;
  spec.set_setting(v1::SETTING_HUA_S3);
  spec.set_dim(p.dim);
  spec.set_rounds(p.iterations);
  spec.set_epsilon(p.epsilon);
  spec.set_delta(p.delta);
  spec.set_theta(p.theta);
  spec.set_rating_max(job.range.max);
  spec.set_test_fraction(job.test_fraction);
  spec.set_has_seed(job.has_seed);
  spec.set_seed(job.seed);
  v1::HuaSpec* h = spec.mutable_hua();
  h->set_paper_noise(p.paper_noise);
  h->set_clip(p.clip);
  h->set_validation_fraction(p.validation_fraction);
  h->set_gamma(p.gamma);
  h->set_lambda(p.lambda);
  h->set_mu(p.mu);
  h->set_join_prob(p.join_prob);
  h->set_leave_prob(p.leave_prob);
  h->set_initial_online(p.initial_online);
  h->set_max_online(p.max_online);
  h->set_num_items(job.num_items);
  h->set_rating_min(job.range.min);
  h->set_zp_frac_bits(p.zp.frac_bits);
  h->set_zp_max_abs(p.zp.max_abs);
  h->set_zp_max_summands(p.zp.max_summands);
  return spec;
}

v1::HuaPhase ToWire(hua::Phase phase) {
  return phase == hua::Phase::kInit ? v1::HUA_PHASE_INIT : v1::HUA_PHASE_ITERATION;
}

absl::StatusOr<hua::Phase> PhaseFromWire(v1::HuaPhase phase) {
  switch (phase) {
    case v1::HUA_PHASE_INIT: return hua::Phase::kInit;
    case v1::HUA_PHASE_ITERATION: return hua::Phase::kIteration;
    default: return Bad("field 'phase': must be init or iteration");
  }
}

v1::HuaInitRequest ToWire(const hua::InitRequest& r) {
  v1::HuaInitRequest out;
  out.set_user(r.user);
  for (const hua::InitItem& it : r.items) {
    v1::HuaInitItem* w = out.add_items();
    w->set_item(it.item);
    w->set_users(it.users);
    w->mutable_h()->Add(it.h.begin(), it.h.end());
    w->mutable_beta()->Add(it.beta.begin(), it.beta.end());
  }
  return out;
}

absl::StatusOr<hua::InitRequest> FromWire(const v1::HuaInitRequest& r, int32_t round, int32_t dim) {
  hua::InitRequest out{round, r.user(), {}};
  for (int k = 0; k < r.items_size(); ++k) {
    const v1::HuaInitItem& w = r.items(k);
    const std::string at = absl::StrCat("init.items[", k, "]");
    RETURN_IF_ERROR(NonNegative(w.item(), at + ".item"));
    if (w.users() < 1) return Bad(absl::StrCat("field '", at, ".users': must be >= 1"));
    ASSIGN_OR_RETURN(auto h, Doubles(w.h(), dim, at + ".h"));
    ASSIGN_OR_RETURN(auto beta, ZpVector(w.beta(), dim, at + ".beta"));
    out.items.push_back({w.item(), w.users(), std::move(h), std::move(beta)});
  }
  return out;
}

v1::HuaIterationRequest ToWire(const hua::IterationRequest& r) {
  v1::HuaIterationRequest out;
  out.set_user(r.user);
  for (const hua::ItemRequest& it : r.items) {
    v1::HuaItemRequest* w = out.add_items();
    w->set_item(it.item);
    w->mutable_v()->Add(it.v.begin(), it.v.end());
    w->set_rho_users(it.rho_users);
    w->mutable_h_rho()->Add(it.h_rho.begin(), it.h_rho.end());
    w->mutable_mask()->Add(it.mask.begin(), it.mask.end());
  }
  return out;
}

absl::StatusOr<hua::IterationRequest> FromWire(const v1::HuaIterationRequest& r, int32_t iteration,
                                               int32_t pass, int32_t dim) {
  hua::IterationRequest out;
  out.iteration = iteration;
  out.pass = pass;
  out.user = r.user();
  for (int k = 0; k < r.items_size(); ++k) {
    const v1::HuaItemRequest& w = r.items(k);
    const std::string at = absl::StrCat("iteration.items[", k, "]");
    RETURN_IF_ERROR(NonNegative(w.item(), at + ".item"));
    if (w.rho_users() < 1) return Bad(absl::StrCat("field '", at, ".rho_users': must be >= 1"));
    hua::ItemRequest item;
    item.item = w.item();
    item.rho_users = w.rho_users();
    auto v = Doubles(w.v(), dim, at + ".v");
    if (!v.ok()) return v.status();
    item.v = std::move(*v);
    if (!w.h_rho().empty()) {  // empty in the valid variant
      ASSIGN_OR_RETURN(auto h, Doubles(w.h_rho(), dim, at + ".h_rho"));
      item.h_rho = std::move(h);
    }
    auto mask = ZpVector(w.mask(), dim, at + ".mask");
    if (!mask.ok()) return mask.status();
    item.mask = std::move(*mask);
    out.items.push_back(std::move(item));
  }
  return out;
}

v1::HuaMaskedReport ToWire(const hua::MaskedReport& r) {
  v1::HuaMaskedReport out;
  out.set_user(r.user);
  for (const hua::MaskedValue& v : r.items) {
    v1::HuaMaskedValue* w = out.add_items();
    w->set_item(v.item);
    w->mutable_value()->Add(v.value.begin(), v.value.end());
    w->set_shares(v.shares);
  }
  return out;
}

absl::StatusOr<hua::MaskedReport> FromWire(const v1::HuaMaskedReport& r,
                                           const v1::HuaReportBatch& header, int32_t dim) {
  ASSIGN_OR_RETURN(auto phase, PhaseFromWire(header.phase()));
  hua::MaskedReport out{phase, header.round(), header.pass(), r.user(), {}};
  RETURN_IF_ERROR(NonNegative(r.user(), "reports.user"));
  for (int k = 0; k < r.items_size(); ++k) {
    const v1::HuaMaskedValue& w = r.items(k);
    const std::string at = absl::StrCat("reports.items[", k, "]");
    RETURN_IF_ERROR(NonNegative(w.item(), at + ".item"));
    ASSIGN_OR_RETURN(auto value, ZpVector(w.value(), dim, at + ".value"));
    if (w.shares() < 1) return Bad(absl::StrCat("field '", at, ".shares': must be >= 1"));
    out.items.push_back({w.item(), std::move(value), w.shares()});
  }
  return out;
}

v1::HuaPlan ToWire(const std::string& job_id, int32_t dim, const hua::AggregationPlan& p) {
  v1::HuaPlan out;
  out.set_job_id(job_id);
  out.set_phase(ToWire(p.phase));
  out.set_round(p.round);
  out.set_pass(p.pass);
  out.set_dim(dim);
  out.set_gaussian(p.gaussian);
  for (const hua::PlannedItem& it : p.items) {
    v1::HuaPlannedItem* w = out.add_items();
    w->set_item(it.item);
    w->mutable_users()->Add(it.users.begin(), it.users.end());
  }
  return out;
}

absl::StatusOr<hua::AggregationPlan> FromWire(const v1::HuaPlan& p) {
  ASSIGN_OR_RETURN(auto phase, PhaseFromWire(p.phase()));
  if (p.dim() < 1 || p.dim() > 4096) return Bad("field 'dim': must be in [1, 4096]");
  if (p.round() < 1 || p.pass() < 0) return Bad("fields 'round' >= 1 and 'pass' >= 0 required");
  hua::AggregationPlan out{phase, p.round(), p.pass(), {}, p.gaussian()};
  for (int k = 0; k < p.items_size(); ++k) {
    const v1::HuaPlannedItem& w = p.items(k);
    if (w.item() < 0 || w.users().empty()) {
      return Bad(absl::StrCat("field 'items[", k, "]': needs an item >= 0 and users"));
    }
    for (int s = 0; s < w.users_size(); ++s) {
      if (w.users(s) < 0 || (s > 0 && w.users(s) <= w.users(s - 1))) {
        return Bad(absl::StrCat("field 'items[", k, "].users': sorted, distinct, >= 0"));
      }
    }
    out.items.push_back({w.item(), std::vector<int32_t>(w.users().begin(), w.users().end())});
  }
  return out;
}

v1::HuaForward ToWire(const std::string& job_id, const hua::AggregateForward& f) {
  v1::HuaForward out;
  out.set_job_id(job_id);
  out.set_phase(ToWire(f.phase));
  out.set_round(f.round);
  out.set_pass(f.pass);
  for (const hua::ItemSum& s : f.items) {
    v1::HuaItemSum* w = out.add_items();
    w->set_item(s.item);
    w->set_contributors(s.contributors);
    w->mutable_sum()->Add(s.sum.begin(), s.sum.end());
  }
  out.mutable_incomplete_items()->Add(f.incomplete_items.begin(), f.incomplete_items.end());
  out.mutable_missing_users()->Add(f.missing_users.begin(), f.missing_users.end());
  return out;
}

absl::StatusOr<hua::AggregateForward> FromWire(const v1::HuaForward& f, int32_t dim) {
  ASSIGN_OR_RETURN(auto phase, PhaseFromWire(f.phase()));
  hua::AggregateForward out{phase, f.round(), f.pass(), {}, {}, {}};
  for (int k = 0; k < f.items_size(); ++k) {
    const v1::HuaItemSum& w = f.items(k);
    const std::string at = absl::StrCat("items[", k, "]");
    if (w.item() < 0 || w.contributors() < 1) {
      return Bad(absl::StrCat("field '", at, "': needs an item >= 0 and contributors >= 1"));
    }
    ASSIGN_OR_RETURN(auto sum, ZpVector(w.sum(), dim, at + ".sum"));
    out.items.push_back({w.item(), w.contributors(), std::move(sum)});
  }
  out.incomplete_items.assign(f.incomplete_items().begin(), f.incomplete_items().end());
  out.missing_users.assign(f.missing_users().begin(), f.missing_users().end());
  return out;
}

}  // namespace fedmf::net
