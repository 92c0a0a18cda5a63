// The server's Hua S3 state machine (server/hua/hua_s3_job) driven in one process
// with the device role (client-device/hua_role) and the library third party
// behind it: it must reproduce common/hua's protocol driver bit for bit, treat
// a host that vanishes mid-iteration as a dropout whose items are re-planned
// among the others, and reject what it must.
#include "server/hua/hua_s3_job.h"

#include <cmath>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "client-device/hua_role.h"
#include "common/hua/central.h"
#include "common/hua/protocol_driver.h"
#include "common/hua/third_party.h"
#include "common/random/csprng.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

using ::fedmf::testing::IsOk;

namespace fedmf::server {
namespace {

constexpr uint64_t kSeed = 42;
constexpr int32_t kUsers = 12, kItems = 9, kDim = 4;

// The valid variant (default) or the paper's mechanism.
hua::HuaParams Params(bool paper_noise = false) {
  hua::HuaParams p;
  p.paper_noise = paper_noise;
  p.scenario = hua::Scenario::kDynamic;
  p.dim = kDim;
  p.iterations = 6;
  p.epsilon = 1.0;
  p.join_prob = 0.3;
  p.leave_prob = 0.2;
  p.initial_online = 0.7;
  p.max_online = 6;
  return p;
}

// Deterministic ratings: user i rates 4 items.
std::vector<std::vector<hua::RatedItem>> Ratings() {
  std::vector<std::vector<hua::RatedItem>> r(kUsers);
  for (int32_t i = 0; i < kUsers; ++i) {
    for (int32_t k = 0; k < 4; ++k) {
      r[i].push_back({(i + 2 * k) % kItems, 1.0 + (i * 7 + k * 3) % 5});
    }
  }
  return r;
}

struct Fed {
  std::unique_ptr<HuaS3Job> job;
  std::optional<hua::ThirdParty> tp;
  std::map<std::string, std::unique_ptr<device::HuaUserRole>> hosts;
  absl::Time now = absl::FromUnixSeconds(1000);
  std::set<std::string> silent;  // hosts that stopped answering
  int32_t max_passes = 0;
};

// Two hosts: "a" runs users 0..5, "b" runs 6..11.
std::unique_ptr<Fed> MakeFed(bool paper_noise = false) {
  auto f = std::make_unique<Fed>();
  HuaS3Config c;
  c.job_id = "job";
  c.params = Params(paper_noise);
  c.num_items = kItems;
  c.seed = kSeed;
  c.grants = {{"a", 0, 6}, {"b", 6, 6}};
  c.expected_users = kUsers;
  auto job = HuaS3Job::Create(c, f->now);
  EXPECT_THAT(job, IsOk());
  f->job = std::move(*job);
  auto tp = hua::ThirdParty::Create(hua::Scenario::kDynamic, kDim, random::Csprng::FromSeed(7));
  f->tp.emplace(std::move(*tp));
  const auto ratings = Ratings();
  for (const std::string host : {"a", "b"}) {
    const int32_t first = host == "a" ? 0 : 6;
    std::vector<device::HuaLocalUser> users;
    for (int32_t i = first; i < first + 6; ++i) users.push_back({i, ratings[i], {}});
    auto role = device::HuaUserRole::Create(c.params, c.range, users, kSeed);
    EXPECT_THAT(role, IsOk());
    auto n = f->job->Register(host, (*role)->Hellos(), f->now);
    EXPECT_THAT(n, IsOk());
    f->hosts[host] = std::move(*role);
  }
  return f;
}

// One host answers its open requests (unless silent).
void Answer(Fed& f, const std::string& host) {
  if (f.silent.count(host)) return;  // a vanished host does not even poll
  HuaHostTasks t = f.job->TasksFor(host, f.now);
  std::vector<int32_t> done;
  for (const auto& r : t.init) {
    auto rep = f.hosts[host]->HandleInit(r);
    ASSERT_THAT(rep, IsOk());
    ASSERT_THAT(f.tp->Accept(*rep), IsOk());
    done.push_back(r.user);
  }
  for (const auto& r : t.iteration) {
    auto rep = f.hosts[host]->HandleIteration(r);
    ASSERT_THAT(rep, IsOk());
    ASSERT_THAT(f.tp->Accept(*rep), IsOk());
    done.push_back(r.user);
  }
  if (!done.empty()) ASSERT_TRUE(f.job->MarkDone(host, t.phase, t.round, t.pass, done).ok());
}

// Runs the job until FINISHING; `silence(t)` may silence hosts before an iteration.
void Drive(Fed& f, const std::function<void(int32_t)>& before_iteration = nullptr) {
  for (int steps = 0; steps < 1000; ++steps) {
    HuaAction a = f.job->NextAction(f.now);
    switch (a.kind) {
      case HuaAction::kBegin:
        ASSERT_THAT(f.tp->Begin(a.plan), IsOk());
        if (a.plan.phase == hua::Phase::kIteration && a.plan.pass == 0 && before_iteration) {
          before_iteration(a.plan.round);
        }
        f.max_passes = std::max(f.max_passes, a.plan.pass + 1);
        f.job->Begun();
        for (const auto& [name, role] : f.hosts) Answer(f, name);
        break;
      case HuaAction::kFlush: {
        auto fw = f.tp->Flush();
        ASSERT_THAT(fw, IsOk());
        ASSERT_THAT(f.job->Flushed(*fw, f.now), IsOk()) << f.job->error();
        break;
      }
      case HuaAction::kEndJob: f.job->EndedAtAggregator(f.now); return;
      case HuaAction::kNone:
        ASSERT_NE(f.job->state(), HuaJobState::kFailed) << f.job->error();
        f.now += absl::Seconds(31);  // past the round deadline
        break;
    }
  }
  FAIL() << "the job did not finish";
}

TEST(HuaS3JobTest, ReproducesTheProtocolDriverExactly) {
  for (bool paper : {false, true}) {
    SCOPED_TRACE(paper ? "paper mechanism" : "valid variant");
    auto f = MakeFed(paper);
    Drive(*f);
    ASSERT_EQ(f->job->state(), HuaJobState::kFinishing);
    EXPECT_EQ(f->job->iteration(), Params().iterations);

    // The same job through common/hua's in-process driver.
    std::vector<data::Rating> all;
    const auto ratings = Ratings();
    for (int32_t i = 0; i < kUsers; ++i) {
      for (const auto& r : ratings[i]) all.push_back({i, r.item, static_cast<float>(r.rating)});
    }
    const mf::RatingMatrix x(kUsers, kItems, all);
    const random::Csprng root = random::Csprng::FromSeed(kSeed);
    const hua::Profiles start = hua::InitialProfiles(root, kUsers, kItems, kDim);
    auto out = hua::RunProtocol(Params(paper), x, {1.0, 5.0}, root, start);
    ASSERT_THAT(out, IsOk());
    const mf::Matrix& v = f->job->item_profiles();
    ASSERT_EQ(v.rows(), out->profiles.v.rows());
    double max_diff = 0;
    for (int32_t j = 0; j < kItems; ++j) {
      for (int32_t l = 0; l < kDim; ++l) {
        max_diff = std::max(max_diff, std::abs(v(j, l) - out->profiles.v(j, l)));
      }
    }
    EXPECT_EQ(max_diff, 0.0);
    // And V moved (the test is not comparing two untouched V(0)).
    double moved = 0;
    for (int32_t j = 0; j < kItems; ++j) moved += (v.row(j) - start.v.row(j)).norm();
    EXPECT_GT(moved, 1e-3);
    // Every user's spend as the server counts it (decoded sums) is the user's
    // own count, and the job's epsilon is the busiest user's, within budget.
    const std::vector<HuaUserSpend> spend = f->job->UserSpend();
    ASSERT_EQ(spend.size(), static_cast<size_t>(kUsers));
    int32_t busiest = 0;
    for (const HuaUserSpend& s : spend) {
      EXPECT_EQ(s.releases, out->user_releases[s.user]) << "user " << s.user;
      busiest = std::max(busiest, s.releases);
    }
    EXPECT_GT(busiest, 0);
    if (paper) {
      EXPECT_TRUE(std::isinf(f->job->epsilon()));
    } else {
      EXPECT_LE(f->job->epsilon(), 1.0);
      auto want = hua::UserEpsilon(f->job->privacy(), busiest);
      ASSERT_THAT(want, IsOk());
      EXPECT_DOUBLE_EQ(f->job->epsilon(), *want);
    }
  }
}

TEST(HuaS3JobTest, HostVanishingMidIterationIsRepairedNotCorrupting) {
  auto f = MakeFed();
  // Host b downloads iteration 3's requests, then never answers again.
  Drive(*f, [&](int32_t t) {
    if (t == 3) f->silent.insert("b");
  });
  ASSERT_EQ(f->job->state(), HuaJobState::kFinishing) << f->job->error();
  bool repaired = false;
  for (const HuaIterationLog& l : f->job->log()) {
    if (l.iteration == 3) {
      EXPECT_GT(l.stats.dropped_users, 0);
      EXPECT_GE(l.stats.passes, 2);  // b's items re-planned among a's users
      EXPECT_GT(l.stats.items_updated, 0);
      repaired = true;
    }
    if (l.iteration > 3) EXPECT_EQ(l.stats.dropped_users, 0);  // b is offline, not reselected
  }
  EXPECT_TRUE(repaired);
  for (int32_t j = 0; j < kItems; ++j) {
    for (int32_t l = 0; l < kDim; ++l) {
      ASSERT_TRUE(std::isfinite(f->job->item_profiles()(j, l)));
      // A decoded sum missing a tau^ share would be off by ~2^40 / 2^24.
      EXPECT_LT(std::abs(f->job->item_profiles()(j, l)), 100.0);
    }
  }
}

TEST(HuaS3JobTest, RejectsUngrantedUsersLateRegistrationAndStaleDone) {
  auto f = MakeFed();
  HuaS3Config c;
  c.job_id = "j2";
  c.params = Params();
  c.num_items = kItems;
  c.grants = {{"a", 0, 2}};
  c.expected_users = 2;
  auto job = HuaS3Job::Create(c, f->now);
  ASSERT_THAT(job, IsOk());
  auto r = (*job)->Register("b", {{0, {1, 2}}}, f->now);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kPermissionDenied);
  r = (*job)->Register("a", {{1, {2, 1}}}, f->now);  // unsorted
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  r = (*job)->Register("a", {{1, {2, kItems}}}, f->now);  // out of range
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*job)->registered_users(), 0);  // nothing partial

  // The running job: registration closed, stale "done" refused.
  HuaAction a = f->job->NextAction(f->now);
  ASSERT_EQ(a.kind, HuaAction::kBegin);
  r = f->job->Register("a", {{0, {1}}}, f->now);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(f->job->MarkDone("a", a.plan.phase, a.plan.round + 5, 0, {0}).code(),
            absl::StatusCode::kFailedPrecondition);
  f->job->Begun();
  // A host cannot mark another host's user done.
  int32_t b_user = -1;
  for (const auto& it : a.plan.items) {
    for (int32_t u : it.users) {
      if (u >= 6) b_user = u;
    }
  }
  if (b_user >= 0) {
    EXPECT_EQ(f->job->MarkDone("a", a.plan.phase, a.plan.round, a.plan.pass, {b_user}).code(),
              absl::StatusCode::kPermissionDenied);
  }
}

}  // namespace
}  // namespace fedmf::server
