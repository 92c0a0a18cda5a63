#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/crypto/ed25519.h"
#include "common/crypto/ristretto255.h"
#include "common/psi/in_process.h"
#include "common/psi/party.h"
#include "common/psi/relay.h"
#include "common/psi/signing.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace fedmf::psi {
namespace {

using ::fedmf::testing::IsOk;
using ::fedmf::testing::StatusIs;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::testing::UnorderedElementsAreArray;

// Party p holds users "u<k>" for k in [lo, hi).
std::vector<std::string> Range(int lo, int hi, const std::string& prefix = "u") {
  std::vector<std::string> out;
  for (int k = lo; k < hi; ++k) out.push_back(absl::StrCat(prefix, k));
  return out;
}

std::vector<std::string> Intersect(std::vector<std::vector<std::string>> sets) {
  for (auto& s : sets) std::sort(s.begin(), s.end());
  std::vector<std::string> common = sets[0];
  for (const auto& s : sets) {
    std::vector<std::string> next;
    std::set_intersection(common.begin(), common.end(), s.begin(), s.end(),
                          std::back_inserter(next));
    common = next;
  }
  return common;
}

TEST(PsiInProcessTest, TwoPartiesGetTheIntersectionInOneOrder) {
  const std::vector<std::vector<std::string>> ids = {Range(0, 300), Range(200, 450)};
  random::Csprng rng = random::Csprng::FromSeed(1);
  ASSERT_OK_AND_ASSIGN(auto run, RunPsiInProcess(ids, "job-1", rng));
  ASSERT_EQ(run.shared_ids.size(), 2u);
  EXPECT_THAT(run.shared_ids[0], UnorderedElementsAreArray(Range(200, 300)));
  // The canonical order is the same at both parties, and it is not the ids'
  // own order (it follows the tags, which reveal nothing about the ids).
  EXPECT_THAT(run.shared_ids[1], ElementsAreArray(run.shared_ids[0]));
  std::vector<std::string> sorted = run.shared_ids[0];
  std::sort(sorted.begin(), sorted.end());
  EXPECT_NE(run.shared_ids[0], sorted);
  EXPECT_EQ(run.intersection_size, 100);
  // Bytes: each party sends its list (32 B per id), one hop of the other's
  // list, its tags and a confirmation; receives the two lists, the
  // intersection and both confirmations.
  EXPECT_EQ(run.parties[0].bytes_sent, (300 * 32 + 76) + (250 * 32 + 76) + (300 * 32 + 4) + 68);
  EXPECT_EQ(run.parties[0].bytes_received, (250 * 32 + 76) + (300 * 32 + 76) + 100 * 32 + 2 * 68);
  EXPECT_EQ(run.relay_bytes_in, run.parties[0].bytes_sent + run.parties[1].bytes_sent);
}

TEST(PsiInProcessTest, ThreePartiesWithStringIdsAndPartialOverlap) {
  // 70-90 % overlap, ids that are not numbers, unequal sizes.
  std::vector<std::vector<std::string>> ids = {Range(0, 1000, "alice@"), Range(100, 1000, "alice@"),
                                               Range(50, 950, "alice@")};
  ids[2].push_back("bob@only-in-2");
  random::Csprng rng = random::Csprng::FromSeed(5);
  ASSERT_OK_AND_ASSIGN(auto run, RunPsiInProcess(ids, "job-3", rng, /*threads=*/2));
  const std::vector<std::string> expected = Intersect(ids);
  ASSERT_EQ(expected.size(), 850u);
  for (int p = 0; p < 3; ++p) {
    EXPECT_THAT(run.shared_ids[p], UnorderedElementsAreArray(expected)) << "party " << p;
    EXPECT_THAT(run.shared_ids[p], ElementsAreArray(run.shared_ids[0])) << "party " << p;
  }
}

TEST(PsiInProcessTest, ThreadsDoNotChangeTheResult) {
  const std::vector<std::vector<std::string>> ids = {Range(0, 2000), Range(500, 2500)};
  random::Csprng r1 = random::Csprng::FromSeed(9);
  random::Csprng r2 = random::Csprng::FromSeed(9);
  auto one = RunPsiInProcess(ids, "j", r1, 1);
  auto two = RunPsiInProcess(ids, "j", r2, 2);
  ASSERT_THAT(one.status(), IsOk());
  ASSERT_THAT(two.status(), IsOk());
  EXPECT_EQ(one->shared_ids, two->shared_ids);
}

TEST(PsiInProcessTest, DisjointSetsGiveAnEmptyIntersection) {
  random::Csprng rng = random::Csprng::FromSeed(2);
  ASSERT_OK_AND_ASSIGN(auto run, RunPsiInProcess({Range(0, 10), Range(10, 20)}, "j", rng));
  EXPECT_TRUE(run.shared_ids[0].empty());
  EXPECT_EQ(run.intersection_size, 0);
}

TEST(PsiPartyTest, RejectsBadInput) {
  crypto::Ed25519PrivateKey key = *crypto::Ed25519PrivateKey::FromSeed(std::vector<uint8_t>(32, 1));
  Ed25519Signer signer(&key);
  Ed25519Verifier verifier({key.public_key(), key.public_key()});
  random::Csprng rng = random::Csprng::FromSeed(1);
  PartyOptions o{.session = "s", .index = 0, .num_parties = 2};
  EXPECT_THAT(PsiParty::Create({"a", "b", "a"}, o, rng, &signer, &verifier).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("'a' appears twice")));
  EXPECT_THAT(PsiParty::Create({}, o, rng, &signer, &verifier).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("no ids")));
  PartyOptions one = o;
  one.num_parties = 1;
  EXPECT_THAT(PsiParty::Create({"a"}, one, rng, &signer, &verifier).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("at least 2")));
}

