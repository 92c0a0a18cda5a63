#include "common/lfl/wire/secagg_codec.h"

#include <type_traits>
#include <variant>

#include "absl/strings/str_cat.h"
#include "common/crypto/mod2k.h"

namespace fedmf::net {
namespace {

std::vector<uint8_t> Bytes(const std::string& s) { return {s.begin(), s.end()}; }
std::string String(const std::vector<uint8_t>& b) { return {b.begin(), b.end()}; }

secagg::MessageHeader ToServer(uint64_t aggregation_id, uint64_t device, secagg::Phase phase) {
  return {aggregation_id, device, secagg::kServerId, phase};
}
secagg::MessageHeader FromServer(uint64_t aggregation_id, uint64_t device, secagg::Phase phase) {
  return {aggregation_id, secagg::kServerId, device, phase};
}

}  // namespace

int PackedWidth(int bits) { return (bits + 7) / 8; }

std::string PackValues(std::span<const uint64_t> values, int bits) {
  const int w = PackedWidth(bits);
  std::string out(values.size() * static_cast<size_t>(w), '\0');
  char* p = out.data();
  for (uint64_t v : values) {
    for (int b = 0; b < w; ++b) *p++ = static_cast<char>((v >> (8 * b)) & 0xff);
  }
  return out;
}

absl::StatusOr<std::vector<uint64_t>> UnpackValues(const std::string& bytes, size_t count, int bits,
                                                   const char* field) {
  const size_t w = static_cast<size_t>(PackedWidth(bits));
  if (bytes.size() != count * w) {
    return absl::InvalidArgumentError(absl::StrCat("field '", field, "': ", bytes.size(),
                                                   " bytes, expected ", count, " values of ", w,
                                                   " bytes"));
  }
  const uint64_t mask = crypto::LowBitsMask(bits);
  std::vector<uint64_t> out(count);
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
  for (size_t i = 0; i < count; ++i) {
    uint64_t v = 0;
    for (size_t b = 0; b < w; ++b) v |= uint64_t{p[i * w + b]} << (8 * b);
    if ((v & ~mask) != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("field '", field, "': value ", i, " is not below 2^", bits));
    }
    out[i] = v;
  }
  return out;
}

v1::SecAggSession SessionToProto(const secagg::SessionConfig& c) {
  v1::SecAggSession p;
  p.set_aggregation_id(c.aggregation_id);
  for (secagg::DeviceId d : c.roster) p.add_roster(d);
  p.set_complete_graph(c.graph == secagg::GraphKind::kComplete);
  p.set_degree(c.degree);
  p.set_graph_seed(c.graph_seed);
  p.set_threshold(c.threshold);
  p.set_min_survivors(c.min_survivors);
  p.set_vector_length(c.vector_length);
  p.set_bits(c.bits);
  p.set_consistency_check(c.consistency_check);
  return p;
}

absl::StatusOr<secagg::SessionConfig> SessionFromProto(const v1::SecAggSession& p) {
  if (static_cast<size_t>(p.roster_size()) > secagg::kMaxRosterSize) {
    return absl::InvalidArgumentError("field 'session.roster': too many devices");
  }
  secagg::SessionConfig c;
  c.aggregation_id = p.aggregation_id();
  c.roster = std::vector<secagg::DeviceId>(p.roster().begin(), p.roster().end());
  c.graph = p.complete_graph() ? secagg::GraphKind::kComplete : secagg::GraphKind::kHarary;
  c.degree = p.degree();
  c.graph_seed = p.graph_seed();
  c.threshold = p.threshold();
  c.min_survivors = p.min_survivors();
  c.vector_length = p.vector_length();
  c.bits = p.bits();
  c.consistency_check = p.consistency_check();
  if (auto s = secagg::ValidateSessionConfig(c); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("field 'session': ", s.message()));
  }
  return c;
}

v1::DevicePhase DevicePhaseOf(secagg::Phase phase) {
  switch (phase) {
    case secagg::Phase::kAdvertiseKeys: return v1::DEVICE_PHASE_ADVERTISE_KEYS;
    case secagg::Phase::kShareKeys: return v1::DEVICE_PHASE_SHARE_KEYS;
    case secagg::Phase::kMaskedInput: return v1::DEVICE_PHASE_MASKED_INPUT;
    case secagg::Phase::kUnmasking: return v1::DEVICE_PHASE_UNMASKING;
    case secagg::Phase::kConsistencyCheck: return v1::DEVICE_PHASE_CONSISTENCY_CHECK;
    default: return v1::DEVICE_PHASE_UNSPECIFIED;
  }
}

