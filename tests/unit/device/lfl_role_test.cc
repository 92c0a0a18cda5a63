// client-device/lfl_role.h: two device hosts' LflRoles against the server's
// LflJob (server/lfl/lfl_job.h), in process, with real device certificates
// from a test CA, exchanging the wire messages of
// proto/fedmf/v1/device.proto. Every message a device sends is logged.
//
// LflActiveSecAggTest: a hook between the server and the hosts plays a
// hostile server (it edits tasks and inbox messages); the tests assert on
// what each device sends (no unmasking share of a device that refused) and
// on the job's result. LflRoleTest: the role's own duties — a device's
// ledger is charged exactly for the round-1 inputs it sends, a spent budget
// keeps it out of later iterations, a device that vanishes sends nothing
// more in that round (no unmasking share).
#include "client-device/lfl_role.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <memory>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "client-device/device_ledger.h"
#include "client-device/secagg_guard.h"
#include "client-device/secagg_keys.h"
#include "common/crypto/ed25519.h"
#include "common/data/loaders.h"
#include "common/data/partition.h"
#include "common/dp/calibration.h"
#include "common/lfl/lfl_simulator.h"
#include "common/lfl/wire/lfl_job_codec.h"
#include "common/pki/ca.h"
#include "common/pki/tls_files.h"
#include "common/secagg/signing.h"
#include "server/lfl/lfl_job.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/temp_dir.h"

using ::fedmf::testing::IsOk;

namespace fedmf {
namespace {

constexpr absl::Duration kYear = absl::Hours(24 * 365);
constexpr int kPerHost = 5;
const std::vector<std::string> kHosts = {"host-a", "host-b"};

// One message a device sent.
struct Message {
  uint64_t device;
  int32_t iteration;
  int round;
  v1::DevicePhase phase;
};

// What every device sent, in order.
struct Sent {
  std::vector<Message> log;
  // Owners of every revealed b- or s_sk-share.
  std::multiset<uint64_t> revealed_owners;
  int consistency_signatures = 0;
  int keyed_advertisements = 0;  // AdvertiseKeys carrying X25519 keys
};

class LflRoleFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_THAT(pki::InitCa(root_ + "/ca", "testfed", 10 * kYear), IsOk());
    for (const std::string& h : kHosts) {
      ASSERT_TRUE(
          pki::IssueCertificate(root_ + "/ca", root_ + "/certs", h, pki::Role::kDevice, {}, kYear)
              .ok());
      // The TLS loader wants ca.crt next to the host's files.
      std::filesystem::copy_file(root_ + "/ca/ca.crt", root_ + "/certs/ca.crt",
                                 std::filesystem::copy_options::skip_existing);
      absl::StatusOr<pki::TlsFiles> files = pki::LoadTlsFiles(root_ + "/certs", h);
      ASSERT_THAT(files, IsOk());
      absl::StatusOr<device::HostKeyAuthority> a =
          device::HostKeyAuthority::Create(*std::move(files));
      ASSERT_THAT(a, IsOk());
      authorities_.push_back(std::make_unique<device::HostKeyAuthority>(*std::move(a)));
    }
    absl::StatusOr<data::Dataset> ds =
        data::LoadDataSpec("synthetic:users=10,items=8,density=0.6,seed=3");
    ASSERT_THAT(ds, IsOk());
    dataset_ = *std::move(ds);
  }
  void TearDown() override {
    roles_.clear();
    ledgers_.clear();
  }

  net::LflJobConfig Job(int iterations, bool active = true) const {
    net::LflJobConfig j;
    j.job_id = "active-job";
    j.config.iterations = iterations;
    j.config.dim = 3;
    // omega 0.1: with two hosts of 5 the active variant needs
    // t = n - floor(omega n) = 9 > (n + 5) / 2 (2t > holders + the other host).
    j.config.omega = 0.1;
    j.config.epsilon = 4;
    j.config.delta = 1e-5;
    j.config.device.dim = 3;
    j.config.device.rating_max = dataset_.range.max;
    j.config.device.pretrain_epochs = 2;
    j.config.device.finetune_epochs = 2;
    j.config.test_fraction = 0.2;
    j.num_items = dataset_.num_items;
    j.complete_graph = true;
    j.active_secagg = active;
    for (size_t h = 0; h < kHosts.size(); ++h) {
      v1::DeviceGrant g;
      g.set_host(kHosts[h]);
      g.set_first_device(h * kPerHost);
      g.set_count(kPerHost);
      j.grants.push_back(g);
    }
    j.num_devices = kPerHost * static_cast<int64_t>(kHosts.size());
    return j;
  }

