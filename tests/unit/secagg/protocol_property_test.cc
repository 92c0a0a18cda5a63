// Property tests over random sizes, inputs and dropout sets at every phase
// boundary, for the complete graph and SecAgg+: whenever the run completes
// the decoded sum is exactly Σ_{i∈U3} x_i mod 2^bits, and it aborts exactly
// when the documented rule says so (config.h).
#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include "common/crypto/fixed_point.h"
#include "common/random/csprng.h"
#include "common/secagg/graph.h"
#include "common/secagg/parameters.h"
#include "common/secagg/simulate.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

using ::fedmf::testing::IsOk;

namespace fedmf::secagg {
namespace {

// The abort rule, computed independently of the server from the plan.
// Returns true iff the run must complete. U-sets follow the dropout plan;
// no device misbehaves here.
bool ShouldComplete(const SessionConfig& config, const DropoutPlan& plan) {
  const auto& roster = config.roster;
  std::set<DeviceId> gone0(plan.before_advertise.begin(), plan.before_advertise.end());
  auto minus = [&](std::set<DeviceId> s, const std::vector<DeviceId>& v) {
    for (DeviceId d : v) s.erase(d);
    return s;
  };
  std::set<DeviceId> u1;
  for (DeviceId d : roster) {
    if (!gone0.count(d)) u1.insert(d);
  }
  const size_t m = static_cast<size_t>(config.min_survivors);
  const size_t t = static_cast<size_t>(config.threshold);
  auto graph = *NeighbourhoodGraph::Create(config);
  auto idx = [&](DeviceId d) { return *graph.IndexOf(d); };
  auto neigh = [&](DeviceId d) {
    std::vector<DeviceId> out;
    for (size_t j : graph.NeighbourIndices(idx(d))) out.push_back(roster[j]);
    return out;
  };
  // Devices with < t-1 live neighbours are excluded (iteratively) when U1
  // is large enough to go on at all.
  if (u1.size() >= m) {
    bool changed = true;
    while (changed) {
      changed = false;
      for (auto it = u1.begin(); it != u1.end();) {
        size_t deg = 0;
        for (DeviceId j : neigh(*it)) deg += u1.count(j);
        if (deg + 1 < t) {
          it = u1.erase(it);
          changed = true;
        } else {
          ++it;
        }
      }
    }
  }
  if (u1.size() < m) return false;
  // Devices that passed U1 but planned "before_advertise" cannot exist.
  const std::set<DeviceId> u2 = minus(u1, plan.after_advertise);
  if (u2.size() < m) return false;
  const std::set<DeviceId> u3 = minus(u2, plan.after_share_keys);
  if (u3.size() < m) return false;
  const std::set<DeviceId> u4 = minus(minus(u3, plan.after_masked_input), plan.during_unmasking);
  if (u4.size() < m) return false;
  // Every secret the sum needs must have t shares among U4: holders of i are
  // {i} ∪ (N(i) ∩ U1); b_i for i ∈ U3, s_sk_j for j ∈ U2 \ U3.
  for (DeviceId i : u2) {
    size_t shares = u4.count(i);
    for (DeviceId j : neigh(i)) shares += u1.count(j) && u4.count(j);
    if (shares < t) return false;
  }
  return true;
}

DropoutPlan RandomPlan(const std::vector<DeviceId>& roster, double p, random::Csprng& rng) {
  DropoutPlan plan;
  std::vector<DeviceId>* lists[] = {&plan.before_advertise, &plan.after_advertise,
                                    &plan.after_share_keys, &plan.after_masked_input,
                                    &plan.during_unmasking};
  for (DeviceId d : roster) {
    if (rng.Bernoulli(p)) lists[rng.UniformInt(5)]->push_back(d);
  }
  return plan;
}

void CheckRun(const SimulationSpec& spec, const char* label) {
  ASSERT_OK_AND_ASSIGN(auto r, Simulate(spec));
  const bool complete = ShouldComplete(r.config, spec.dropouts);
  ASSERT_EQ(r.server_state == ServerState::kCompleted, complete)
      << label << " seed " << spec.seed << " n=" << spec.num_devices
      << " abort_reason=" << r.abort_reason;
  if (complete) {
    EXPECT_EQ(r.sum, r.expected_sum) << label << " seed " << spec.seed;
    EXPECT_EQ(r.included, r.survivors[2]);
    EXPECT_TRUE(r.rejections.empty()) << r.rejections.front().reason;
  } else {
    EXPECT_EQ(r.server_state, ServerState::kAborted);
    EXPECT_TRUE(r.sum.empty());
  }
}

TEST(ProtocolPropertyTest, CompleteGraphSumIsExactUnderRandomDropouts) {
  random::Csprng rng = random::Csprng::FromSeed(101);
  for (int trial = 0; trial < 40; ++trial) {
    SimulationSpec spec;
    spec.num_devices = 3 + rng.UniformInt(14);
    spec.vector_length = 1 + rng.UniformInt(300);
    spec.bits = 1 + static_cast<int>(rng.UniformInt(64));
    spec.graph = GraphKind::kComplete;
    const int n = static_cast<int>(spec.num_devices);
    const int t = 2 + static_cast<int>(rng.UniformInt(static_cast<uint64_t>(n - 1)));
    spec.parameters = GraphParameters{GraphKind::kComplete, 0, t, t};
    spec.seed = 5000 + static_cast<uint64_t>(trial);
    spec.dropouts = RandomPlan(SimulationRoster(spec.num_devices), 0.25, rng);
    CheckRun(spec, "complete");
  }
}

TEST(ProtocolPropertyTest, SecAggPlusSumIsExactUnderRandomDropouts) {
  random::Csprng rng = random::Csprng::FromSeed(202);
  for (int trial = 0; trial < 40; ++trial) {
    SimulationSpec spec;
    spec.num_devices = 8 + rng.UniformInt(40);
    spec.vector_length = 1 + rng.UniformInt(200);
    spec.bits = 1 + static_cast<int>(rng.UniformInt(64));
    const int n = static_cast<int>(spec.num_devices);
    int k =
        2 * (1 + static_cast<int>(rng.UniformInt(static_cast<uint64_t>(std::min(6, (n - 1) / 2)))));
    const int t = 2 + static_cast<int>(rng.UniformInt(static_cast<uint64_t>(k)));  // <= k+1
    const int m = t + static_cast<int>(rng.UniformInt(static_cast<uint64_t>(n - t + 1)));
    spec.parameters = GraphParameters{GraphKind::kHarary, k, t, m};
    spec.seed = 9000 + static_cast<uint64_t>(trial);
    spec.dropouts = RandomPlan(SimulationRoster(spec.num_devices), 0.2, rng);
    CheckRun(spec, "secagg+");
  }
}

TEST(ProtocolPropertyTest, ChosenSecAggPlusParametersSurviveTheirDesignDropout) {
  // n = 300 with the helper's (k, t, m) for δ = 0.1: drop 10% spread over
  // the phases; must complete with the exact sum.
  random::Csprng rng = random::Csprng::FromSeed(303);
  for (int trial = 0; trial < 3; ++trial) {
    SimulationSpec spec;
    spec.num_devices = 300;
    spec.vector_length = 64;
    spec.bits = 32;
    spec.requirements.dropout_rate = 0.1;
    spec.seed = 77 + static_cast<uint64_t>(trial);
    std::vector<DeviceId> roster = SimulationRoster(300);
    for (size_t i = roster.size(); i > 1; --i) std::swap(roster[i - 1], roster[rng.UniformInt(i)]);
    for (size_t i = 0; i < 30; ++i) {
      std::vector<DeviceId>* lists[] = {
          &spec.dropouts.before_advertise, &spec.dropouts.after_advertise,
          &spec.dropouts.after_share_keys, &spec.dropouts.after_masked_input,
          &spec.dropouts.during_unmasking};
      lists[i % 5]->push_back(roster[i]);
    }
    ASSERT_OK_AND_ASSIGN(auto r, Simulate(spec));
    ASSERT_EQ(r.config.graph, GraphKind::kHarary);
    ASSERT_EQ(r.server_state, ServerState::kCompleted) << r.abort_reason;
    EXPECT_EQ(r.sum, r.expected_sum);
    EXPECT_EQ(r.included.size(), 300u - 18u);  // 3 of every 5 lists leave before U3
  }
}

// Exactly at the threshold: m survivors complete, m - 1 abort, at each of
// the four phase boundaries.
TEST(ProtocolPropertyTest, AbortsExactlyWhenFewerThanMinSurvivorsRemain) {
  for (GraphKind graph : {GraphKind::kComplete, GraphKind::kHarary}) {
    for (int stage = 0; stage < 4; ++stage) {
      for (int extra : {0, 1}) {
        SimulationSpec spec;
        spec.num_devices = 12;
        spec.vector_length = 10;
        spec.bits = 20;
        spec.seed = 400 + static_cast<uint64_t>(stage * 2 + extra);
        spec.parameters = graph == GraphKind::kComplete
                              ? GraphParameters{GraphKind::kComplete, 0, 8, 8}
                              : GraphParameters{GraphKind::kHarary, 10, 3, 8};
        const std::vector<DeviceId> roster = SimulationRoster(12);
        // Leave 8 - extra... i.e. drop 4 (m survive) or 5 (m-1 survive).
        std::vector<DeviceId> drop(roster.begin(), roster.begin() + 4 + extra);
        std::vector<DeviceId>* lists[] = {
            &spec.dropouts.before_advertise, &spec.dropouts.after_advertise,
            &spec.dropouts.after_share_keys, &spec.dropouts.during_unmasking};
        *lists[stage] = drop;
        ASSERT_OK_AND_ASSIGN(auto r, Simulate(spec));
        if (extra == 0) {
          ASSERT_EQ(r.server_state, ServerState::kCompleted)
              << "stage " << stage << ": " << r.abort_reason;
          EXPECT_EQ(r.sum, r.expected_sum);
        } else {
          EXPECT_EQ(r.server_state, ServerState::kAborted) << "stage " << stage;
          EXPECT_EQ(r.abort_reason.code(), absl::StatusCode::kAborted);
          // Every device still around heard about it — except in unmasking,
          // where the survivors have already answered and are done.
          const ClientState want = stage == 3 ? ClientState::kCompleted : ClientState::kAborted;
          for (const auto& [id, st] : r.client_states) {
            if (std::find(drop.begin(), drop.end(), id) == drop.end()) {
              EXPECT_EQ(st, want) << id;
            }
          }
        }
      }
    }
  }
}

TEST(ProtocolPropertyTest, SecAggPlusAbortsWhenOneSecretLacksTShares) {
  // Harary k=4, t=5 = k+1: a device needs ALL its holders. Dropping one of
  // device 0's neighbours during unmasking leaves b_0 with 4 < 5 shares
  // although U4 is far above m.
  SimulationSpec spec;
  spec.num_devices = 20;
  spec.vector_length = 5;
  spec.seed = 11;
  spec.parameters = GraphParameters{GraphKind::kHarary, 4, 5, 10};
  ASSERT_OK_AND_ASSIGN(auto probe, Simulate(spec));
  ASSERT_EQ(probe.server_state, ServerState::kCompleted);
  const auto neighbours = *NeighbourhoodGraph::NeighboursOf(probe.config, probe.config.roster[0]);
  spec.dropouts.during_unmasking = {neighbours.front()};
  ASSERT_OK_AND_ASSIGN(auto r, Simulate(spec));
  EXPECT_EQ(r.server_state, ServerState::kAborted);
  EXPECT_NE(std::string(r.abort_reason.message()).find("shares"), std::string::npos)
      << r.abort_reason;
  EXPECT_FALSE(ShouldComplete(r.config, spec.dropouts));
}

TEST(ProtocolPropertyTest, ThreadsDoNotChangeTheOutcome) {
  SimulationSpec spec;
  spec.num_devices = 60;
  // Long enough that the server's mask stripping splits the sum among its
  // threads (at least 2 x 4 x 2048 words), and not a multiple of the split.
  spec.vector_length = 20001;
  spec.seed = 12;
  spec.dropouts.after_share_keys = {SimulationRoster(60)[3]};
  spec.dropouts.after_masked_input = {SimulationRoster(60)[7]};
  spec.record_masked_inputs = true;
  auto one = Simulate(spec);
  spec.num_threads = 2;
  auto two = Simulate(spec);
  ASSERT_TRUE(one.ok() && two.ok());
  ASSERT_EQ(one->server_state, ServerState::kCompleted);
  EXPECT_EQ(one->sum, two->sum);
  EXPECT_EQ(one->sum, one->expected_sum);
  EXPECT_EQ(two->sum, two->expected_sum);
  EXPECT_EQ(one->masked_inputs, two->masked_inputs);
  EXPECT_EQ(one->masked_inputs.size(), 59u);  // all but the one gone before masking
  EXPECT_EQ(one->included, two->included);
  EXPECT_EQ(one->upload_bytes, two->upload_bytes);
  EXPECT_EQ(one->download_bytes, two->download_bytes);
}

// The clear-text check sum is the simulation's, not the protocol's: turning
// it off leaves the protocol's sum as it was and expected_sum empty.
TEST(ProtocolPropertyTest, TheExpectedSumIsOptional) {
  SimulationSpec spec;
  spec.num_devices = 30;
  spec.vector_length = 50;
  spec.seed = 13;
  spec.dropouts.after_share_keys = {SimulationRoster(30)[4]};
  auto with = Simulate(spec);
  spec.compute_expected_sum = false;
  auto without = Simulate(spec);
  ASSERT_TRUE(with.ok() && without.ok());
  ASSERT_EQ(without->server_state, ServerState::kCompleted);
  EXPECT_EQ(with->expected_sum.size(), 50u);
  EXPECT_EQ(without->sum, with->expected_sum);
  EXPECT_TRUE(without->expected_sum.empty());
}

TEST(ProtocolPropertyTest, MasksAreFreshPerAggregation) {
  // Same devices, same inputs, two aggregations (different seeds hence ids
  // and keys): every device's masked vector differs.
  SimulationSpec spec;
  spec.num_devices = 10;
  spec.vector_length = 32;
  spec.record_masked_inputs = true;
  spec.input = [](size_t, DeviceId) { return std::vector<uint64_t>(32, 5); };
  spec.seed = 1;
  auto a = Simulate(spec);
  spec.seed = 2;
  auto b = Simulate(spec);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_NE(a->config.aggregation_id, b->config.aggregation_id);
  for (const auto& [id, y] : a->masked_inputs) {
    EXPECT_NE(y, b->masked_inputs.at(id)) << id;
  }
  EXPECT_EQ(a->sum, b->sum);
}

// Real-valued inputs through the fixed-point codec, as the LFL rounds use
// it: the decoded aggregate equals the sum of the encoded inputs exactly.
TEST(ProtocolPropertyTest, FixedPointSumDecodesExactly) {
  constexpr size_t kDevices = 40, kLen = 500;
  auto codec = crypto::FixedPointCodec::Create(32, 16, 4.0, kDevices);
  ASSERT_THAT(codec, IsOk());
  const auto real = [](size_t index, size_t k) {
    return 4.0 * std::sin(static_cast<double>(index * 131 + k * 7));
  };
  SimulationSpec spec;
  spec.num_devices = kDevices;
  spec.vector_length = kLen;
  spec.bits = codec->bits();
  spec.seed = 21;
  spec.requirements.dropout_rate = 0.2;
  spec.dropouts.after_share_keys = {SimulationRoster(kDevices)[5]};
  spec.input = [&](size_t index, DeviceId) {
    std::vector<double> x(kLen);
    for (size_t k = 0; k < kLen; ++k) x[k] = real(index, k);
    return *codec->EncodeVector(x);
  };
  ASSERT_OK_AND_ASSIGN(auto r, Simulate(spec));
  ASSERT_EQ(r.server_state, ServerState::kCompleted) << r.abort_reason;
  for (size_t k = 0; k < kLen; ++k) {
    int64_t want = 0;
    for (size_t i = 0; i < kDevices; ++i) {
      if (i != 5) want += codec->DecodeSumToInteger(*codec->Encode(real(i, k)));
    }
    ASSERT_EQ(codec->DecodeSumToInteger(r.sum[k]), want) << k;
  }
}

}  // namespace
}  // namespace fedmf::secagg
