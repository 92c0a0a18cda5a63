#include "common/secagg/graph.h"

#include <algorithm>
#include <queue>
#include <set>
#include <vector>

#include "common/secagg/simulate.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

using ::fedmf::testing::IsOk;
using ::fedmf::testing::StatusIs;

namespace fedmf::secagg {
namespace {

SessionConfig Config(size_t n, GraphKind kind, int degree, uint64_t seed) {
  SessionConfig c;
  c.aggregation_id = 1;
  c.roster = SimulationRoster(n);
  c.graph = kind;
  c.degree = degree;
  c.graph_seed = seed;
  c.threshold = 2;
  c.min_survivors = 2;
  c.vector_length = 1;
  c.bits = 32;
  return c;
}

// Copies of a config share one roster (a simulation keeps a config per
// device: n private copies of n ids would be O(n^2)); a replaced roster is a
// new list and leaves the copies alone.
TEST(RosterTest, CopiesShareOneListAndReplacementIsLocal) {
  SessionConfig a;
  a.roster = SimulationRoster(1000);
  const SessionConfig b = a;
  EXPECT_EQ(&a.roster.ids(), &b.roster.ids());
  EXPECT_EQ(a.roster, b.roster);
  std::vector<DeviceId> fewer(a.roster.begin(), a.roster.end() - 1);
  a.roster = fewer;
  EXPECT_EQ(a.roster.size(), 999u);
  EXPECT_EQ(b.roster.size(), 1000u);
  EXPECT_FALSE(a.roster == b.roster);
  EXPECT_EQ(a.roster, fewer);
  EXPECT_EQ(Roster({3, 5, 8}), (std::vector<DeviceId>{3, 5, 8}));
}

TEST(GraphTest, ForEachNeighbourVisitsTheNeighbourIndicesInOrder) {
  for (const SessionConfig& c :
       {Config(9, GraphKind::kComplete, 0, 0), Config(40, GraphKind::kHarary, 6, 3)}) {
    ASSERT_OK_AND_ASSIGN(auto g, NeighbourhoodGraph::Create(c));
    for (size_t i = 0; i < g.size(); ++i) {
      std::vector<size_t> visited;
      g.ForEachNeighbour(i, [&](size_t j) { visited.push_back(j); });
      EXPECT_EQ(visited, g.NeighbourIndices(i)) << i;
      EXPECT_EQ(visited.size(), c.graph == GraphKind::kComplete ? 8u : 6u);
    }
  }
}

TEST(GraphTest, CompleteGraphIsEveryoneElse) {
  const SessionConfig c = Config(7, GraphKind::kComplete, 0, 0);
  ASSERT_OK_AND_ASSIGN(auto g, NeighbourhoodGraph::Create(c));
  for (size_t i = 0; i < 7; ++i) {
    const auto nb = g.NeighbourIndices(i);
    EXPECT_EQ(nb.size(), 6u);
    EXPECT_EQ(std::count(nb.begin(), nb.end(), i), 0);
    ASSERT_OK_AND_ASSIGN(auto ids, NeighbourhoodGraph::NeighboursOf(c, c.roster[i]));
    EXPECT_EQ(ids.size(), 6u);
  }
}

TEST(GraphTest, HararyIsRegularSymmetricConnectedAndAgreesWithDevices) {
  for (size_t n : {5u, 12u, 101u}) {
    for (int k : {2, 4}) {
      const SessionConfig c = Config(n, GraphKind::kHarary, k, 99 + n);
      ASSERT_OK_AND_ASSIGN(auto g, NeighbourhoodGraph::Create(c));
      for (size_t i = 0; i < n; ++i) {
        const auto nb = g.NeighbourIndices(i);
        ASSERT_EQ(nb.size(), static_cast<size_t>(k)) << n << " " << k;
        EXPECT_TRUE(std::is_sorted(nb.begin(), nb.end()));
        for (size_t j : nb) {
          EXPECT_NE(j, i);
          const auto back = g.NeighbourIndices(j);
          EXPECT_TRUE(std::binary_search(back.begin(), back.end(), i));  // symmetric
        }
        // What a device computes alone equals the server's view.
        ASSERT_OK_AND_ASSIGN(auto ids, NeighbourhoodGraph::NeighboursOf(c, c.roster[i]));
        std::vector<DeviceId> want;
        for (size_t j : nb) want.push_back(c.roster[j]);
        EXPECT_EQ(ids, want);
      }
      // Connected (BFS from 0).
      std::vector<char> seen(n, 0);
      std::queue<size_t> q;
      q.push(0);
      seen[0] = 1;
      while (!q.empty()) {
        const size_t i = q.front();
        q.pop();
        for (size_t j : g.NeighbourIndices(i)) {
          if (!seen[j]) {
            seen[j] = 1;
            q.push(j);
          }
        }
      }
      EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), static_cast<long>(n));
    }
  }
}