// A partner that brings far more ids than the party (a list of made-up
// candidates to learn which are the party's users) is refused when its list
// arrives, before the party's key touches it; within the ratio it is hopped.
TEST(PsiPartyTest, APartnerListBeyondTheRatioIsRefusedBeforeTheKeyIsApplied) {
  std::vector<crypto::Ed25519PrivateKey> keys;
  for (int p = 0; p < 2; ++p) {
    keys.push_back(*crypto::Ed25519PrivateKey::FromSeed(std::vector<uint8_t>(32, p + 1)));
  }
  Ed25519Verifier verifier({keys[0].public_key(), keys[1].public_key()});
  Ed25519Signer signer0(&keys[0]), signer1(&keys[1]);
  random::Csprng rng = random::Csprng::FromSeed(5);
  for (const int partner_ids : {40, 41}) {
    SCOPED_TRACE(partner_ids);
    PartyOptions o0{.session = "s", .index = 0, .num_parties = 2};
    o0.max_list_ratio = 4;
    PartyOptions o1{.session = "s", .index = 1, .num_parties = 2};
    auto victim = PsiParty::Create(Range(0, 10), o0, rng, &signer0, &verifier);
    auto prober = PsiParty::Create(Range(0, partner_ids), o1, rng, &signer1, &verifier);
    ASSERT_THAT(victim.status(), IsOk());
    ASSERT_THAT(prober.status(), IsOk());
    ASSERT_THAT((*victim)->Start().status(), IsOk());
    ASSERT_OK_AND_ASSIGN(auto list, (*prober)->Start());
    auto hopped = (*victim)->Receive(list);
    if (partner_ids <= 40) {
      EXPECT_THAT(hopped.status(), IsOk());  // 40 = 4 x 10: within the bound
    } else {
      EXPECT_THAT(hopped.status(), StatusIs(absl::StatusCode::kResourceExhausted,
                                            HasSubstr("41 ids, more than 4 x this party's 10")));
    }
    EXPECT_EQ((*victim)->other_set_sizes().at(1), partner_ids);
  }
}

// A relay that deviates: the fixture runs two honest parties step by step so
// each test can tamper with one message.
class HostileRelayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int p = 0; p < 2; ++p) {
      std::vector<uint8_t> seed(32, static_cast<uint8_t>(p + 1));
      keys_.push_back(*crypto::Ed25519PrivateKey::FromSeed(seed));
    }
    verifier_ = std::make_unique<Ed25519Verifier>(
        std::vector<crypto::Ed25519PublicKey>{keys_[0].public_key(), keys_[1].public_key()});
    random::Csprng rng = random::Csprng::FromSeed(11);
    for (int p = 0; p < 2; ++p) {
      signers_.push_back(std::make_unique<Ed25519Signer>(&keys_[p]));
      PartyOptions o{.session = "job-7", .index = p, .num_parties = 2};
      auto party = PsiParty::Create(p == 0 ? Range(0, 50) : Range(25, 80), o, rng,
                                    signers_[p].get(), verifier_.get());
      ASSERT_THAT(party.status(), IsOk());
      parties_.push_back(std::move(*party));
    }
    for (int p = 0; p < 2; ++p) {
      ASSERT_OK_AND_ASSIGN(auto s, parties_[p]->Start());
      starts_.push_back(s);
    }
  }

  // Runs the honest rest of the protocol up to the final tags.
  void HopAndFinish() {
    for (int p = 0; p < 2; ++p) {
      auto hopped = parties_[1 - p]->Receive(starts_[p]);
      ASSERT_THAT(hopped.status(), IsOk());
      ASSERT_TRUE(hopped->has_value());
      ASSERT_OK_AND_ASSIGN(auto home, parties_[p]->Receive(**hopped));
      ASSERT_FALSE(home.has_value());
    }
  }

  std::vector<crypto::Ed25519PrivateKey> keys_;
  std::unique_ptr<Ed25519Verifier> verifier_;
  std::vector<std::unique_ptr<Ed25519Signer>> signers_;
  std::vector<std::unique_ptr<PsiParty>> parties_;
  std::vector<BlindedList> starts_;
};