v1::DeviceMessage ClientMessageToProto(const secagg::ClientMessage& message, int bits) {
  v1::DeviceMessage out;
  out.set_device(secagg::HeaderOf(message).sender);
  std::visit(
      [&](const auto& m) {
        using T = std::decay_t<decltype(m)>;
        if constexpr (std::is_same_v<T, secagg::AdvertiseKeys>) {
          auto* a = out.mutable_advertise_keys();
          a->set_c_pk(String(m.c_pk));
          a->set_s_pk(String(m.s_pk));
          a->set_signing_key(String(m.signing_key));
          a->set_credential(String(m.credential));
          a->set_signature(String(m.signature));
        } else if constexpr (std::is_same_v<T, secagg::ConsistencySignature>) {
          out.mutable_consistency_signature()->set_signature(String(m.signature));
        } else if constexpr (std::is_same_v<T, secagg::ShareKeys>) {
          auto* s = out.mutable_share_keys();
          s->set_b_commitment(String(m.b_commitment));
          for (const auto& e : m.shares) {
            auto* x = s->add_shares();
            x->set_peer(e.peer);
            x->set_ciphertext(String(e.ciphertext));
          }
          s->set_recovery_commitment(String(m.recovery_commitment));
          for (const auto& p : m.mask_pads) {
            auto* x = s->add_mask_pads();
            x->set_peer(p.peer);
            x->set_pad(String(p.pad));
          }
        } else if constexpr (std::is_same_v<T, secagg::MaskedInput>) {
          out.mutable_masked_input()->set_masked(PackValues(m.masked, bits));
        } else {
          auto* u = out.mutable_unmasking();
          for (const auto& r : m.b_shares) {
            auto* x = u->add_b_shares();
            x->set_owner(r.owner);
            x->set_share(String(r.share));
          }
          for (const auto& r : m.s_sk_shares) {
            auto* x = u->add_s_sk_shares();
            x->set_owner(r.owner);
            x->set_share(String(r.share));
          }
        }
      },
      message);
  return out;
}

absl::StatusOr<secagg::ClientMessage> ClientMessageFromProto(const v1::DeviceMessage& m,
                                                             const secagg::SessionConfig& config) {
  const uint64_t agg = config.aggregation_id;
  const uint64_t dev = m.device();
  switch (m.body_case()) {
    case v1::DeviceMessage::kAdvertiseKeys: {
      secagg::AdvertiseKeys a;
      a.header = ToServer(agg, dev, secagg::Phase::kAdvertiseKeys);
      a.c_pk = Bytes(m.advertise_keys().c_pk());
      a.s_pk = Bytes(m.advertise_keys().s_pk());
      a.signing_key = Bytes(m.advertise_keys().signing_key());
      a.credential = Bytes(m.advertise_keys().credential());
      a.signature = Bytes(m.advertise_keys().signature());
      return a;
    }
    case v1::DeviceMessage::kConsistencySignature: {
      secagg::ConsistencySignature c;
      c.header = ToServer(agg, dev, secagg::Phase::kConsistencyCheck);
      c.signature = Bytes(m.consistency_signature().signature());
      return c;
    }
    case v1::DeviceMessage::kShareKeys: {
      secagg::ShareKeys s;
      s.header = ToServer(agg, dev, secagg::Phase::kShareKeys);
      s.b_commitment = Bytes(m.share_keys().b_commitment());
      if (static_cast<size_t>(m.share_keys().shares_size()) > secagg::MaxDegree(config)) {
        return absl::InvalidArgumentError("field 'share_keys.shares': more than the degree");
      }
      for (const auto& e : m.share_keys().shares()) {
        s.shares.push_back({e.peer(), Bytes(e.ciphertext())});
      }
      s.recovery_commitment = Bytes(m.share_keys().recovery_commitment());
      if (static_cast<size_t>(m.share_keys().mask_pads_size()) > secagg::MaxDegree(config)) {
        return absl::InvalidArgumentError("field 'share_keys.mask_pads': more than the degree");
      }
      for (const auto& p : m.share_keys().mask_pads()) {
        s.mask_pads.push_back({p.peer(), Bytes(p.pad())});
      }
      return s;
    }
    case v1::DeviceMessage::kMaskedInput: {
      auto v = UnpackValues(m.masked_input().masked(), config.vector_length, config.bits,
                            "masked_input.masked");
      if (!v.ok()) return v.status();
      secagg::MaskedInput x;
      x.header = ToServer(agg, dev, secagg::Phase::kMaskedInput);
      x.masked = std::move(*v);
      return x;
    }
    case v1::DeviceMessage::kUnmasking: {
      const auto& u = m.unmasking();
      if (static_cast<size_t>(u.b_shares_size() + u.s_sk_shares_size()) >
          secagg::MaxDegree(config) + 1) {
        return absl::InvalidArgumentError("field 'unmasking': more shares than neighbours");
      }
      secagg::UnmaskingResponse r;
      r.header = ToServer(agg, dev, secagg::Phase::kUnmasking);
      for (const auto& x : u.b_shares()) r.b_shares.push_back({x.owner(), Bytes(x.share())});
      for (const auto& x : u.s_sk_shares()) r.s_sk_shares.push_back({x.owner(), Bytes(x.share())});
      return r;
    }
    default: return absl::InvalidArgumentError("field 'body': not a secure-aggregation message");
  }
}

