// The server is the adversary, inside secure aggregation (issue #13): the
// hostile double (hostile_server.h) runs one active secure aggregation with
// a real fedmf-device host of 30 devices, phase by phase. Its honest
// messages come from the server state machine of common/secagg (the one
// fedmf-server runs); an attack edits them before the host fetches them:
//
//   1. substituted keys: in device 0's key broadcast, device 5's X25519 keys
//      are replaced by the server's own, keeping 5's signature or re-signing
//      under a signing key the server made up (it cannot make the host's
//      credential for it): device 0 aborts before sharing anything, so no
//      share of its secrets exists and its input is never masked, sent or
//      unmasked; the other 29 finish the aggregation without it;
//   2. dropout equivocation: at the consistency check, devices 0..14 are
//      told U3 is everybody and devices 15..29 that device 14 dropped out
//      (the first half would then reveal 14's self-mask share b and the
//      second its key share s_sk, i.e. unmask x_14): every device finds a
//      neighbour's signature on another U3 and aborts at the consistency
//      check; no unmasking share of anybody leaves the host.
//
// The control (no attack) runs the same script to a completed aggregation
// of all 30 inputs, so "nothing was sent" above is not vacuous.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <mutex>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/crypto/ed25519.h"
#include "common/data/loaders.h"
#include "common/lfl/lfl_simulator.h"
#include "common/lfl/secagg_sum.h"
#include "common/lfl/wire/lfl_job_codec.h"
#include "common/lfl/wire/secagg_codec.h"
#include "common/mf/embeddings.h"
#include "common/random/csprng.h"
#include "common/secagg/server_state_machine.h"
#include "common/secagg/signing.h"
#include "tests/integration/cluster_test_util.h"
#include "tests/integration/hostile_server.h"
#include "tests/testing/status_matchers.h"
#include "tools/cluster/local_cluster.h"
#include "tools/fedmf/job_flags.h"
#include "tools/fedmf/lfl_demo.h"

using ::fedmf::testing::IsOk;

namespace fedmf::it {
namespace {

constexpr uint64_t kAggregation = 0x5ECA66;
constexpr uint64_t kDevices = 30;
// Complete graph: every device has 29 neighbours, so with itself 30 holders
// of its shares; a signing device needs 2t > 30, and t <= min_survivors =
// ceil((1 - omega) n) = 21 (omega 0.3).
constexpr int kThreshold = 21;
constexpr uint64_t kVictim = 0;        // substituted keys: whose view is edited
constexpr uint64_t kSubstituted = 5;   // ... and whose keys in it
constexpr uint64_t kEquivocated = 14;  // equivocation: "dropped" for half of them

enum class Attack { kNone, kSubstitutedKeys, kSubstitutedKeysResigned, kEquivocation };

// What the host sent in the aggregation.
struct Sent {
  std::map<v1::DevicePhase, std::set<uint64_t>> by_phase;  // devices that answered
  std::multiset<uint64_t> revealed_owners;                 // owner of every b / s_sk share revealed
  bool completed = false;                                  // the server could sum the inputs
  std::vector<uint64_t> included;                          // ... of these devices (U3)
};

class HostileSecAggTest : public ClusterTest {
 protected:
  void TearDown() override {
    ClusterTest::TearDown();  // stops the host first
    double_.reset();
  }

  void StartHost() {
    cluster::ClusterOptions o;
    o.parties = 0;
    o.lfl_hosts = 1;
    auto cluster = cluster::LocalCluster::Create(o);
    ASSERT_THAT(cluster, IsOk());
    cluster_ = std::move(*cluster);
    HostileServerOptions ho;
    ho.cert_dir = cluster_->cert_dir();
    auto d = HostileServer::Start(ho);
    ASSERT_THAT(d, IsOk());
    double_ = std::move(*d);
    cluster_->set_dial_server(double_->address());
    auto ds = data::LoadDataSpec(kDeviceData);
    ASSERT_THAT(ds, IsOk());
    dataset_ = std::move(*ds);
    ASSERT_EQ(dataset_.num_users, static_cast<int64_t>(kDevices));
    cluster::LflHostArgs a;
    a.data_spec = kDeviceData;
    a.first = 0;
    a.count = dataset_.num_users;
    a.threads = 2;
    ASSERT_THAT(cluster_->StartLflHost(0, a), IsOk());
  }

