#include "common/fmf/party_session.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "common/data/partition.h"
#include "common/data/synthetic.h"
#include "common/dp/snapping.h"
#include "common/fmf/server_session.h"
#include "common/mf/clipping.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

using ::fedmf::testing::IsOk;

namespace fedmf::fmf {
namespace {

data::Federation SmallHfl(int parties) {
  data::SyntheticOptions o;
  o.num_users = 60;
  o.num_items = 40;
  o.density = 0.2;
  auto d = data::GenerateSynthetic(o);
  EXPECT_THAT(d, IsOk());
  auto f = data::PartitionHfl(*d, parties, {0.1, 3});
  EXPECT_THAT(f, IsOk());
  return *f;
}

JobConfig HflJob(double epsilon) {
  JobConfig c;
  c.setting = Setting::kHfl;
  c.split = SplitKind::kHorizontal;
  c.rounds = 4;
  c.local_iters = 3;
  c.dim = 4;
  c.sample_rate = 0.2;
  c.epsilon = epsilon;
  c.pretrain_epochs = 2;
  c.finetune_epochs = 2;
  c.seed = 9;
  c.algorithm = Algorithm::kPaper;  // these tests pin the paper's mechanism
  return c;
}

// The job admitted against the party's own range with a local seed.
AdmittedJob Admitted(const JobConfig& config, const data::PartyData& party, uint64_t seed = 5) {
  auto a = AdmittedJob::Admit(config, {party.range, seed, "party-0"}, nullptr);
  EXPECT_THAT(a, IsOk());
  return std::move(*a);
}

struct Fixture {
  data::Federation fed = SmallHfl(2);
  JobConfig config = HflJob(2.0);
  NoisePlan plan = *PlanNoise(config);
  dp::PrivacyLedger ledger{2.0 * (1 + 1e-9), 1e-5};
  std::unique_ptr<PartySession> party;
  mf::Matrix shared;