  // Hooks of the hostile server: may edit a host's task, or the inbox of a
  // phase before the host answers it.
  std::function<void(const std::string& host, v1::DeviceTask&)> edit_task;
  std::function<void(const std::string& host, v1::DevicePhase, std::vector<v1::InboxMessage>&)>
      edit_inbox;
  // Sets a host's role options and its devices' budget before the job.
  std::function<void(size_t host, device::LflRoleOptions&, device::DeviceLedger::Budget&)>
      configure_host;

  // Runs the job to its end; returns the server's job.
  // Job(iterations) with LflSpec.secagg_session, run as Run does.
  std::unique_ptr<server::LflJob> RunKeySession(int iterations, Sent& sent) {
    net::LflJobConfig j = Job(iterations);
    j.secagg_session = true;
    return Run(j, sent);
  }

  std::unique_ptr<server::LflJob> Run(const net::LflJobConfig& job, Sent& sent,
                                      bool require_active = true) {
    absl::Time now = absl::UnixEpoch() + absl::Hours(1);
    absl::StatusOr<net::LflJobConfig> checked = net::LflJobFromSpec(net::SpecFromLflJob(job));
    EXPECT_THAT(checked, IsOk());
    absl::StatusOr<std::unique_ptr<server::LflJob>> server =
        server::LflJob::Create(net::SpecFromLflJob(job), now, absl::Hours(1));
    EXPECT_THAT(server, IsOk());
    if (!server.ok()) return nullptr;
    server::LflJob& s = **server;
    absl::StatusOr<data::Federation> fed = data::PartitionLfl(dataset_, {0.2, 1});
    EXPECT_THAT(fed, IsOk());
    std::vector<std::unique_ptr<device::LflRole>>& roles = roles_;
    std::vector<std::unique_ptr<device::DeviceLedger>>& ledgers = ledgers_;
    roles.clear();
    ledgers.clear();
    for (size_t h = 0; h < kHosts.size(); ++h) {
      std::vector<uint64_t> ids;
      for (int k = 0; k < kPerHost; ++k) ids.push_back(h * kPerHost + k);
      EXPECT_THAT(s.Hello(kHosts[h], ids, now), IsOk());
      device::LflRoleOptions o;
      o.seed = 5 + h;
      o.threads = 1;
      o.key_authority = authorities_[h].get();
      o.require_active_secagg = require_active;
      device::DeviceLedger::Budget budget{100.0, 1e-5, false};
      if (configure_host) configure_host(h, o, budget);
      auto ledger = device::DeviceLedger::Open(absl::StrCat(root_, "/ledger-", h, ".db"), budget);
      EXPECT_THAT(ledger, IsOk());
      ledgers.push_back(*std::move(ledger));
      roles.push_back(CreateRole(o, *checked, job.num_devices, h, *fed, ledgers.back().get()));
      if (roles.back() == nullptr) return nullptr;
    }
    s.Advance(now);
    EXPECT_EQ(s.stage(), server::LflJob::Stage::kPretrain) << s.error();
    for (size_t h = 0; h < kHosts.size(); ++h) {
      absl::StatusOr<mf::Matrix> v0 = s.Model(kHosts[h], 0);
      EXPECT_THAT(v0, IsOk());
      absl::StatusOr<mf::ErrorMetrics> m = roles[h]->Pretrain(*v0);
      EXPECT_THAT(m, IsOk());
      v1::DeviceMetricsReport r;
      r.set_job_id(job.job_id);
      r.set_stage(1);
      r.set_test_mse(m->mse);
      r.set_test_count(m->count);
      EXPECT_THAT(s.ReportMetrics(kHosts[h], r), IsOk());
    }
    s.Advance(now);
    for (int step = 0; step < 1000 && s.stage() == server::LflJob::Stage::kRound; ++step) {
      for (size_t h = 0; h < kHosts.size(); ++h) {
        v1::DeviceTask t = s.TaskFor(kHosts[h]);
        if (t.kind() != v1::DEVICE_TASK_KIND_PHASE) continue;
        if (edit_task) edit_task(kHosts[h], t);
        v1::BatchHeader hd;
        hd.set_host(kHosts[h]);
        hd.set_job_id(job.job_id);
        hd.set_iteration(t.iteration());
        hd.set_round(t.round());
        hd.set_aggregation_id(t.aggregation_id());
        hd.set_phase(t.phase());
        absl::StatusOr<std::vector<v1::DeviceMessage>> out;
        if (t.phase() == v1::DEVICE_PHASE_ADVERTISE_KEYS) {
          absl::StatusOr<mf::Matrix> v = s.Model(kHosts[h], t.iteration());
          EXPECT_THAT(v, IsOk());
          out = roles[h]->OpenRound(t.iteration(), t.round(), t.session(), t.round1_survivors(),
                                    {t.devices().begin(), t.devices().end()}, &*v);
        } else {
          absl::StatusOr<std::vector<v1::InboxMessage>> in = s.Inbox(kHosts[h], hd);
          EXPECT_THAT(in, IsOk());
          if (edit_inbox) edit_inbox(kHosts[h], t.phase(), *in);
          out = roles[h]->Answer(*in);
        }
        EXPECT_THAT(out, IsOk());
        if (!out.ok()) continue;
        for (const v1::DeviceMessage& m : *out) {
          sent.log.push_back({m.device(), t.iteration(), t.round(), t.phase()});
          if (m.has_unmasking()) {
            for (const auto& x : m.unmasking().b_shares()) sent.revealed_owners.insert(x.owner());
            for (const auto& x : m.unmasking().s_sk_shares()) {
              sent.revealed_owners.insert(x.owner());
            }
          }
          if (m.has_consistency_signature()) ++sent.consistency_signatures;
          if (m.has_advertise_keys() && !m.advertise_keys().c_pk().empty()) {
            ++sent.keyed_advertisements;
          }
          (void)s.SubmitOne(kHosts[h], hd, m);
        }
        s.HostSubmitted(kHosts[h], hd);
      }
      now += absl::Seconds(1);
      s.Advance(now);
    }
    for (size_t h = 0; h < kHosts.size() && s.stage() == server::LflJob::Stage::kFinish; ++h) {
      v1::DeviceMetricsReport r;
      r.set_job_id(job.job_id);
      r.set_stage(3);
      r.set_test_mse(1);
      r.set_test_count(1);
      EXPECT_THAT(s.ReportMetrics(kHosts[h], r), IsOk());
    }
    s.Advance(now);
    return *std::move(server);
  }