  // An active LFL job the host's default policy accepts (epsilon 1).
  net::LflJobConfig Job(const std::string& id) {
    cli::JobFlags f;
    f.rounds = 2;
    f.dim = 4;
    f.epsilon = "1";
    f.omega = 0.3;
    f.pretrain_epochs = 1;
    f.finetune_epochs = 1;
    auto job = cli::LflJobFromFlags(f, dataset_, /*hosts=*/1, /*phase_deadline_seconds=*/10);
    EXPECT_THAT(job, IsOk());
    net::LflJobConfig j = *job;
    j.job_id = id;
    EXPECT_TRUE(j.active_secagg);
    return j;
  }

  // The session an honest server would open for round 1 (bits: the codec
  // both sides derive from the job, lfl::ChooseLflCodecs).
  secagg::SessionConfig Session(const net::LflJobConfig& job) {
    double z = 0, eps = 0;
    absl::StatusOr<double> sigma = lfl::CalibrateSigmaV(job.config, &z, &eps);
    EXPECT_THAT(sigma, IsOk());
    absl::StatusOr<lfl::LflCodecs> codecs = lfl::ChooseLflCodecs(
        {job.num_devices, job.config.omega, *sigma}, dataset_.range.max, job.config.secagg_bits);
    EXPECT_THAT(codecs, IsOk());
    secagg::SessionConfig s;
    s.aggregation_id = kAggregation;
    std::vector<secagg::DeviceId> roster(kDevices);
    std::iota(roster.begin(), roster.end(), secagg::DeviceId{0});
    s.roster = std::move(roster);
    s.graph = secagg::GraphKind::kComplete;
    s.threshold = kThreshold;
    s.min_survivors = kThreshold;
    s.vector_length = static_cast<size_t>(job.num_items) * static_cast<size_t>(job.config.dim);
    s.bits = codecs->round1.bits();
    s.consistency_check = true;
    return s;
  }

  v1::DeviceTask Task(const net::LflJobConfig& job, v1::DeviceTaskKind kind) {
    v1::DeviceTask t;
    t.set_kind(kind);
    t.set_job_id(job.job_id);
    *t.mutable_spec() = net::SpecFromLflJob(job);
    for (uint64_t d = 0; d < kDevices; ++d) t.add_devices(d);
    t.set_num_devices(job.num_devices);
    return t;
  }

  v1::DeviceTask PhaseTask(const net::LflJobConfig& job, const secagg::SessionConfig& s,
                           v1::DevicePhase phase) {
    v1::DeviceTask t = Task(job, v1::DEVICE_TASK_KIND_PHASE);
    t.set_iteration(0);
    t.set_round(1);
    t.set_phase(phase);
    t.set_aggregation_id(s.aggregation_id);
    *t.mutable_session() = net::SessionToProto(s);
    t.set_max_batch_bytes(1 << 20);
    return t;
  }

  // The messages the host submitted in `phase` of the aggregation.
  std::vector<v1::DeviceMessage> Submitted(const std::string& job_id, v1::DevicePhase phase) {
    std::vector<v1::DeviceMessage> out;
    for (const v1::DeviceBatch& b : double_->DeviceBatches(job_id)) {
      if (b.header().aggregation_id() != kAggregation || b.header().phase() != phase) continue;
      out.insert(out.end(), b.messages().begin(), b.messages().end());
    }
    return out;
  }

  // Serves `inbox` to the host for `phase`, pushes the phase task, and waits
  // until the host handled it (answered or stayed silent).
  void RunPhase(const net::LflJobConfig& job, const secagg::SessionConfig& s, v1::DevicePhase phase,
                std::vector<v1::InboxMessage> inbox) {
    {
      std::lock_guard lock(mu_);
      inbox_[phase] = std::move(inbox);
    }
    double_->PushDeviceTask(cluster::LocalCluster::LflHostName(0), PhaseTask(job, s, phase));
    ASSERT_TRUE(double_->WaitHandled(cluster::LocalCluster::LflHostName(0), kWait).ok())
        << TailOf(cluster_->LflHostLog(0), 20);
  }