  Fixture() {
    party = *PartySession::Create(Admitted(config, fed.parties[0]), fed.parties[0], fed.num_users,
                                  fed.num_items, &ledger);
    random::Csprng rng = random::Csprng::FromSeed(6);
    shared = InitialSharedMatrix(config, fed.num_items, rng);
  }
};

TEST(PartySessionTest, PhasesAreEnforced) {
  Fixture f;
  EXPECT_EQ(f.party->RunRound(0, f.shared).status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(f.party->Finish(f.shared).code(), absl::StatusCode::kFailedPrecondition);
  ASSERT_THAT(f.party->Pretrain(f.shared), IsOk());
  EXPECT_EQ(f.party->Pretrain(f.shared).code(), absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(f.party->RunRound(1, f.shared).ok());  // a missed round is skipped
  EXPECT_EQ(f.party->RunRound(1, f.shared).status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(f.party->RunRound(0, f.shared).status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(f.party->TrainAlone().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(PartySessionTest, RejectsMalformedSharedMatrix) {
  Fixture f;
  EXPECT_EQ(f.party->Pretrain(mf::Matrix::Zero(3, 4)).code(), absl::StatusCode::kInvalidArgument);
  ASSERT_THAT(f.party->Pretrain(f.shared), IsOk());
  mf::Matrix bad = f.shared;
  bad(0, 0) = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(f.party->RunRound(0, bad).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(f.party->next_round(), 0);
  // Only the size release (charged at Create), no round.
  ASSERT_EQ(f.ledger.entries().size(), 1u);
  EXPECT_EQ(f.ledger.entries()[0].round, CountReleaseRound(f.config));
}

TEST(PartySessionTest, EachRoundChargesTPrimeStepsBeforeRelease) {
  Fixture f;
  ASSERT_THAT(f.party->Pretrain(f.shared), IsOk());
  mf::Matrix current = f.shared;
  for (int t = 0; t < f.config.rounds; ++t) {
    ASSERT_OK_AND_ASSIGN(auto up, f.party->RunRound(t, current));
    ASSERT_EQ(f.ledger.entries().size(), static_cast<size_t>(t + 2));  // + the size release
    EXPECT_EQ(f.ledger.entries().back().round, t);
    EXPECT_EQ(f.ledger.entries().back().steps, f.config.local_iters);
    // Released matrices satisfy the clipping invariant.
    EXPECT_GE(up.minCoeff(), 0.0);
    EXPECT_LE(up.rowwise().squaredNorm().maxCoeff(), 5.0 + 1e-9);
    current = up;
  }
  ASSERT_OK_AND_ASSIGN(auto spent, f.ledger.SpentEpsilon());
  EXPECT_NEAR(spent, f.plan.epsilon, 1e-6);
  EXPECT_LE(spent, 2.0);
  ASSERT_THAT(f.party->Finish(current), IsOk());
  EXPECT_EQ(f.party->phase(), PartySession::Phase::kFinished);
}

TEST(PartySessionTest, OverBudgetRoundIsRefusedAndNothingChanges) {
  Fixture f;
  // Enough for the size release, far below what one round costs.
  dp::PrivacyLedger probe(100, 1e-5);
  auto count_eps =
      probe.EpsilonWith(dp::LedgerEntry{"job", 9, 1.0, f.plan.count_noise_multiplier, 1});
  ASSERT_THAT(count_eps, IsOk());
  dp::PrivacyLedger tiny(*count_eps * (1 + 1e-6), 1e-5);
  auto party = *PartySession::Create(Admitted(f.config, f.fed.parties[0]), f.fed.parties[0],
                                     f.fed.num_users, f.fed.num_items, &tiny);
  ASSERT_THAT(party->Pretrain(f.shared), IsOk());
  mf::Matrix before_v = party->item_embeddings();
  auto up = party->RunRound(0, f.shared);
  EXPECT_EQ(up.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(tiny.entries().size(), 1u);  // the size release only
  EXPECT_EQ(party->next_round(), 0);
  EXPECT_EQ(party->item_embeddings(), before_v);
}

// Issue #14 finding 5: the only data-dependent size that leaves the party
// (the HFL weight) or shapes a release (the step normaliser) is the DP size
// release, charged before it exists and made once per job.
TEST(PartySessionTest, SizeReleaseIsChargedFirstAndMadeOnce) {
  Fixture f;
  // Over budget: no session, nothing charged.
  dp::PrivacyLedger tiny(0.05, 1e-5);
  auto refused = PartySession::Create(Admitted(f.config, f.fed.parties[0]), f.fed.parties[0],
                                      f.fed.num_users, f.fed.num_items, &tiny);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(tiny.entries().empty());
  // The fixture's release: charged under its key, at least 1, on its
  // binade's snapping grid, and it (not nnz) sets the normaliser and the HFL
  // weight.
  const dp::LedgerEntry& e = f.ledger.entries().at(0);
  EXPECT_EQ(e.round, CountReleaseRound(f.config));
  EXPECT_EQ(e.sample_rate, 1.0);
  EXPECT_EQ(e.noise_multiplier, f.plan.count_noise_multiplier);
  ASSERT_TRUE(f.party->released_count().has_value());
  const double c = *f.party->released_count();
  EXPECT_NE(c, static_cast<double>(f.party->PreNoiseCount()));
  EXPECT_GE(c, 1);
  EXPECT_EQ(c, dp::SnapInBinadeTowardZero(c, f.plan.count_sigma));
  EXPECT_DOUBLE_EQ(f.party->StepNormalizer(), std::max(1.0, f.config.sample_rate * c));
  EXPECT_DOUBLE_EQ(f.party->Stage2Spec().normalizer, f.party->StepNormalizer());
  EXPECT_DOUBLE_EQ(f.party->weight(), std::max(1.0, std::round(c / f.plan.theta)));
  // A rejoin reuses the stored release: no second draw, no second charge.
  auto again = PartySession::Create(Admitted(f.config, f.fed.parties[0], 99), f.fed.parties[0],
                                    f.fed.num_users, f.fed.num_items, &f.ledger, c);
  ASSERT_THAT(again, IsOk());
  EXPECT_EQ(*(*again)->released_count(), c);
  EXPECT_EQ(f.ledger.entries().size(), 1u);
  // ... but only if the ledger holds its charge.
  dp::PrivacyLedger fresh(2.0, 1e-5);
  auto uncharged = PartySession::Create(Admitted(f.config, f.fed.parties[0]), f.fed.parties[0],
                                        f.fed.num_users, f.fed.num_items, &fresh, c);
  EXPECT_EQ(uncharged.status().code(), absl::StatusCode::kFailedPrecondition);
  // Non-private: exact sizes, nothing released.
  JobConfig open = f.config;
  open.epsilon = std::numeric_limits<double>::infinity();
  auto plain = PartySession::Create(Admitted(open, f.fed.parties[0]), f.fed.parties[0],
                                    f.fed.num_users, f.fed.num_items, nullptr);
  ASSERT_THAT(plain, IsOk());
  EXPECT_FALSE((*plain)->released_count().has_value());
  EXPECT_EQ((*plain)->weight(), f.fed.parties[0].num_users());
}

// Issue #54, item 2: the size release was clamped into [1, theta * n_k]
// (n_k with per-user clipping), the party's own size. When every user has
// theta ratings the count IS that bound, so every release with non-negative
// noise was the exact count (and the weight exactly n_k). Clamped only to
// public constants, the release equals the count no more often than the
// Gaussian puts mass on one snapping cell, and the weight is n_k only as often
// as the noise rounds to it. 1,000 releases of the mechanism, then whole
// parties (Create draws it; each admission plans the noise, so fewer).
TEST(PartySessionTest, SizeReleaseIsTheExactCountNoMoreOftenThanTheNoiseAllows) {
  // 40 users rating 6 items each, so trimming (theta 3) keeps exactly 3 each.
  data::PartyData party;
  party.party = 0;
  party.range = {1, 5};
  constexpr int32_t kUsers = 40, kItems = 12;
  for (int32_t u = 0; u < kUsers; ++u) party.global_users.push_back(u);
  for (int32_t j = 0; j < kItems; ++j) party.global_items.push_back(j);
  for (int32_t u = 0; u < kUsers; ++u) {
    for (int32_t k = 0; k < 6; ++k) {
      party.train.push_back({u, (u + k) % kItems, static_cast<float>(1 + (u + k) % 5)});
    }
  }
  for (double clip : {0.0, 3.0}) {  // trimmed (count = theta n_k), clipped (count = n_k)
    JobConfig config = HflJob(2.0);
    config.theta = 3;
    config.clip_norm = clip;
    config.algorithm = clip > 0 ? Algorithm::kAlternate : Algorithm::kPaper;
    config.validation_fraction = 0;  // every rating in the count
    const NoisePlan plan = *PlanNoise(config);
    const double unit = clip > 0 ? 1.0 : config.theta;  // count per user
    const double count = unit * kUsers;                 // = the old clamp's bound
    // One snapping cell [c, c + Lambda) carries at most Lambda / (sigma
    // sqrt(2 pi)) of the noise (~1e-6 here): 0 expected in 1,000 (the old
    // clamp gave ~500). The weight rounds c~ / unit: it is n_k when |noise|
    // < unit / 2.
    const double cell = dp::SnapGranularity(plan.count_sigma, count);
    EXPECT_LT(cell / (plan.count_sigma * std::sqrt(2 * M_PI)), 1e-3);
    const double p_round = std::erf(0.5 * unit / (plan.count_sigma * std::sqrt(2.0)));
    auto allowed = [](double expected) { return expected + 5 * std::sqrt(expected) + 1; };
    random::Csprng rng = random::Csprng::FromSeed(17);
    constexpr int kDraws = 1000;
    int exact_count = 0, exact_weight = 0;
    for (int k = 0; k < kDraws; ++k) {
      const double c = DrawSizeRelease(count, plan.count_sigma, rng);
      ASSERT_GE(c, 1.0);
      exact_count += c == count ? 1 : 0;
      exact_weight += std::round(c / unit) == kUsers ? 1 : 0;
    }
    EXPECT_LE(exact_count, 2) << "clip " << clip << ": the release was the exact count "
                              << exact_count << " times in " << kDraws;
    EXPECT_LE(exact_weight, allowed(p_round * kDraws))
        << "clip " << clip << ": the weight was n_k " << exact_weight << " times in " << kDraws;
    // Through the party: Create draws the release, weight() declares it.
    constexpr int kParties = 60;
    int party_exact = 0, party_weight = 0;
    for (int k = 0; k < kParties; ++k) {
      dp::PrivacyLedger ledger(10, 1e-5);
      auto s =
          PartySession::Create(Admitted(config, party, 1000 + k), party, kUsers, kItems, &ledger);
      ASSERT_THAT(s, IsOk());
      ASSERT_EQ(static_cast<double>((*s)->PreNoiseCount()), count);
      party_exact += *(*s)->released_count() == count ? 1 : 0;
      party_weight += (*s)->weight() == kUsers ? 1 : 0;
      EXPECT_EQ((*s)->weight(), std::max(1.0, std::round(*(*s)->released_count() / unit)));
    }
    EXPECT_LE(party_exact, 1) << "clip " << clip;
    EXPECT_LE(party_weight, allowed(p_round * kParties)) << "clip " << clip;
  }
}

TEST(PartySessionTest, DeterministicUnderSeed) {
  Fixture a, b;
  ASSERT_THAT(a.party->Pretrain(a.shared), IsOk());
  ASSERT_THAT(b.party->Pretrain(b.shared), IsOk());
  EXPECT_EQ(*a.party->RunRound(0, a.shared), *b.party->RunRound(0, b.shared));
}

// Alternate Stage 3: the held-out ratings choose the number of fine-tuning
// epochs, then the final model is refit on them too. The validation error
// reported is the one measured at selection (an honest estimate), not the
// error of the final model on ratings it has now trained on.
TEST(PartySessionTest, AlternateStage3RefitsOnTheHeldOutRatingsAndReportsTheSelectionError) {
  data::Federation fed = SmallHfl(2);
  JobConfig config = HflJob(std::numeric_limits<double>::infinity());
  config.algorithm = Algorithm::kAlternate;
  config.validation_fraction = 0.2;
  config.max_finetune_epochs = 30;
  // V barely leaves its random start, so fine-tuning must beat it.
  config.learning_rate = 1e-9;
  dp::PrivacyLedger ledger{1, 1e-5};
  const data::PartyData original = fed.parties[0];
  auto party = PartySession::Create(Admitted(config, original), original, fed.num_users,
                                    fed.num_items, &ledger);
  ASSERT_THAT(party, IsOk());
  PartySession& p = **party;
  // The held-out ratings: the party's training ratings the session left out.
  std::vector<data::Rating> held_out;
  for (const data::Rating& r : original.train) {
    const bool kept =
        std::any_of(p.data().train.begin(), p.data().train.end(),
                    [&](const data::Rating& t) { return t.user == r.user && t.item == r.item; });
    if (!kept) held_out.push_back(r);
  }
  ASSERT_GT(held_out.size(), 10u);
  random::Csprng rng = random::Csprng::FromSeed(6);
  const mf::Matrix shared = InitialSharedMatrix(config, fed.num_items, rng);
  ASSERT_THAT(p.Pretrain(shared), IsOk());
  mf::Matrix v = shared;
  for (int32_t t = 0; t < config.rounds; ++t) {
    ASSERT_OK_AND_ASSIGN(auto up, p.RunRound(t, v));
    v = up;
  }
  ASSERT_THAT(p.Finish(v), IsOk());
  const mf::ErrorMetrics reported = p.EvaluateValidation();
  const mf::ErrorMetrics now =
      mf::Evaluate(held_out, p.user_embeddings(), p.item_embeddings(), p.data().range);
  EXPECT_EQ(reported.count, static_cast<int64_t>(held_out.size()));
  // Fine-tuning was chosen (non-private, a random start) and the final fit
  // trained on the held-out ratings: they are now fitted better than at
  // selection.
  EXPECT_LT(now.mse, reported.mse);
}

// Stage 3's duration must not tell how many epochs the validation chose
// (issue #54, 6f): with pad_stage3 (the daemons') the search and the refit
// each run max_finetune_epochs epochs whatever was chosen, and the model is
// the one the unpadded session ends with, to the bit.
TEST(PartySessionTest, PaddedStage3RunsTheSameEpochsWhateverTheValidationChose) {
  data::Federation fed = SmallHfl(2);
  JobConfig config = HflJob(std::numeric_limits<double>::infinity());
  config.algorithm = Algorithm::kAlternate;
  config.validation_fraction = 0.2;
  config.max_finetune_epochs = 12;
  struct Run {
    int64_t epochs = 0;
    mf::Matrix u, v;
  };
  auto run = [&](double learning_rate, bool pad) {
    JobConfig c = config;
    c.learning_rate = learning_rate;
    dp::PrivacyLedger ledger{1, 1e-5};
    LocalTerms local{fed.parties[0].range, 5, "party-0"};
    local.pad_stage3 = pad;
    auto admitted = AdmittedJob::Admit(c, local, nullptr);
    EXPECT_THAT(admitted, IsOk());
    auto party = PartySession::Create(std::move(*admitted), fed.parties[0], fed.num_users,
                                      fed.num_items, &ledger);
    EXPECT_THAT(party, IsOk());
    random::Csprng rng = random::Csprng::FromSeed(6);
    const mf::Matrix shared = InitialSharedMatrix(c, fed.num_items, rng);
    EXPECT_THAT((*party)->Pretrain(shared), IsOk());
    mf::Matrix v = shared;
    for (int32_t t = 0; t < c.rounds; ++t) v = *(*party)->RunRound(t, v);
    EXPECT_THAT((*party)->Finish(v), IsOk());
    return Run{(*party)->local_epochs_run(), (*party)->user_embeddings(),
               (*party)->item_embeddings()};
  };
  // A V that barely moved (fine-tuning pays: many epochs chosen) and one the
  // rounds fitted (fewer): the unpadded runs differ in their epochs...
  const Run slow = run(1e-9, false), fast = run(0.5, false);
  ASSERT_NE(slow.epochs, fast.epochs) << "the two validations chose alike: not a test";
  // ...the padded ones run 2 x 12 each, and keep the unpadded model.
  for (const double lr : {1e-9, 0.5}) {
    const Run padded = run(lr, true);
    EXPECT_EQ(padded.epochs, 2 * config.max_finetune_epochs) << lr;
    const Run& plain = lr < 1e-3 ? slow : fast;
    EXPECT_EQ(padded.u, plain.u) << lr;
    EXPECT_EQ(padded.v, plain.v) << lr;
  }
}

TEST(PartySessionTest, RecommendsUnratedItemsOfItsOwnUsers) {
  Fixture f;
  ASSERT_THAT(f.party->Pretrain(f.shared), IsOk());
  const int32_t user = f.fed.parties[0].global_users[0];
  ASSERT_OK_AND_ASSIGN(auto recs, f.party->Recommend(user, 5));
  ASSERT_EQ(recs.size(), 5u);
  for (size_t i = 1; i < recs.size(); ++i) EXPECT_GE((recs)[i - 1].second, (recs)[i].second);
  for (const auto& r : f.fed.parties[0].train) {
    if (r.user != 0) continue;
    for (const auto& [item, score] : recs) EXPECT_NE(item, f.fed.parties[0].global_items[r.item]);
  }
  const int32_t other = f.fed.parties[1].global_users[0];
  EXPECT_EQ(f.party->Recommend(other, 5).status().code(), absl::StatusCode::kNotFound);
}

// A hostile server sends a shared matrix with one row of 1e6. The party
// projects it onto its own clipping set before any gradient: what it releases
// is bit-for-bit what it releases for the projected matrix (same seed), and
// the step it takes from it is within lr * Delta (Delta = 2 R^{3/2}, one
// rating's gradient norm at clipped embeddings), not ~1e6.
TEST(PartySessionTest, HostileRowIsReclippedBeforeAnyGradient) {
  Fixture honest, hostile;
  ASSERT_THAT(honest.party->Pretrain(honest.shared), IsOk());
  ASSERT_THAT(hostile.party->Pretrain(hostile.shared), IsOk());
  mf::Matrix attack = hostile.shared;
  attack.row(3).setConstant(1e6);
  mf::Matrix projected = attack;
  mf::ClipEmbeddings(projected, hostile.config.rating_max);
  auto released_attack = hostile.party->RunRound(0, attack);
  auto released_projected = honest.party->RunRound(0, projected);
  ASSERT_THAT(released_attack, IsOk());
  ASSERT_THAT(released_projected, IsOk());
  EXPECT_EQ(*released_attack, *released_projected);
  // Finish takes the server's final matrix the same way.
  mf::Matrix final_attack = *released_attack;
  final_attack.row(0).setConstant(1e6);
  mf::Matrix final_projected = final_attack;
  mf::ClipEmbeddings(final_projected, hostile.config.rating_max);
  ASSERT_THAT(hostile.party->Finish(final_attack), IsOk());
  ASSERT_THAT(honest.party->Finish(final_projected), IsOk());
  EXPECT_EQ(hostile.party->item_embeddings(), honest.party->item_embeddings());
  EXPECT_EQ(hostile.party->user_embeddings(), honest.party->user_embeddings());
}

TEST(PartySessionTest, HostileRowMovesTheReleaseByAtMostTheOneRatingBound) {
  // One user with one rating; non-private, every user sampled, one step, so
  // the released row is Pi(v - lr * g): ||g|| = ||2 e u|| <= 2 R^{3/2} = Delta
  // because the party clipped v before taking g (|e| <= R, ||u|| <= sqrt(R)).
  data::PartyData one;
  one.global_users = {0};
  one.global_items = {0, 1};
  one.train = {{0, 1, 5.0f}};
  one.range = {1, 5};
  JobConfig c;
  c.setting = Setting::kHfl;
  c.split = SplitKind::kHorizontal;
  c.rounds = 1;
  c.local_iters = 1;
  c.dim = 4;
  c.sample_rate = 1;
  c.epsilon = std::numeric_limits<double>::infinity();
  c.pretrain_epochs = 0;
  c.learning_rate = 0.5;
  c.lr_final_ratio = 1;
  auto party = *PartySession::Create(Admitted(c, one), one, 1, 2, nullptr);
  mf::Matrix v = mf::Matrix::Zero(2, 4);
  ASSERT_THAT(party->Pretrain(v), IsOk());
  v.row(1).setConstant(1e6);
  ASSERT_OK_AND_ASSIGN(auto released, party->RunRound(0, v));
  mf::Matrix projected = v;
  mf::ClipEmbeddings(projected, 5.0);
  const double bound = c.learning_rate * mf::SensitivityOneMatrix(5.0);
  // The release is rounded to float32 after the step: < 1e-6 more here.
  EXPECT_LE((released - projected).norm(), bound + 1e-6);
  EXPECT_LE(released.row(1).norm(), std::sqrt(5.0) + 1e-12);
  EXPECT_GT((v - projected).norm(), 1e5);  // the attack was real
}

TEST(AdmittedJobTest, RangeSeedAndPolicyAreThePartysOwn) {
  JobConfig job = HflJob(2.0);
  job.seed = 42;  // a server-chosen seed is dropped, never used
  const data::RatingRange range{1, 5};
  auto a = AdmittedJob::Admit(job, {range, std::nullopt, "party-0"}, nullptr);
  ASSERT_THAT(a, IsOk());
  EXPECT_FALSE(a->config().seed.has_value());
  EXPECT_FALSE(a->seeded());
  EXPECT_EQ(a->config().rating_max, 5.0);
  // Two unseeded admissions of the same job draw different streams.
  auto b = AdmittedJob::Admit(job, {range, std::nullopt, "party-0"}, nullptr);
  EXPECT_NE(std::move(*a).TakeRng().NextU64(), std::move(*b).TakeRng().NextU64());

  job.rating_max = 1;  // the server announces R = 1 to a party rating 1..5
  auto wrong = AdmittedJob::Admit(job, {range, 7, "party-0"}, nullptr);
  EXPECT_EQ(wrong.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(wrong.status().message().find("rating_max"), std::string::npos);

  job.rating_max = 5;
  auto refused = AdmittedJob::Admit(job, {range, 7, "party-0"},
                                    [](const JobConfig&, const NoisePlan&) { return "no"; });
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kPermissionDenied);
}

TEST(AdmittedJobTest, NegativeRatingsAreShiftedAndTheSensitivityUsesTheWholeRange) {
  JobConfig job = HflJob(1.0);
  job.rating_max = 5;
  ASSERT_OK_AND_ASSIGN(auto a, AdmittedJob::Admit(job, {{-5, 5}, 1, "party-0"}, nullptr));
  EXPECT_EQ(a.rating_offset(), -5.0);
  EXPECT_EQ(a.config().rating_max, 10.0);
  const NoisePlan naive = *PlanNoise(job);  // R = 5: what the job alone implies
  EXPECT_NEAR(a.plan().sigma_one / naive.sigma_one, std::pow(2.0, 1.5), 1e-9);
  EXPECT_EQ(a.plan().noise_multiplier, naive.noise_multiplier);
  // The session sees ratings in [0, 10] and predicts back in [-5, 5].
  data::PartyData d;
  d.global_users = {0, 1};
  d.global_items = {0, 1, 2};
  d.train = {{0, 0, -5.0f}, {1, 1, 5.0f}, {0, 2, 0.0f}};
  d.range = {-5, 5};
  dp::PrivacyLedger ledger(10, 1e-5);
  ASSERT_OK_AND_ASSIGN(auto s, PartySession::Create(std::move(a), d, 2, 3, &ledger));
  EXPECT_EQ((s)->data().train[0].value, 0.0f);
  EXPECT_EQ((s)->data().train[1].value, 10.0f);
  ASSERT_OK_AND_ASSIGN(auto recs, (s)->Recommend(1, 2));
  for (const auto& [item, score] : recs) {
    EXPECT_GE(score, -5.0);
    EXPECT_LE(score, 5.0);
  }
  // A rating outside the admitted range is refused.
  d.train.push_back({1, 0, 6.0f});
  auto again = AdmittedJob::Admit(job, {{-5, 5}, 1, "party-0"}, nullptr);
  EXPECT_EQ(PartySession::Create(std::move(*again), d, 2, 3, &ledger).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace fedmf::fmf