  std::unique_ptr<device::LflRole> CreateRole(const device::LflRoleOptions& o,
                                              const net::LflJobConfig& job, int64_t n, size_t h,
                                              const data::Federation& fed,
                                              device::DeviceLedger* ledger) {
    std::vector<std::pair<uint64_t, data::PartyData>> devices;
    for (int k = 0; k < kPerHost; ++k) {
      const uint64_t id = h * kPerHost + k;
      devices.emplace_back(id, fed.parties[id]);
    }
    absl::StatusOr<std::unique_ptr<device::LflRole>> role =
        device::LflRole::Create(o, job, n, std::move(devices), ledger);
    create_status_ = role.status();
    return role.ok() ? *std::move(role) : nullptr;
  }

  const ::fedmf::testing::ScopedTempDir tmp_{"fedmf_lfl_active_test."};
  const std::string root_ = tmp_.path();
  data::Dataset dataset_;
  // The last Run's hosts (ledgers outlive the roles that charge them).
  std::vector<std::unique_ptr<device::DeviceLedger>> ledgers_;
  std::vector<std::unique_ptr<device::LflRole>> roles_;
  std::vector<std::unique_ptr<device::HostKeyAuthority>> authorities_;
  absl::Status create_status_;
  uint64_t aggregation_ = 0;
};

class LflActiveSecAggTest : public LflRoleFixture {};
class LflRoleTest : public LflRoleFixture {};

bool DidSend(const Sent& s, uint64_t device, v1::DevicePhase phase) {
  return std::any_of(s.log.begin(), s.log.end(),
                     [&](const Message& m) { return m.device == device && m.phase == phase; });
}

// Whether `device` sent anything at all.
bool SentAnything(const Sent& s, uint64_t device) {
  return std::any_of(s.log.begin(), s.log.end(),
                     [&](const Message& m) { return m.device == device; });
}

TEST_F(LflActiveSecAggTest, HonestActiveJobRunsTheConsistencyCheckAndFinishes) {
  Sent sent;
  std::unique_ptr<server::LflJob> job = Run(Job(2), sent);
  ASSERT_NE(job, nullptr) << create_status_;
  ASSERT_EQ(job->stage(), server::LflJob::Stage::kFinished) << job->error();
  ASSERT_EQ(job->status().iterations_size(), 2);
  for (const v1::LflIterationRecord& r : job->status().iterations()) {
    EXPECT_FALSE(r.skipped());
    EXPECT_EQ(r.round1_survivors(), 10);
    EXPECT_EQ(r.round2_survivors(), 10);
    EXPECT_EQ(r.rejected_messages(), 0);
    EXPECT_EQ(r.phase_seconds_size(), 10);
    EXPECT_GT(r.phase_seconds(8), 0);  // round 1's consistency check ran
    EXPECT_GT(r.phase_seconds(9), 0);  // round 2's
  }
  // 10 devices x 2 rounds x 2 iterations signed the survivor set.
  EXPECT_EQ(sent.consistency_signatures, 40);
  for (uint64_t d = 0; d < 10; ++d) EXPECT_TRUE(DidSend(sent, d, v1::DEVICE_PHASE_UNMASKING)) << d;
}