TEST(GraphTest, SeedDeterminesTheGraph) {
  auto a = NeighbourhoodGraph::Create(Config(50, GraphKind::kHarary, 6, 1));
  auto b = NeighbourhoodGraph::Create(Config(50, GraphKind::kHarary, 6, 1));
  auto c = NeighbourhoodGraph::Create(Config(50, GraphKind::kHarary, 6, 2));
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  bool differs = false;
  for (size_t i = 0; i < 50; ++i) {
    EXPECT_EQ(a->NeighbourIndices(i), b->NeighbourIndices(i));
    differs |= a->NeighbourIndices(i) != c->NeighbourIndices(i);
  }
  EXPECT_TRUE(differs);
  // Not the identity ring: neighbours are not simply adjacent roster entries.
  size_t adjacent = 0;
  for (size_t i = 0; i + 1 < 50; ++i) {
    const auto nb = a->NeighbourIndices(i);
    adjacent += std::binary_search(nb.begin(), nb.end(), i + 1);
  }
  EXPECT_LT(adjacent, 25u);
}

TEST(GraphTest, RejectsInvalidConfigs) {
  SessionConfig c = Config(10, GraphKind::kHarary, 3, 0);
  EXPECT_THAT(NeighbourhoodGraph::Create(c),
              StatusIs(absl::StatusCode::kInvalidArgument));  // odd degree
  c.degree = 10;
  EXPECT_THAT(NeighbourhoodGraph::Create(c),
              StatusIs(absl::StatusCode::kInvalidArgument));  // degree >= n
  c.degree = 4;
  c.threshold = 6;
  EXPECT_THAT(NeighbourhoodGraph::Create(c),
              StatusIs(absl::StatusCode::kInvalidArgument));  // t > k + 1
  c.threshold = 1;
  EXPECT_THAT(NeighbourhoodGraph::Create(c),
              StatusIs(absl::StatusCode::kInvalidArgument));  // t < 2
  c.threshold = 3;
  c.min_survivors = 2;
  EXPECT_THAT(NeighbourhoodGraph::Create(c),
              StatusIs(absl::StatusCode::kInvalidArgument));  // m < t
  c.min_survivors = 3;
  EXPECT_THAT(NeighbourhoodGraph::Create(c), IsOk());
  std::vector<DeviceId> ids = c.roster;
  ids[3] = ids[2];
  c.roster = ids;
  EXPECT_THAT(NeighbourhoodGraph::Create(c),
              StatusIs(absl::StatusCode::kInvalidArgument));  // duplicate id
  c = Config(10, GraphKind::kComplete, 0, 0);
  ids = c.roster;
  ids.back() = kServerId;
  c.roster = ids;
  EXPECT_THAT(NeighbourhoodGraph::Create(c), StatusIs(absl::StatusCode::kInvalidArgument));
  c = Config(10, GraphKind::kComplete, 0, 0);
  c.bits = 65;
  EXPECT_THAT(NeighbourhoodGraph::Create(c), StatusIs(absl::StatusCode::kInvalidArgument));
  c.bits = 32;
  c.vector_length = 0;
  EXPECT_THAT(NeighbourhoodGraph::Create(c), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_FALSE(
      NeighbourhoodGraph::NeighboursOf(Config(10, GraphKind::kComplete, 0, 0), 12345).ok());
}

}  // namespace
}  // namespace fedmf::secagg