v1::InboxMessage ServerMessageToProto(const secagg::ServerMessage& message) {
  v1::InboxMessage out;
  out.set_device(secagg::HeaderOf(message).recipient);
  std::visit(
      [&](const auto& m) {
        using T = std::decay_t<decltype(m)>;
        if constexpr (std::is_same_v<T, secagg::KeysBroadcast>) {
          auto* k = out.mutable_keys();
          for (const auto& n : m.neighbours) {
            auto* x = k->add_neighbours();
            x->set_device(n.device);
            x->set_c_pk(String(n.c_pk));
            x->set_s_pk(String(n.s_pk));
            x->set_signing_key(String(n.signing_key));
            x->set_credential(String(n.credential));
            x->set_signature(String(n.signature));
          }
        } else if constexpr (std::is_same_v<T, secagg::MaskedInputRequest>) {
          auto* s = out.mutable_shares();
          for (const auto& e : m.shares) {
            auto* x = s->add_shares();
            x->set_peer(e.peer);
            x->set_ciphertext(String(e.ciphertext));
          }
        } else if constexpr (std::is_same_v<T, secagg::UnmaskingRequest>) {
          auto* u = out.mutable_unmasking();
          for (auto d : m.survivors) u->add_survivors(d);
          for (auto d : m.dropped) u->add_dropped(d);
          for (const auto& ds : m.signatures) {
            auto* x = u->add_signatures();
            x->set_device(ds.device);
            x->set_signature(String(ds.signature));
          }
        } else if constexpr (std::is_same_v<T, secagg::ConsistencyCheckRequest>) {
          auto* c = out.mutable_consistency_check();
          for (auto d : m.survivors) c->add_survivors(d);
        } else {
          out.set_abort_reason(m.reason);
        }
      },
      message);
  return out;
}

absl::StatusOr<secagg::ServerMessage> ServerMessageFromProto(const v1::InboxMessage& m,
                                                             uint64_t agg) {
  const uint64_t dev = m.device();
  switch (m.body_case()) {
    case v1::InboxMessage::kKeys: {
      secagg::KeysBroadcast k;
      k.header = FromServer(agg, dev, secagg::Phase::kShareKeys);
      for (const auto& n : m.keys().neighbours()) {
        k.neighbours.push_back({n.device(), Bytes(n.c_pk()), Bytes(n.s_pk()),
                                Bytes(n.signing_key()), Bytes(n.credential()),
                                Bytes(n.signature())});
      }
      return k;
    }
    case v1::InboxMessage::kShares: {
      secagg::MaskedInputRequest r;
      r.header = FromServer(agg, dev, secagg::Phase::kMaskedInput);
      for (const auto& e : m.shares().shares())
        r.shares.push_back({e.peer(), Bytes(e.ciphertext())});
      return r;
    }
    case v1::InboxMessage::kUnmasking: {
      secagg::UnmaskingRequest r;
      r.header = FromServer(agg, dev, secagg::Phase::kUnmasking);
      r.survivors.assign(m.unmasking().survivors().begin(), m.unmasking().survivors().end());
      r.dropped.assign(m.unmasking().dropped().begin(), m.unmasking().dropped().end());
      for (const auto& ds : m.unmasking().signatures()) {
        r.signatures.push_back({ds.device(), Bytes(ds.signature())});
      }
      return r;
    }
    case v1::InboxMessage::kConsistencyCheck: {
      secagg::ConsistencyCheckRequest c;
      c.header = FromServer(agg, dev, secagg::Phase::kConsistencyCheck);
      c.survivors.assign(m.consistency_check().survivors().begin(),
                         m.consistency_check().survivors().end());
      return c;
    }
    case v1::InboxMessage::kAbortReason: {
      secagg::AbortNotice a;
      a.header = FromServer(agg, dev, secagg::Phase::kAbort);
      a.reason = m.abort_reason();
      return a;
    }
    default: return absl::InvalidArgumentError("inbox message without a body");
  }
}

}  // namespace fedmf::net