TEST_F(LflActiveSecAggTest, HostRequiringActiveSecAggRefusesASemiHonestJob) {
  Sent sent;
  std::unique_ptr<server::LflJob> job = Run(Job(1, /*active=*/false), sent);
  EXPECT_EQ(job, nullptr);
  EXPECT_EQ(create_status_.code(), absl::StatusCode::kFailedPrecondition) << create_status_;
  EXPECT_NE(create_status_.message().find("require_active_secagg"), std::string::npos)
      << create_status_;
  // Opting out locally lets it run (semi-honest sessions, no signatures).
  Sent sent2;
  job = Run(Job(1, /*active=*/false), sent2, /*require_active=*/false);
  ASSERT_NE(job, nullptr) << create_status_;
  EXPECT_EQ(job->stage(), server::LflJob::Stage::kFinished) << job->error();
  EXPECT_EQ(sent2.consistency_signatures, 0);
}

// LflSpec.secagg_session: keys are advertised once, at the job's first
// aggregation; every later one (round 2, later iterations) runs on them,
// consistency check included.
TEST_F(LflActiveSecAggTest, KeySessionAdvertisesKeysOnlyAtItsSetup) {
  Sent sent;
  std::unique_ptr<server::LflJob> job = RunKeySession(3, sent);
  ASSERT_NE(job, nullptr) << create_status_;
  EXPECT_EQ(job->stage(), server::LflJob::Stage::kFinished) << job->error();
  EXPECT_EQ(sent.keyed_advertisements, 2 * kPerHost);
  // 3 iterations x 2 rounds x 10 devices signed their survivor sets.
  EXPECT_EQ(sent.consistency_signatures, 3 * 2 * 2 * kPerHost);
  ASSERT_EQ(job->status().iterations_size(), 3);
  for (const auto& r : job->status().iterations()) {
    EXPECT_FALSE(r.skipped());
    EXPECT_EQ(r.key_setups(), r.iteration() == 0 ? 1 : 0);
  }
}

// A device that missed the key session's setup has no keys for it: the
// server sets up anew at the next iteration (more devices out of the
// session than half the dropout omega tolerates), and the device is back.
TEST_F(LflActiveSecAggTest, KeySessionIsSetUpAnewWhenDevicesMissedTheSetup) {
  edit_task = [](const std::string& host, v1::DeviceTask& t) {
    if (host != "host-a" || t.iteration() != 0 || t.round() != 1) return;
    // Device 0 is not asked in iteration 0's round 1: it misses the setup.
    auto* devices = t.mutable_devices();
    devices->erase(std::remove(devices->begin(), devices->end(), uint64_t{0}), devices->end());
  };
  Sent sent;
  std::unique_ptr<server::LflJob> job = RunKeySession(3, sent);
  ASSERT_NE(job, nullptr) << create_status_;
  EXPECT_EQ(job->stage(), server::LflJob::Stage::kFinished) << job->error();
  ASSERT_EQ(job->status().iterations_size(), 3);
  const auto& it = job->status().iterations();
  EXPECT_EQ(it[0].round1_survivors(), 2 * kPerHost - 1);
  EXPECT_EQ(it[0].key_setups(), 1);
  // Iteration 1 sets up again, with device 0; iteration 2 reuses that.
  EXPECT_EQ(it[1].key_setups(), 1);
  EXPECT_EQ(it[1].round1_survivors(), 2 * kPerHost);
  EXPECT_EQ(it[2].key_setups(), 0);
  EXPECT_EQ(it[2].round1_survivors(), 2 * kPerHost);
  // Keys were advertised at both setups: by nine devices, then by all ten.
  EXPECT_EQ(sent.keyed_advertisements, 2 * (2 * kPerHost) - 1);
}

// A server that opens a key session the job's spec did not ask for gets
// nothing from that host's devices.
TEST_F(LflActiveSecAggTest, KeySessionTheSpecDidNotAskForIsRefused) {
  edit_task = [](const std::string& host, v1::DeviceTask& t) {
    if (host == "host-a") t.mutable_session()->set_key_session(77);
  };
  Sent sent;
  std::unique_ptr<server::LflJob> job = Run(Job(1), sent);
  ASSERT_NE(job, nullptr) << create_status_;
  for (uint64_t d = 0; d < kPerHost; ++d) EXPECT_FALSE(SentAnything(sent, d)) << d;
  ASSERT_EQ(job->status().iterations_size(), 1);
  EXPECT_TRUE(job->status().iterations(0).skipped());
}