  // Feeds what the host sent in `phase` to the honest server and closes the
  // phase: the messages opening the next one, by recipient.
  std::vector<v1::InboxMessage> Close(secagg::ServerStateMachine& server, const std::string& job_id,
                                      v1::DevicePhase phase) {
    for (const v1::DeviceMessage& m : Submitted(job_id, phase)) {
      absl::StatusOr<secagg::ClientMessage> c = net::ClientMessageFromProto(m, server.config());
      EXPECT_THAT(c, IsOk());
      if (c.ok()) {
        EXPECT_THAT(server.Receive(*c), IsOk()) << "device " << m.device();
      }
    }
    absl::StatusOr<std::vector<secagg::ServerMessage>> next = server.ClosePhase();
    EXPECT_THAT(next, IsOk());
    std::vector<v1::InboxMessage> out;
    if (next.ok()) {
      for (const secagg::ServerMessage& m : *next) out.push_back(net::ServerMessageToProto(m));
    }
    return out;
  }

  // The server's own keys for `device` in `victim`'s broadcast.
  static void SubstituteKeys(std::vector<v1::InboxMessage>& inbox, bool resign) {
    random::Csprng adversary = random::Csprng::FromSeed(77);
    for (v1::InboxMessage& m : inbox) {
      if (m.device() != kVictim) continue;
      for (v1::NeighbourKeys& nk : *m.mutable_keys()->mutable_neighbours()) {
        if (nk.device() != kSubstituted) continue;
        std::string c(32, '\0'), s(32, '\0');
        adversary.FillBytes(reinterpret_cast<uint8_t*>(c.data()), c.size());
        adversary.FillBytes(reinterpret_cast<uint8_t*>(s.data()), s.size());
        nk.set_c_pk(c);
        nk.set_s_pk(s);
        if (!resign) continue;  // 5's own signature, now over other keys
        absl::StatusOr<crypto::Ed25519PrivateKey> key =
            crypto::Ed25519PrivateKey::Generate(adversary);
        ASSERT_THAT(key, IsOk());
        const std::vector<uint8_t> vk(key->public_key().begin(), key->public_key().end());
        const std::vector<uint8_t> cv(c.begin(), c.end()), sv(s.begin(), s.end());
        absl::StatusOr<std::vector<uint8_t>> sig =
            key->Sign(secagg::AdvertisementStatement(kAggregation, kSubstituted, cv, sv, vk));
        ASSERT_THAT(sig, IsOk());
        nk.set_signing_key(std::string(vk.begin(), vk.end()));
        nk.set_signature(std::string(sig->begin(), sig->end()));
        // The credential stays 5's: the host certified 5's real key, not this one.
      }
    }
  }

