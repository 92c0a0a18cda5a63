// Secure aggregation against an active server (signing.h): signed key
// advertisements and the consistency check, driven by a scripted malicious
// server that edits, forges or withholds what the honest server state machine
// would send.
#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/crypto/ed25519.h"
#include "common/crypto/x25519.h"
#include "common/secagg/signing.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"
#include "tests/unit/secagg/harness.h"

using ::fedmf::testing::IsOk;
using ::fedmf::testing::StatusIs;

namespace fedmf::secagg {
namespace {

using testing::Harness;
using testing::MakeConfig;
using Outbox = Harness::Outbox;

SessionConfig ActiveComplete(bool consistency_check = true) {
  SessionConfig c = MakeConfig(8, GraphKind::kComplete, 0, 5, 5, 6, 20, 11);
  c.consistency_check = consistency_check;
  return c;
}
SessionConfig ActiveHarary() {
  // t = 5: 2t > holders (7) + 1, so one colluding neighbour (a host of one
  // device, the harness's default) cannot make an equivocation pay.
  SessionConfig c = MakeConfig(16, GraphKind::kHarary, 6, 5, 8, 6, 20, 12);
  c.consistency_check = true;
  return c;
}

size_t CountMessages(const Outbox& out) {
  return static_cast<size_t>(
      std::count_if(out.begin(), out.end(), [](const auto& m) { return m.has_value(); }));
}

// Every b- or s_sk-share revealed in `out`, by owner.
std::set<DeviceId> RevealedOwners(const Outbox& out) {
  std::set<DeviceId> owners;
  for (const auto& m : out) {
    if (!m.has_value()) continue;
    const auto* r = std::get_if<UnmaskingResponse>(&*m);
    if (r == nullptr) continue;
    for (const RevealedShare& s : r->b_shares) owners.insert(s.owner);
    for (const RevealedShare& s : r->s_sk_shares) owners.insert(s.owner);
  }
  return owners;
}

void RunHonest(Harness& h) {
  h.Phase(/*start=*/true);  // AdvertiseKeys
  h.Phase();                // ShareKeys
  h.Phase();                // MaskedInput → ConsistencyCheckRequest
  ASSERT_EQ(h.server().state(), ServerState::kConsistencyCheck);
  for (size_t i = 0; i < h.size(); ++i) {
    ASSERT_EQ(h.client(i).state(), ClientState::kConsistencyCheck) << i;
  }
  h.Phase();  // ConsistencyCheck → UnmaskingRequest
  ASSERT_EQ(h.server().state(), ServerState::kR3Unmasking);
  h.Phase();  // Unmasking
}

TEST(ActiveSecAggTest, HonestSignedRunSumsExactlyCompleteAndHarary) {
  for (const SessionConfig& config : {ActiveComplete(), ActiveHarary()}) {
    Harness h(config, 3, /*signing=*/true);
    RunHonest(h);
    ASSERT_EQ(h.server().state(), ServerState::kCompleted) << h.server().abort_reason();
    const AggregationResult r = *h.server().Result();
    EXPECT_EQ(r.included, h.config().roster);
    EXPECT_EQ(r.sum, h.ExpectedSum(h.config().roster));
    EXPECT_TRUE(h.server().rejections().empty());
    for (size_t i = 0; i < h.size(); ++i) EXPECT_EQ(h.client(i).state(), ClientState::kCompleted);
  }
}

TEST(ActiveSecAggTest, SignedRunWithDropoutsSumsTheSurvivors) {
  Harness h(ActiveHarary(), 4, /*signing=*/true);
  h.Phase(true);
  h.Phase();
  // Device 2 sends no masked input: it is in U2 \ U3, so its s_sk is recovered.
  h.inbox(2).reset();
  h.Phase();
  // Device 5 does not sign: it stays in U3 (its input is committed) but is
  // not asked to unmask.
  h.inbox(5).reset();
  h.Phase();
  h.Phase();
  ASSERT_EQ(h.server().state(), ServerState::kCompleted) << h.server().abort_reason();
  const AggregationResult r = *h.server().Result();
  std::vector<DeviceId> want = h.config().roster;
  want.erase(want.begin() + 2);
  EXPECT_EQ(r.included, want);
  EXPECT_EQ(r.sum, h.ExpectedSum(want));
}

// The attack of issue 13: the server hands device `victim` its own X25519 keys
// in place of one neighbour's, so that the victim seals that neighbour's share
// bundle to the server. (With the keys of t-1 neighbours replaced, the server
// would open t bundles of the victim: both its b and s_sk, i.e. its input.)
TEST(ActiveSecAggTest, SubstitutedKeysAbortTheVictimAndItsInputIsNeverUnmasked) {
  enum Forgery { kKeepSignature, kOwnSigningKey, kStolenCredential };
  for (Forgery forgery : {kKeepSignature, kOwnSigningKey, kStolenCredential}) {
    SCOPED_TRACE(static_cast<int>(forgery));
    Harness h(ActiveComplete(), 5, /*signing=*/true);
    const size_t victim = 3;
    const DeviceId victim_id = h.id(victim);
    h.Phase(true);
    ASSERT_EQ(h.server().state(), ServerState::kR1ShareKeys);

    random::Csprng adversary = random::Csprng::FromSeed(99);
    auto& broadcast = std::get<KeysBroadcast>(*h.inbox(victim));
    for (NeighbourKeys& nk : broadcast.neighbours) {  // every neighbour, to get all shares
      const crypto::X25519PrivateKey c = *crypto::X25519PrivateKey::Generate(adversary);
      const crypto::X25519PrivateKey s = *crypto::X25519PrivateKey::Generate(adversary);
      nk.c_pk.assign(c.public_key().begin(), c.public_key().end());
      nk.s_pk.assign(s.public_key().begin(), s.public_key().end());
      if (forgery == kKeepSignature) continue;
      // The server signs the substituted keys under a key of its own...
      const crypto::Ed25519PrivateKey k = *crypto::Ed25519PrivateKey::Generate(adversary);
      nk.signing_key.assign(k.public_key().begin(), k.public_key().end());
      nk.signature = *k.Sign(AdvertisementStatement(h.config().aggregation_id, nk.device, nk.c_pk,
                                                    nk.s_pk, nk.signing_key));
      // ...with a made-up credential, or a genuine one for another device.
      if (forgery == kOwnSigningKey) {
        nk.credential.assign(64, 0x5A);
      } else {
        nk.credential = h.Certify(victim_id, k.public_key(), "host-x") /* not nk.device's */;
      }
    }

    Outbox share_keys = h.Act();
    EXPECT_EQ(h.client(victim).state(), ClientState::kAborted);
    EXPECT_EQ(h.client(victim).abort_reason().code(), absl::StatusCode::kUnauthenticated)
        << h.client(victim).abort_reason();
    EXPECT_FALSE(share_keys[victim].has_value()) << "the victim sealed shares to forged keys";
    // The others carry on; the server sees the victim as a dropout.
    EXPECT_EQ(CountMessages(share_keys), h.size() - 1);
    h.Send(share_keys);
    h.Close();
    EXPECT_FALSE(h.inbox(victim).has_value());
    h.Phase();  // MaskedInput: the victim's input is never sent
    h.Phase();  // ConsistencyCheck
    Outbox unmasking = h.Act();
    const std::set<DeviceId> owners = RevealedOwners(unmasking);
    EXPECT_EQ(owners.count(victim_id), 0u) << "a share of the victim was released";
    EXPECT_EQ(owners.size(), h.size() - 1);
    h.Send(unmasking);
    ASSERT_THAT(h.server().ClosePhase(), IsOk());
    ASSERT_EQ(h.server().state(), ServerState::kCompleted) << h.server().abort_reason();
    std::vector<DeviceId> want = h.config().roster;
    want.erase(want.begin() + static_cast<ptrdiff_t>(victim));
    EXPECT_EQ(h.server().Result()->included, want);
    EXPECT_EQ(h.server().Result()->sum, h.ExpectedSum(want));
  }
}

TEST(ActiveSecAggTest, UnsignedOrUncertifiedAdvertisementIsRefused) {
  Harness h(ActiveComplete(), 6, /*signing=*/true);
  h.Phase(true);
  auto& broadcast = std::get<KeysBroadcast>(*h.inbox(0));
  broadcast.neighbours[2].signature.clear();  // a server stripping signatures
  h.Act();
  EXPECT_EQ(h.client(0).state(), ClientState::kAborted);
  EXPECT_EQ(h.client(0).abort_reason().code(), absl::StatusCode::kUnauthenticated);

  // The honest server itself refuses a device whose advertisement is unsigned.
  Harness g(ActiveComplete(), 7, /*signing=*/true);
  Outbox adverts = g.Start();
  std::get<AdvertiseKeys>(*adverts[1]).signature[0] ^= 1;
  const std::vector<absl::Status> st = g.Send(adverts);
  EXPECT_EQ(st[1].code(), absl::StatusCode::kUnauthenticated);
  for (size_t i = 0; i < g.size(); ++i) {
    if (i != 1) {
      EXPECT_THAT(st[i], IsOk());
    }
  }
}

// Runs an honest session up to the consistency-check requests.
void UpToConsistencyCheck(Harness& h) {
  h.Phase(true);
  h.Phase();
  h.Phase();
  ASSERT_EQ(h.server().state(), ServerState::kConsistencyCheck);
}

// Dropout equivocation: the server tells half of the devices that `target`
// survived (so they would reveal its b-share) and the other half that it
// dropped (so they would reveal its s_sk-share): with both, it unmasks x_target.
// Every device signs what it was told; whichever signatures the server then
// forwards, no device gets t valid signatures on its own U3, and none
// releases a single share.
TEST(ActiveSecAggTest, DropoutEquivocationAbortsAtTheConsistencyCheck) {
  enum Forward { kAllSignatures, kOnlyMatching };
  for (Forward forward : {kAllSignatures, kOnlyMatching}) {
    SCOPED_TRACE(static_cast<int>(forward));
    Harness h(ActiveComplete(), 8, /*signing=*/true);
    UpToConsistencyCheck(h);
    const size_t target = 6;
    const DeviceId target_id = h.id(target);
    const std::vector<DeviceId> u3 = h.config().roster;
    std::vector<DeviceId> u3_without = u3;
    u3_without.erase(u3_without.begin() + static_cast<ptrdiff_t>(target));
    auto told_dropped = [&](size_t i) { return i % 2 == 1 && i != target; };

    h.inbox(target).reset();  // the target is not asked: it would notice
    for (size_t i = 0; i < h.size(); ++i) {
      if (!h.inbox(i).has_value()) continue;
      auto& req = std::get<ConsistencyCheckRequest>(*h.inbox(i));
      ASSERT_EQ(req.survivors, u3);
      if (told_dropped(i)) req.survivors = u3_without;
    }
    Outbox signatures = h.Act();
    ASSERT_EQ(CountMessages(signatures), h.size() - 1);  // every device signed its story

    for (size_t i = 0; i < h.size(); ++i) {
      if (i == target) continue;
      UnmaskingRequest req;
      req.header = {h.config().aggregation_id, kServerId, h.id(i), Phase::kUnmasking};
      for (size_t j = 0; j < h.size(); ++j) {
        if (j == i) continue;
        if (j == target && told_dropped(i)) {
          req.dropped.push_back(h.id(j));
        } else {
          req.survivors.push_back(h.id(j));
        }
        if (!signatures[j].has_value()) continue;
        if (forward == kOnlyMatching && told_dropped(i) != told_dropped(j)) continue;
        req.signatures.push_back(
            {h.id(j), std::get<ConsistencySignature>(*signatures[j]).signature});
      }
      h.inbox(i) = std::move(req);
    }
    Outbox unmasking = h.Act();
    EXPECT_EQ(CountMessages(unmasking), 0u) << "a device released shares";
    EXPECT_TRUE(RevealedOwners(unmasking).empty());
    for (size_t i = 0; i < h.size(); ++i) {
      if (i == target) continue;
      EXPECT_EQ(h.client(i).state(), ClientState::kAborted) << i;
      const absl::StatusCode want = forward == kAllSignatures
                                        ? absl::StatusCode::kPermissionDenied
                                        : absl::StatusCode::kFailedPrecondition;
      EXPECT_EQ(h.client(i).abort_reason().code(), want) << h.client(i).abort_reason();
    }
    (void)target_id;
  }
}

// The server runs an honest consistency check (one U3 for all), then asks
// one device for the s_sk-share of a device in that U3.
TEST(ActiveSecAggTest, UnmaskingRequestThatContradictsTheSignedSetIsRefused) {
  Harness h(ActiveComplete(), 9, /*signing=*/true);
  UpToConsistencyCheck(h);
  h.Phase();
  ASSERT_EQ(h.server().state(), ServerState::kR3Unmasking);
  auto& req = std::get<UnmaskingRequest>(*h.inbox(0));
  const DeviceId moved = req.survivors.back();
  req.survivors.pop_back();
  req.dropped.push_back(moved);
  Outbox out = h.Act();
  EXPECT_FALSE(out[0].has_value());
  EXPECT_EQ(h.client(0).state(), ClientState::kAborted);
  EXPECT_EQ(h.client(0).abort_reason().code(), absl::StatusCode::kPermissionDenied);
}

TEST(ActiveSecAggTest, ForgedOrReplayedConsistencySignaturesAreRefused) {
  for (int edit = 0; edit < 3; ++edit) {
    SCOPED_TRACE(edit);
    Harness h(ActiveComplete(), 10, /*signing=*/true);
    UpToConsistencyCheck(h);
    h.Phase();
    auto& req = std::get<UnmaskingRequest>(*h.inbox(0));
    ASSERT_GE(req.signatures.size(), 4u);
    if (edit == 0) req.signatures[1].signature[5] ^= 1;                  // forged
    if (edit == 1) req.signatures[1] = req.signatures[2];                // one signer twice
    if (edit == 2) req.signatures[1].device = req.signatures[2].device;  // moved to another id
    h.Act();
    EXPECT_EQ(h.client(0).state(), ClientState::kAborted);
    EXPECT_NE(h.client(0).abort_reason().code(), absl::StatusCode::kOk);
  }
}

TEST(ActiveSecAggTest, TooFewSignaturesAreRefused) {
  Harness h(ActiveComplete(), 13, /*signing=*/true);
  UpToConsistencyCheck(h);
  h.Phase();
  auto& req = std::get<UnmaskingRequest>(*h.inbox(0));
  req.signatures.resize(static_cast<size_t>(h.config().threshold) - 2);  // t-1 with its own
  h.Act();
  EXPECT_EQ(h.client(0).state(), ClientState::kAborted);
  EXPECT_EQ(h.client(0).abort_reason().code(), absl::StatusCode::kFailedPrecondition);
}

// Whether the check runs is the device's decision, not the server's.
TEST(ActiveSecAggTest, ServerThatSkipsTheConsistencyCheckGetsNoShares) {
  // A server not configured for it relays no signatures: nobody shares keys.
  Harness plain(ActiveComplete(/*consistency_check=*/false), 14, /*signing=*/true);
  plain.Phase(true);
  EXPECT_EQ(CountMessages(plain.Act()), 0u);
  for (size_t i = 0; i < plain.size(); ++i) {
    EXPECT_EQ(plain.client(i).abort_reason().code(), absl::StatusCode::kUnauthenticated);
  }

  // A server that relays signatures but then goes straight to unmasking.
  Harness h(ActiveComplete(), 14, /*signing=*/true);
  UpToConsistencyCheck(h);
  for (size_t i = 0; i < h.size(); ++i) {
    UnmaskingRequest req;
    req.header = {h.config().aggregation_id, kServerId, h.id(i), Phase::kUnmasking};
    for (size_t j = 0; j < h.size(); ++j) {
      if (j != i) req.survivors.push_back(h.id(j));
    }
    h.inbox(i) = std::move(req);
  }
  EXPECT_EQ(CountMessages(h.Act()), 0u);
  for (size_t i = 0; i < h.size(); ++i) EXPECT_EQ(h.client(i).state(), ClientState::kAborted);
}

TEST(ActiveSecAggTest, ConsistencyRequestWithoutThisDeviceIsRefused) {
  Harness h(ActiveComplete(), 15, /*signing=*/true);
  UpToConsistencyCheck(h);
  auto& req = std::get<ConsistencyCheckRequest>(*h.inbox(2));
  req.survivors.erase(req.survivors.begin() + 2);
  Outbox out = h.Act();
  EXPECT_FALSE(out[2].has_value());
  EXPECT_EQ(h.client(2).state(), ClientState::kAborted);
}

// Collusion in hosts: complete graph, n = 8, t = 5.
std::vector<std::string> Hosts(const std::vector<int>& host_index) {
  std::vector<std::string> out;
  for (int h : host_index) out.push_back(absl::StrCat("h", h));
  return out;
}

TEST(ActiveSecAggTest, HostCollusionRuleAtConfigurationTime) {
  const SessionConfig c = ActiveComplete();  // n = 8 holders, t = 5
  // One host per device: c = 1, 2t = 10 > 8 + 1.
  EXPECT_THAT(CheckHostCollusion(c, Hosts({0, 1, 2, 3, 4, 5, 6, 7})), IsOk());
  // Two hosts of 4: c = 4 < t, but an equivocating server splits the 4
  // honest holders 2/2 and adds the other host's 4 to both: 6 >= t shares
  // of each secret. Refused (2t = 10 <= 8 + 4).
  absl::Status s = CheckHostCollusion(c, Hosts({0, 0, 0, 0, 1, 1, 1, 1}));
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("4 neighbours on host 'h1' of 8 share holders"), std::string::npos)
      << s;
  // 6 devices on one host: device 6 (host 1) has 6 >= t neighbours there;
  // device 0 (host 0) already fails with 2 on host 1 (10 <= 8 + 2).
  s = CheckHostCollusion(c, Hosts({0, 0, 0, 0, 0, 0, 1, 1}));
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("device " + std::to_string(c.roster[0])), std::string::npos) << s;
  EXPECT_NE(s.message().find("2 neighbours on host 'h1'"), std::string::npos) << s;
  EXPECT_EQ(CheckHostCollusion(c, Hosts({0, 1})).code(), absl::StatusCode::kInvalidArgument);
  // Harary (t = 5, 7 holders): with one host per device the rule holds.
  const SessionConfig g = ActiveHarary();
  std::vector<int> one_each(g.roster.size());
  for (size_t i = 0; i < one_each.size(); ++i) one_each[i] = static_cast<int>(i);
  EXPECT_THAT(CheckHostCollusion(g, Hosts(one_each)), IsOk());
  // ...and fails with one big host and one small one (degree 6 > t).
  std::vector<int> lopsided(g.roster.size(), 0);
  lopsided[0] = 1;
  EXPECT_EQ(CheckHostCollusion(g, Hosts(lopsided)).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(HostCollusionBound(5, 8, 1));
  EXPECT_FALSE(HostCollusionBound(5, 8, 2));
  EXPECT_FALSE(HostCollusionBound(5, 20, 5));  // c >= t
}

// The device enforces the same rule on the hosts that CERTIFIED its
// neighbours' keys, whatever the server claims.
TEST(ActiveSecAggTest, DeviceRefusesToShareWhenOneOtherHostCouldCollectThresholdShares) {
  // Two hosts of 4 (c = 4 < t = 5, but 2t <= 8 + 4) and 6 + 2: every device
  // refuses at the key broadcast, before sealing a share.
  for (const std::vector<int>& bad :
       {std::vector<int>{0, 0, 0, 0, 1, 1, 1, 1}, std::vector<int>{0, 0, 0, 0, 0, 0, 1, 1}}) {
    Harness h(ActiveComplete(), 16, /*signing=*/true,
              [&](size_t i) { return absl::StrCat("h", bad[i]); });
    h.Phase(true);
    Outbox out = h.Act();
    for (size_t i = 0; i < h.size(); ++i) {
      EXPECT_FALSE(out[i].has_value()) << i;
      EXPECT_EQ(h.client(i).abort_reason().code(), absl::StatusCode::kFailedPrecondition)
          << h.client(i).abort_reason();
      EXPECT_NE(h.client(i).abort_reason().message().find("host 'h"), std::string::npos)
          << h.client(i).abort_reason();
    }
  }
  // One device per host, but two of them on host "h6": c = 2 for the other
  // six devices (they refuse), c = 1 for the two on h6 (they share).
  const std::vector<int> pair = {0, 1, 2, 3, 4, 5, 6, 6};
  Harness p(ActiveComplete(), 16, /*signing=*/true,
            [&](size_t i) { return absl::StrCat("h", pair[i]); });
  p.Phase(true);
  Outbox out = p.Act();
  for (size_t i = 0; i < p.size(); ++i) EXPECT_EQ(out[i].has_value(), pair[i] == 6) << i;

  const std::vector<int> good = {0, 1, 2, 3, 4, 5, 6, 7};
  Harness g(ActiveComplete(), 16, /*signing=*/true,
            [&](size_t i) { return absl::StrCat("h", good[i]); });
  RunHonest(g);
  ASSERT_EQ(g.server().state(), ServerState::kCompleted) << g.server().abort_reason();
  EXPECT_EQ(g.server().Result()->sum, g.ExpectedSum(g.config().roster));
}

TEST(ActiveSecAggTest, SimulatorWithSigningAndDropoutsSumsExactly) {
  SimulationSpec spec;
  spec.num_devices = 40;
  spec.vector_length = 32;
  spec.signing = true;
  spec.requirements.adversary = AdversaryModel::kSemiMalicious;  // signing devices insist
  spec.seed = 21;
  spec.num_threads = 2;
  const std::vector<DeviceId> roster = SimulationRoster(40);
  spec.dropouts.after_share_keys = {roster[3]};
  spec.dropouts.after_masked_input = {roster[10]};
  spec.dropouts.during_unmasking = {roster[20]};
  absl::StatusOr<SimulationResult> r = Simulate(spec);
  ASSERT_THAT(r, IsOk());
  ASSERT_EQ(r->server_state, ServerState::kCompleted) << r->abort_reason;
  EXPECT_TRUE(r->config.consistency_check);
  EXPECT_EQ(r->sum, r->expected_sum);
  EXPECT_EQ(r->included.size(), 39u);  // all but roster[3], which sent no masked input
  EXPECT_GT(r->consistency_client_seconds, 0.0);
}

TEST(ActiveSecAggTest, SigningDeviceRefusesThresholdsAnEquivocatingServerCouldSplit) {
  // 8 devices, t = 4: the 8 holders of a device split 4/4 into "survived"
  // and "dropped" would give the server t of each share.
  SessionConfig c = MakeConfig(8, GraphKind::kComplete, 0, 4, 4, 6, 20, 17);
  c.consistency_check = true;
  Harness h(c, 17, /*signing=*/true);
  h.Phase(true);
  EXPECT_EQ(CountMessages(h.Act()), 0u);
  for (size_t i = 0; i < h.size(); ++i) {
    EXPECT_EQ(h.client(i).abort_reason().code(), absl::StatusCode::kFailedPrecondition)
        << h.client(i).abort_reason();
  }
}

TEST(ActiveSecAggTest, CredentialCacheChecksEachCredentialOnceAndNeverCachesFailures) {
  int calls = 0;
  KeyCertifier inner = [&calls](
                           DeviceId device, const crypto::Ed25519PublicKey&,
                           std::span<const uint8_t> credential) -> absl::StatusOr<std::string> {
    ++calls;
    if (credential.empty()) return absl::UnauthenticatedError("no credential");
    return absl::StrCat("host-of-", device);
  };
  CredentialCache cache;
  KeyCertifier certify = cache.Wrap(inner);
  const crypto::Ed25519PublicKey key{};
  const std::vector<uint8_t> good = {1, 2}, other = {1, 3}, none;
  EXPECT_EQ(*certify(5, key, good), "host-of-5");
  EXPECT_EQ(*certify(5, key, good), "host-of-5");
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(*certify(6, key, good), "host-of-6");   // another device: checked
  EXPECT_EQ(*certify(5, key, other), "host-of-5");  // another credential: checked
  EXPECT_EQ(calls, 3);
  EXPECT_THAT(certify(5, key, none), StatusIs(absl::StatusCode::kUnauthenticated));
  EXPECT_THAT(certify(5, key, none), StatusIs(absl::StatusCode::kUnauthenticated));
  EXPECT_EQ(calls, 5);
}

TEST(ActiveSecAggTest, StatementsBindEveryField) {
  const std::vector<uint8_t> a(32, 1), b(32, 2), k(32, 3);
  const auto base = AdvertisementStatement(1, 2, a, b, k);
  EXPECT_NE(base, AdvertisementStatement(9, 2, a, b, k));
  EXPECT_NE(base, AdvertisementStatement(1, 9, a, b, k));
  EXPECT_NE(base, AdvertisementStatement(1, 2, b, a, k));
  EXPECT_NE(base, AdvertisementStatement(1, 2, a, b, a));
  const std::vector<DeviceId> u = {1, 2, 3}, v = {1, 2};
  EXPECT_NE(SurvivorSetStatement(1, u), SurvivorSetStatement(1, v));
  EXPECT_NE(SurvivorSetStatement(1, u), SurvivorSetStatement(2, u));
  EXPECT_NE(KeyBindingStatement("j", 1, k), KeyBindingStatement("j", 2, k));
  EXPECT_NE(KeyBindingStatement("j", 1, k), KeyBindingStatement("k", 1, k));
}

}  // namespace
}  // namespace fedmf::secagg