TEST_F(HostileRelayTest, AListTheRelayMadeUpIsRefused) {
  // The dictionary attack: H(guess) for guessed ids, passed off as party 0's
  // start, would come back as H(guess)^k1 and, routed on, as a tag to compare.
  BlindedList probe;
  probe.origin = 0;
  probe.step = 0;
  probe.signer = 0;
  for (const std::string& guess : Range(0, 10)) {
    probe.points.push_back(*crypto::HashToRistretto("fedmf-psi-v1 id", guess));
  }
  probe.signature = starts_[0].signature;  // a real signature of party 0, over other bytes
  EXPECT_THAT(parties_[1]->Receive(probe).status(),
              StatusIs(absl::StatusCode::kUnauthenticated, HasSubstr("not signed by party 0")));
  // Party 1 still hops the real list afterwards: the refusal consumed nothing.
  EXPECT_THAT(parties_[1]->Receive(starts_[0]).status(), IsOk());
}

TEST_F(HostileRelayTest, ReplayedMisroutedAndForeignSessionListsAreRefused) {
  ASSERT_THAT(parties_[1]->Receive(starts_[0]).status(), IsOk());
  EXPECT_THAT(parties_[1]->Receive(starts_[0]).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("second list from origin 0")));
  // Party 1's own start sent back to itself as if it had made the round.
  EXPECT_THAT(parties_[1]->Receive(starts_[1]).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not routed to party 1")));
  // A genuine list of party 0 from another session (job).
  crypto::Ed25519PrivateKey& key0 = keys_[0];
  BlindedList other = starts_[0];
  other.signature = *key0.Sign(SignedBytes("job-8", other));
  EXPECT_THAT(parties_[1]->Receive(other).status(), StatusIs(absl::StatusCode::kUnauthenticated));
}

TEST_F(HostileRelayTest, AForeignTagInTheIntersectionIsRefused) {
  HopAndFinish();
  ASSERT_OK_AND_ASSIGN(auto tags0, parties_[0]->Final());
  Intersection bad{{tags0.tags[0], tags0.tags[1]}};
  std::sort(bad.tags.begin(), bad.tags.end());
  // Party 1 does not hold every tag of party 0 (they share 25 of 50 ids),
  // so some 2-subset of party 0's tags is foreign to it.
  bool refused = false;
  for (size_t i = 0; i + 1 < tags0.tags.size() && !refused; ++i) {
    Intersection probe{{tags0.tags[i], tags0.tags[i + 1]}};
    auto c = parties_[1]->Accept(probe);
    if (!c.ok()) {
      EXPECT_THAT(c.status(),
                  StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("does not have")));
      refused = true;
    }
  }
  EXPECT_TRUE(refused);
}

TEST_F(HostileRelayTest, DifferentIntersectionsToDifferentPartiesFailTheConfirmation) {
  HopAndFinish();
  auto t0 = parties_[0]->Final();
  auto t1 = parties_[1]->Final();
  ASSERT_THAT(t0.status(), IsOk());
  ASSERT_THAT(t1.status(), IsOk());
  auto relay = PsiRelay::Create(2, 1000);
  ASSERT_THAT(relay.status(), IsOk());
  ASSERT_THAT(relay->SubmitTags(0, *t0), IsOk());
  ASSERT_THAT(relay->SubmitTags(1, *t1), IsOk());
  const Intersection honest = *relay->intersection();
  ASSERT_EQ(honest.tags.size(), 25u);
  Intersection dropped = honest;
  dropped.tags.erase(dropped.tags.begin());  // party 1 is told one user fewer
  auto c0 = parties_[0]->Accept(honest);
  auto c1 = parties_[1]->Accept(dropped);
  ASSERT_THAT(c0.status(), IsOk());
  ASSERT_THAT(c1.status(), IsOk());
  EXPECT_THAT(parties_[0]->Confirm({*c0, *c1}),
              StatusIs(absl::StatusCode::kUnauthenticated, HasSubstr("different intersections")));
  EXPECT_THAT(parties_[1]->Confirm({*c0, *c1}),
              StatusIs(absl::StatusCode::kUnauthenticated, HasSubstr("different intersections")));
  EXPECT_THAT(parties_[0]->SharedIds().status(), StatusIs(absl::StatusCode::kFailedPrecondition));
  // A missing confirmation is not a pass either.
  EXPECT_THAT(parties_[0]->Confirm({*c0}), StatusIs(absl::StatusCode::kFailedPrecondition,
                                                    HasSubstr("no confirmation from party 1")));
}