  // Runs one aggregation of a fresh job under `attack`; what the host sent.
  Sent Run(const std::string& job_id, Attack attack) {
    Sent sent;
    const net::LflJobConfig job = Job(job_id);
    const secagg::SessionConfig session = Session(job);
    double_->SetInboxScript([this](const v1::BatchHeader& h, const std::vector<v1::DeviceBatch>&) {
      std::lock_guard lock(mu_);
      v1::InboxBatch b;
      *b.mutable_header() = h;
      if (h.aggregation_id() == kAggregation) {
        for (const v1::InboxMessage& m : inbox_[h.phase()]) *b.add_messages() = m;
      }
      return std::vector<v1::InboxBatch>{b};
    });
    random::Csprng rng = random::Csprng::FromSeed(3);
    double_->SetModel(job_id, 0, mf::RandomEmbeddings(job.num_items, job.config.dim, 0.5, 5, rng));
    double_->PushDeviceTask(cluster::LocalCluster::LflHostName(0),
                            Task(job, v1::DEVICE_TASK_KIND_PRETRAIN));
    auto report = double_->WaitDeviceReport(job_id, 1, kWait);
    EXPECT_THAT(report, IsOk()) << report.status() << TailOf(cluster_->LflHostLog(0), 20);
    if (!report.ok()) return sent;

    absl::StatusOr<secagg::ServerStateMachine> server =
        secagg::ServerStateMachine::Create(session, random::Csprng::FromSeed(9));
    EXPECT_THAT(server, IsOk());
    if (!server.ok()) return sent;
    RunPhase(job, session, v1::DEVICE_PHASE_ADVERTISE_KEYS, {});
    std::vector<v1::InboxMessage> keys = Close(*server, job_id, v1::DEVICE_PHASE_ADVERTISE_KEYS);
    if (attack == Attack::kSubstitutedKeys || attack == Attack::kSubstitutedKeysResigned) {
      SubstituteKeys(keys, attack == Attack::kSubstitutedKeysResigned);
    }
    RunPhase(job, session, v1::DEVICE_PHASE_SHARE_KEYS, std::move(keys));
    RunPhase(job, session, v1::DEVICE_PHASE_MASKED_INPUT,
             Close(*server, job_id, v1::DEVICE_PHASE_SHARE_KEYS));
    std::vector<v1::InboxMessage> check = Close(*server, job_id, v1::DEVICE_PHASE_MASKED_INPUT);
    if (attack == Attack::kEquivocation) {
      for (v1::InboxMessage& m : check) {
        if (m.device() <= kEquivocated) continue;
        auto* u3 = m.mutable_consistency_check()->mutable_survivors();
        u3->erase(std::remove(u3->begin(), u3->end(), kEquivocated), u3->end());
      }
    }
    RunPhase(job, session, v1::DEVICE_PHASE_CONSISTENCY_CHECK, check);
    std::vector<v1::InboxMessage> unmask;
    if (attack != Attack::kEquivocation) {
      unmask = Close(*server, job_id, v1::DEVICE_PHASE_CONSISTENCY_CHECK);
    } else {
      // What an equivocating server can send: each device its own view of U3
      // and the real signatures (over two different sets).
      std::vector<v1::DeviceSignature> sigs;
      for (const v1::DeviceMessage& m : Submitted(job_id, v1::DEVICE_PHASE_CONSISTENCY_CHECK)) {
        v1::DeviceSignature s;
        s.set_device(m.device());
        s.set_signature(m.consistency_signature().signature());
        sigs.push_back(s);
      }
      for (const v1::InboxMessage& c : check) {
        v1::InboxMessage m;
        m.set_device(c.device());
        v1::UnmaskingList* u = m.mutable_unmasking();
        for (uint64_t d : c.consistency_check().survivors()) {
          if (d != c.device()) u->add_survivors(d);
        }
        for (uint64_t d = 0; d < kDevices; ++d) {
          if (std::find(c.consistency_check().survivors().begin(),
                        c.consistency_check().survivors().end(),
                        d) == c.consistency_check().survivors().end()) {
            u->add_dropped(d);
          }
        }
        // Only signers in the recipient's own view (anything else is
        // refused on sight): the other half's signatures are over the
        // other set, and there are too few of its own half's to reach t.
        for (const v1::DeviceSignature& s : sigs) {
          const auto& view = c.consistency_check().survivors();
          if (s.device() != c.device() &&
              std::find(view.begin(), view.end(), s.device()) != view.end()) {
            *u->add_signatures() = s;
          }
        }
        unmask.push_back(std::move(m));
      }
    }
    RunPhase(job, session, v1::DEVICE_PHASE_UNMASKING, std::move(unmask));
    for (v1::DevicePhase p : {v1::DEVICE_PHASE_ADVERTISE_KEYS, v1::DEVICE_PHASE_SHARE_KEYS,
                              v1::DEVICE_PHASE_MASKED_INPUT, v1::DEVICE_PHASE_CONSISTENCY_CHECK,
                              v1::DEVICE_PHASE_UNMASKING}) {
      for (const v1::DeviceMessage& m : Submitted(job_id, p)) {
        sent.by_phase[p].insert(m.device());
        for (const auto& r : m.unmasking().b_shares()) sent.revealed_owners.insert(r.owner());
        for (const auto& r : m.unmasking().s_sk_shares()) sent.revealed_owners.insert(r.owner());
      }
    }
    if (attack != Attack::kEquivocation) {
      for (const v1::DeviceMessage& m : Submitted(job_id, v1::DEVICE_PHASE_UNMASKING)) {
        absl::StatusOr<secagg::ClientMessage> c = net::ClientMessageFromProto(m, server->config());
        if (c.ok()) (void)server->Receive(*c);  // a rejection only drops that response
      }
      if (server->ClosePhase().ok() && server->state() == secagg::ServerState::kCompleted) {
        sent.completed = true;
        sent.included = server->Result()->included;
      }
    }
    return sent;
  }

  std::set<uint64_t> AllBut(std::set<uint64_t> excluded) {
    std::set<uint64_t> out;
    for (uint64_t d = 0; d < kDevices; ++d) {
      if (excluded.count(d) == 0) out.insert(d);
    }
    return out;
  }