// A server that replays an aggregation id inside a key session (which would
// repeat the round masks over a new input) is refused: the device never
// reuses an id, so host-a's devices send nothing from that round on.
TEST_F(LflActiveSecAggTest, KeySessionReplayedAggregationIdIsRefused) {
  auto first = std::make_shared<std::optional<uint64_t>>();
  edit_task = [first](const std::string& host, v1::DeviceTask& t) {
    if (!first->has_value()) *first = t.session().aggregation_id();
    if (host == "host-a" && t.iteration() == 1 && t.round() == 1) {
      t.mutable_session()->set_aggregation_id(**first);
      t.set_aggregation_id(**first);
    }
  };
  Sent sent;
  std::unique_ptr<server::LflJob> job = RunKeySession(2, sent);
  ASSERT_NE(job, nullptr) << create_status_;
  for (const Message& m : sent.log) {
    if (m.device < kPerHost) {
      EXPECT_FALSE(m.iteration == 1 && m.round == 1) << "device " << m.device << " took part";
    }
  }
  EXPECT_TRUE(SentAnything(sent, 0));  // iteration 0 ran normally
  ASSERT_EQ(job->status().iterations_size(), 2);
  EXPECT_FALSE(job->status().iterations(0).skipped());
  EXPECT_TRUE(job->status().iterations(1).skipped());
}

// A server that downgrades one host's sessions to semi-honest (no consistency
// check) gets nothing from that host's devices.
TEST_F(LflActiveSecAggTest, DowngradedSessionIsRefusedBeforeAnyKeyIsSent) {
  edit_task = [](const std::string& host, v1::DeviceTask& t) {
    if (host == "host-a") t.mutable_session()->set_consistency_check(false);
  };
  Sent sent;
  std::unique_ptr<server::LflJob> job = Run(Job(1), sent);
  ASSERT_NE(job, nullptr) << create_status_;
  for (uint64_t d = 0; d < kPerHost; ++d) EXPECT_FALSE(SentAnything(sent, d)) << d;
  // Half the devices left: below ceil(0.9 n), so the iteration is skipped.
  ASSERT_EQ(job->status().iterations_size(), 1);
  EXPECT_TRUE(job->status().iterations(0).skipped());
  EXPECT_TRUE(sent.revealed_owners.empty());
}

// The server lowers min_survivors (so that it could unmask the sum of a few
// devices): the hosts refuse the session.
TEST_F(LflActiveSecAggTest, LoweredMinSurvivorsIsRefused) {
  edit_task = [](const std::string&, v1::DeviceTask& t) {
    if (t.round() != 1) return;
    t.mutable_session()->set_min_survivors(2);
    t.mutable_session()->set_threshold(2);
  };
  Sent sent;
  std::unique_ptr<server::LflJob> job = Run(Job(1), sent);
  ASSERT_NE(job, nullptr) << create_status_;
  EXPECT_TRUE(sent.log.empty());
  EXPECT_TRUE(job->status().iterations(0).skipped());
}

// n: a round-1 roster that is not the job's n devices is refused.
TEST_F(LflActiveSecAggTest, RosterOtherThanTheJobsDevicesIsRefused) {
  edit_task = [](const std::string& host, v1::DeviceTask& t) {
    if (host != "host-a" || t.round() != 1) return;
    auto* roster = t.mutable_session()->mutable_roster();
    roster->RemoveLast();  // drops device 9 of host-b from host-a's view
    t.mutable_session()->set_min_survivors(9);
  };
  Sent sent;
  std::unique_ptr<server::LflJob> job = Run(Job(1), sent);
  ASSERT_NE(job, nullptr) << create_status_;
  for (uint64_t d = 0; d < kPerHost; ++d) EXPECT_FALSE(SentAnything(sent, d)) << d;
}

// Round 2 with a made-up small |U1| (the devices' replacement noise is scaled
// by 1/|U1|): refused.
TEST_F(LflActiveSecAggTest, Round2WithTooFewAnnouncedRound1SurvivorsIsRefused) {
  edit_task = [](const std::string&, v1::DeviceTask& t) {
    if (t.round() == 2) t.set_round1_survivors(8);  // ceil(0.9 * 10) = 9
  };
  Sent sent;
  std::unique_ptr<server::LflJob> job = Run(Job(1), sent);
  ASSERT_NE(job, nullptr) << create_status_;
  ASSERT_EQ(job->status().iterations_size(), 1);
  EXPECT_EQ(job->status().iterations(0).round1_survivors(), 10);
  EXPECT_EQ(job->status().iterations(0).round2_survivors(), 0);  // round 2 aborted
}