TEST_F(HostileRelayTest, NeitherRelayNorHopperSeesAnUnblindedHash) {
  // What party 1 and the relay see of party 0's ids: the start list and its
  // hop. Neither holds H(x) or a tag of any id of party 0.
  HopAndFinish();
  std::set<Point> hashes;
  for (const std::string& id : Range(0, 50)) {
    hashes.insert(*crypto::HashToRistretto("fedmf-psi-v1 id", id));
  }
  auto hop = parties_[1]->Receive(starts_[0]);  // refused (second copy), so redo by hand:
  EXPECT_THAT(hop, StatusIs(absl::StatusCode::kInvalidArgument));
  auto tags0 = parties_[0]->Final();
  std::set<Point> tags(tags0->tags.begin(), tags0->tags.end());
  for (const Point& p : starts_[0].points) {
    EXPECT_FALSE(hashes.contains(p));
    EXPECT_FALSE(tags.contains(p));
  }
}

TEST(PsiRelayTest, RoutesOnlyWhatTheSenderCanSend) {
  ASSERT_OK_AND_ASSIGN(auto relay, PsiRelay::Create(3, 100));
  BlindedList l;
  l.origin = 0;
  l.step = 1;
  l.signer = 1;
  l.points.resize(3);
  EXPECT_THAT(relay.SubmitList(1, l), IsOk());
  EXPECT_EQ(relay.TakeLists(2).size(), 1u);
  EXPECT_TRUE(relay.TakeLists(2).empty());
  // Party 2 cannot send a list at a ring place that belongs to party 1.
  EXPECT_THAT(relay.SubmitList(2, l),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not one it can send")));
  l.step = 0;
  l.signer = 0;
  l.points.resize(101);
  EXPECT_THAT(relay.SubmitList(0, l),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("1..100")));
  EXPECT_THAT(PsiRelay::Create(1, 10).status(), StatusIs(absl::StatusCode::kInvalidArgument));
}

// Issue 55: a roster party could queue lists without end (1.28 GB in 4 s).
TEST(PsiRelayTest, OneListPerSenderAndOriginWithinTheByteBound) {
  ASSERT_OK_AND_ASSIGN(auto relay, PsiRelay::Create(2, 1000, /*max_queued_bytes=*/100 * 32));
  BlindedList own;
  own.origin = 1;
  own.step = 0;
  own.signer = 1;
  own.points.resize(60);
  own.signature = {1, 2, 3};
  EXPECT_THAT(relay.SubmitList(1, own), IsOk());
  EXPECT_THAT(relay.SubmitList(1, own), IsOk());  // a resend: not queued twice
  EXPECT_EQ(relay.queued_bytes(), 60 * 32);
  BlindedList other = own;
  other.signature = {9};
  EXPECT_THAT(relay.SubmitList(1, other),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("already sent")));
  BlindedList hop = own;  // party 0's list, hopped by party 1 and going home
  hop.origin = 0;
  hop.step = 1;
  hop.points.resize(50);
  EXPECT_THAT(relay.SubmitList(1, hop),
              StatusIs(absl::StatusCode::kResourceExhausted, HasSubstr("3200")));
  EXPECT_EQ(relay.queued_bytes(), 60 * 32);
  // Fetched in answers of a bounded size: one list at a time here.
  auto first = relay.TakeLists(0, 32);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_FALSE(relay.HasLists(0));
  EXPECT_EQ(relay.queued_bytes(), 0);
  EXPECT_THAT(relay.SubmitList(1, hop), IsOk());  // room again
  EXPECT_TRUE(relay.HasLists(0));
  auto second = relay.TakeLists(0, 1);  // larger than the bound: alone
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].origin, 0);
}

}  // namespace
}  // namespace fedmf::psi