  std::unique_ptr<HostileServer> double_;
  data::Dataset dataset_;
  std::mutex mu_;
  std::map<v1::DevicePhase, std::vector<v1::InboxMessage>> inbox_;  // guarded by mu_
};

TEST_F(HostileSecAggTest, HonestScriptCompletesWithEveryInput) {
  ASSERT_NO_FATAL_FAILURE(StartHost());
  const Sent sent = Run("secagg-control", Attack::kNone);
  for (v1::DevicePhase p :
       {v1::DEVICE_PHASE_ADVERTISE_KEYS, v1::DEVICE_PHASE_SHARE_KEYS, v1::DEVICE_PHASE_MASKED_INPUT,
        v1::DEVICE_PHASE_CONSISTENCY_CHECK, v1::DEVICE_PHASE_UNMASKING}) {
    EXPECT_EQ(sent.by_phase.count(p) ? sent.by_phase.at(p) : std::set<uint64_t>{}, AllBut({}))
        << v1::DevicePhase_Name(p);
  }
  // Each of the 30 reveals its own b share and the b shares of the 29 others.
  EXPECT_EQ(sent.revealed_owners.size(), kDevices * kDevices);
  EXPECT_TRUE(sent.completed);
  EXPECT_EQ(sent.included.size(), kDevices);
}

TEST_F(HostileSecAggTest, SubstitutedKeysAbortTheVictimBeforeItSharesAnything) {
  ASSERT_NO_FATAL_FAILURE(StartHost());
  for (Attack attack : {Attack::kSubstitutedKeys, Attack::kSubstitutedKeysResigned}) {
    const bool resigned = attack == Attack::kSubstitutedKeysResigned;
    SCOPED_TRACE(resigned ? "re-signed under the server's key" : "device 5's signature kept");
    const std::string job_id = resigned ? "secagg-keys-resigned" : "secagg-keys";
    const Sent sent = Run(job_id, attack);
    EXPECT_EQ(sent.by_phase.at(v1::DEVICE_PHASE_ADVERTISE_KEYS), AllBut({}));
    // The victim sends nothing after its keys: no encrypted shares of its
    // secrets exist, and its (noisy) input is never masked or sent.
    EXPECT_EQ(sent.by_phase.at(v1::DEVICE_PHASE_SHARE_KEYS), AllBut({kVictim}));
    EXPECT_EQ(sent.by_phase.at(v1::DEVICE_PHASE_MASKED_INPUT), AllBut({kVictim}));
    EXPECT_EQ(sent.by_phase.at(v1::DEVICE_PHASE_CONSISTENCY_CHECK), AllBut({kVictim}));
    EXPECT_EQ(sent.by_phase.at(v1::DEVICE_PHASE_UNMASKING), AllBut({kVictim}));
    EXPECT_EQ(sent.revealed_owners.count(kVictim), 0u);
    // The others finish without it: the server sums the 29 others only.
    EXPECT_TRUE(sent.completed);
    EXPECT_EQ(sent.included.size(), kDevices - 1);
    EXPECT_EQ(std::count(sent.included.begin(), sent.included.end(), kVictim), 0);
    const std::string log = cluster_->LflHostLog(0);
    EXPECT_NE(log.find(absl::StrCat("device ", kVictim, ": left aggregation ", kAggregation)),
              std::string::npos)
        << TailOf(log, 20);
  }
}

TEST_F(HostileSecAggTest, DropoutEquivocationAbortsAtTheConsistencyCheck) {
  ASSERT_NO_FATAL_FAILURE(StartHost());
  const Sent sent = Run("secagg-equivocation", Attack::kEquivocation);
  // Everybody masked and signed its own view of U3 ...
  EXPECT_EQ(sent.by_phase.at(v1::DEVICE_PHASE_MASKED_INPUT), AllBut({}));
  EXPECT_EQ(sent.by_phase.at(v1::DEVICE_PHASE_CONSISTENCY_CHECK), AllBut({}));
  // ... and nobody reveals a share: neither 14's b (to the half that saw it
  // survive) nor its s_sk (to the half told it dropped), nor anybody else's.
  EXPECT_EQ(sent.by_phase.count(v1::DEVICE_PHASE_UNMASKING), 0u);
  EXPECT_TRUE(sent.revealed_owners.empty());
  const std::string log = cluster_->LflHostLog(0);
  EXPECT_NE(log.find("did not sign the survivor set this device signed"), std::string::npos)
      << TailOf(log, 30);
}

}  // namespace
}  // namespace fedmf::it