// |U1| too small at the consistency check: the server tells device 0 that
// only 6 devices (< ceil(0.9 * 10)) survived the masking step. Device 0
// aborts; it signs nothing and releases no share of anybody.
TEST_F(LflActiveSecAggTest, TooFewSurvivorsAtTheConsistencyCheckAbortsBeforeAnyShare) {
  edit_inbox = [](const std::string& host, v1::DevicePhase phase,
                  std::vector<v1::InboxMessage>& in) {
    if (host != "host-a" || phase != v1::DEVICE_PHASE_CONSISTENCY_CHECK) return;
    for (v1::InboxMessage& m : in) {
      if (m.device() != 0) continue;
      auto* s = m.mutable_consistency_check()->mutable_survivors();
      s->Truncate(6);
    }
  };
  Sent sent;
  std::unique_ptr<server::LflJob> job = Run(Job(1), sent);
  ASSERT_NE(job, nullptr) << create_status_;
  EXPECT_TRUE(DidSend(sent, 0, v1::DEVICE_PHASE_MASKED_INPUT));
  EXPECT_FALSE(DidSend(sent, 0, v1::DEVICE_PHASE_CONSISTENCY_CHECK));
  EXPECT_FALSE(DidSend(sent, 0, v1::DEVICE_PHASE_UNMASKING));
  for (uint64_t d = 1; d < 10; ++d) EXPECT_TRUE(DidSend(sent, d, v1::DEVICE_PHASE_UNMASKING)) << d;
}

// Key substitution: the server replaces device 5's keys in device 0's key
// broadcast (a) with keys under a signing key certified by host-a for device
// 5 (host-a colluding; job grants 5 to host-b), (b) keeping 5's signature.
// Device 0 aborts before sharing: it sends no ShareKeys and nothing of it is
// ever unmasked.
TEST_F(LflActiveSecAggTest, SubstitutedKeysAbortTheVictimAndNoShareOfItIsReleased) {
  for (bool collusion : {true, false}) {
    SCOPED_TRACE(collusion);
    random::Csprng adversary = random::Csprng::FromSeed(77);
    edit_inbox = [&](const std::string& host, v1::DevicePhase phase,
                     std::vector<v1::InboxMessage>& in) {
      if (host != "host-a" || phase != v1::DEVICE_PHASE_SHARE_KEYS) return;
      for (v1::InboxMessage& m : in) {
        if (m.device() != 0) continue;
        for (v1::NeighbourKeys& nk : *m.mutable_keys()->mutable_neighbours()) {
          if (nk.device() != 5) continue;
          std::string c(32, '\0'), s(32, '\0');
          adversary.FillBytes(reinterpret_cast<uint8_t*>(c.data()), 32);
          adversary.FillBytes(reinterpret_cast<uint8_t*>(s.data()), 32);
          // Valid X25519 public keys are any 32 bytes.
          nk.set_c_pk(c);
          nk.set_s_pk(s);
          if (!collusion) continue;
          absl::StatusOr<device::DeviceSigningIdentity> id =
              authorities_[0]->Issue("active-job", 5, adversary);
          ASSERT_THAT(id, IsOk());
          auto key = crypto::Ed25519PrivateKey::FromSeed(id->seed);
          const std::vector<uint8_t> vk(key->public_key().begin(), key->public_key().end());
          const std::vector<uint8_t> cv(c.begin(), c.end()), sv(s.begin(), s.end());
          absl::StatusOr<std::vector<uint8_t>> sig =
              key->Sign(secagg::AdvertisementStatement(aggregation_, 5, cv, sv, vk));
          ASSERT_THAT(sig, IsOk());
          nk.set_signature(std::string(sig->begin(), sig->end()));
          nk.set_signing_key(std::string(vk.begin(), vk.end()));
          nk.set_credential(std::string(id->credential.begin(), id->credential.end()));
        }
      }
    };
    edit_task = [&](const std::string&, v1::DeviceTask& t) { aggregation_ = t.aggregation_id(); };
    Sent sent;
    std::unique_ptr<server::LflJob> job = Run(Job(1), sent);
    ASSERT_NE(job, nullptr) << create_status_;
    EXPECT_TRUE(DidSend(sent, 0, v1::DEVICE_PHASE_ADVERTISE_KEYS));
    EXPECT_FALSE(DidSend(sent, 0, v1::DEVICE_PHASE_SHARE_KEYS));
    EXPECT_FALSE(DidSend(sent, 0, v1::DEVICE_PHASE_MASKED_INPUT));
    EXPECT_EQ(sent.revealed_owners.count(0), 0u);
    // The others finish the iteration without device 0.
    ASSERT_EQ(job->status().iterations_size(), 1);
    EXPECT_EQ(job->status().iterations(0).round1_survivors(), 9);
    std::filesystem::remove(root_ + "/ledger-0.db");
    std::filesystem::remove(root_ + "/ledger-1.db");
  }
}

// The iterations in which `device` sent a round-1 masked input.
std::set<int32_t> Round1Inputs(const Sent& s, uint64_t device) {
  std::set<int32_t> out;
  for (const Message& m : s.log) {
    if (m.device == device && m.round == 1 && m.phase == v1::DEVICE_PHASE_MASKED_INPUT) {
      out.insert(m.iteration);
    }
  }
  return out;
}

// A budget that covers one release of the job but not two: host-a's devices
// release in iteration 0, are refused by their ledger afterwards and sit the
// later iterations out (so those are skipped: half the devices are missing).
TEST_F(LflRoleTest, ADeviceWhoseBudgetIsSpentSitsOutLaterIterations) {
  const net::LflJobConfig job = Job(3);
  double z = 0, eps = 0;
  ASSERT_THAT(lfl::CalibrateSigmaV(job.config, &z, &eps), IsOk());
  ASSERT_GT(z, 0);
  const double one = *dp::ComputeEpsilon(1.0, z, 1, 1e-5);
  const double two = *dp::ComputeEpsilon(1.0, z, 2, 1e-5);
  ASSERT_LT(one, two);
  configure_host = [&](size_t h, device::LflRoleOptions&, device::DeviceLedger::Budget& b) {
    if (h == 0) b.max_epsilon = (one + two) / 2;
  };
  Sent sent;
  std::unique_ptr<server::LflJob> server = Run(job, sent);
  ASSERT_NE(server, nullptr) << create_status_;
  ASSERT_EQ(server->status().iterations_size(), 3);
  EXPECT_FALSE(server->status().iterations(0).skipped());
  EXPECT_TRUE(server->status().iterations(1).skipped());
  EXPECT_TRUE(server->status().iterations(2).skipped());
  for (uint64_t d = 0; d < kPerHost; ++d) {
    EXPECT_EQ(Round1Inputs(sent, d), std::set<int32_t>{0}) << "device " << d;
    EXPECT_EQ(*ledgers_[0]->Releases(d, job.job_id), 1) << "device " << d;
  }
  for (uint64_t d = kPerHost; d < 2 * kPerHost; ++d) {
    EXPECT_EQ(Round1Inputs(sent, d), (std::set<int32_t>{0, 1, 2})) << "device " << d;
    EXPECT_EQ(*ledgers_[1]->Releases(d, job.job_id), 3) << "device " << d;
  }
  absl::StatusOr<double> spent = roles_[0]->EpsilonSpent();
  ASSERT_THAT(spent, IsOk());
  EXPECT_DOUBLE_EQ(*spent, one);
  EXPECT_DOUBLE_EQ(*roles_[1]->EpsilonSpent(), *dp::ComputeEpsilon(1.0, z, 3, 1e-5));
  EXPECT_LE(*roles_[1]->EpsilonSpent(), job.config.epsilon * (1 + 1e-9));
}

// Every device of host-a vanishes during round 1 of every iteration, at a
// phase boundary of its own draw: it is charged for exactly the round-1
// inputs it sent, and none of its unmasking shares leaves in round 1.
TEST_F(LflRoleTest, AVanishingDeviceIsChargedForWhatItSentAndNeverUnmasks) {
  net::LflJobConfig job = Job(4, /*active=*/false);
  job.config.omega = 0.5;  // up to half the devices may vanish
  configure_host = [](size_t h, device::LflRoleOptions& o, device::DeviceLedger::Budget&) {
    if (h == 0) o.dropout_round1 = 1.0;
  };
  Sent sent;
  std::unique_ptr<server::LflJob> server = Run(job, sent, /*require_active=*/false);
  ASSERT_NE(server, nullptr) << create_status_;
  ASSERT_EQ(server->stage(), server::LflJob::Stage::kFinished) << server->error();
  int64_t charged = 0;
  for (uint64_t d = 0; d < kPerHost; ++d) {
    const std::set<int32_t> inputs = Round1Inputs(sent, d);
    EXPECT_EQ(*ledgers_[0]->Releases(d, job.job_id), static_cast<int64_t>(inputs.size()))
        << "device " << d;
    charged += static_cast<int64_t>(inputs.size());
    for (const Message& m : sent.log) {
      if (m.device != d || m.round != 1) continue;
      EXPECT_NE(m.phase, v1::DEVICE_PHASE_UNMASKING)
          << "device " << d << " iteration " << m.iteration;
    }
  }
  // The seeded draws put some boundaries before the input and some after.
  EXPECT_GT(charged, 0);
  EXPECT_LT(charged, 4 * kPerHost);
  // Host-b's devices are charged for exactly the inputs they sent too, and
  // with omega = 0.5 the iterations survive host-a's departures.
  int completed = 0;
  for (const v1::LflIterationRecord& r : server->status().iterations()) completed += !r.skipped();
  EXPECT_GT(completed, 0);
  for (uint64_t d = kPerHost; d < 2 * kPerHost; ++d) {
    EXPECT_EQ(*ledgers_[1]->Releases(d, job.job_id),
              static_cast<int64_t>(Round1Inputs(sent, d).size()))
        << "device " << d;
    EXPECT_GE(Round1Inputs(sent, d).size(), static_cast<size_t>(completed)) << "device " << d;
  }
}

// Device ids 0 .. n - 1.
std::vector<secagg::DeviceId> Ids(uint64_t n) {
  std::vector<secagg::DeviceId> ids(n);
  std::iota(ids.begin(), ids.end(), secagg::DeviceId{0});
  return ids;
}

TEST(SecAggGuardTest, ChecksNRosterMinSurvivorsAndRound1Survivors) {
  device::SecAggExpectations e{100, 0.3, true, false};
  secagg::SessionConfig s;
  s.roster = Ids(100);
  s.min_survivors = 70;
  s.consistency_check = true;
  EXPECT_EQ(device::OwnMinSurvivors(e, 100), 70);
  EXPECT_EQ(device::SessionRefusal(e, 1, s, 0), "");
  s.min_survivors = 69;
  EXPECT_NE(device::SessionRefusal(e, 1, s, 0).find("at least ceil((1 - omega) * 100) = 70"),
            std::string::npos);
  s.min_survivors = 70;
  s.consistency_check = false;
  EXPECT_NE(device::SessionRefusal(e, 1, s, 0).find("require_active_secagg"), std::string::npos);
  EXPECT_EQ(device::SessionRefusal({100, 0.3, false, false}, 1, s, 0), "");
  s.consistency_check = true;
  s.roster = Ids(99);
  s.min_survivors = 70;
  EXPECT_NE(device::SessionRefusal(e, 1, s, 0).find("n = 100"), std::string::npos);
  // Round 2 over 80 of |U1| = 90: fine; |U1| = 69 or > n or roster > |U1|: refused.
  s.roster = Ids(80);
  s.min_survivors = 56;
  EXPECT_EQ(device::SessionRefusal(e, 2, s, 90), "");
  EXPECT_NE(device::SessionRefusal(e, 2, s, 69).find("|U1| = 69"), std::string::npos);
  EXPECT_NE(device::SessionRefusal(e, 2, s, 101), "");
  EXPECT_NE(device::SessionRefusal(e, 2, s, 79).find("more than |U1|"), std::string::npos);
  s.min_survivors = 55;
  EXPECT_NE(device::SessionRefusal(e, 2, s, 90), "");
  EXPECT_EQ(device::SurvivorRefusal(1, 70, 70), "");
  EXPECT_NE(device::SurvivorRefusal(1, 69, 70).find("no unmasking share is released"),
            std::string::npos);
}

// In a key session every round's roster is the setup's n devices; round 2's
// participants are the announced |U1|, and the survivor minimum is theirs.
TEST(SecAggGuardTest, KeySessionRound2CountsTheAnnouncedRound1Survivors) {
  device::SecAggExpectations e{100, 0.3, true, /*allow_key_session=*/true};
  secagg::SessionConfig s;
  s.roster = Ids(100);
  s.consistency_check = true;
  s.min_survivors = 63;  // ceil(0.7 * 90)
  // Only if the job's spec asked for a key session.
  EXPECT_NE(device::SessionRefusal({100, 0.3, true, false}, 2, s, 90, true).find("spec has none"),
            std::string::npos);
  EXPECT_EQ(device::RoundParticipants(2, s, 90, true), 90);
  EXPECT_EQ(device::RoundParticipants(2, s, 90, false), 100);
  EXPECT_EQ(device::RoundParticipants(1, s, 90, true), 100);
  EXPECT_EQ(device::SessionRefusal(e, 2, s, 90, true), "");
  // Without the session the same roster of 100 > |U1| = 90 is refused.
  EXPECT_NE(device::SessionRefusal(e, 2, s, 90, false).find("more than |U1|"), std::string::npos);
  s.min_survivors = 62;
  EXPECT_NE(device::SessionRefusal(e, 2, s, 90, true).find("ceil((1 - omega) * 90) = 63"),
            std::string::npos);
  s.min_survivors = 63;
  EXPECT_NE(device::SessionRefusal(e, 2, s, 69, true).find("|U1| = 69"), std::string::npos);
  s.roster = Ids(99);  // a session roster other than the job's n
  EXPECT_NE(device::SessionRefusal(e, 2, s, 90, true).find("n = 100"), std::string::npos);
}

}  // namespace
}  // namespace fedmf
