#include "tests/unit/hua/world.h"

#include <utility>

#include "common/base/status_macros.h"
#include "common/hua/streams.h"

namespace fedmf::hua::testing {

std::unique_ptr<World> MakeWorld(Scenario scenario, uint64_t seed,
                                 const std::vector<std::vector<RatedItem>>& ratings,
                                 int32_t num_items, int32_t dim, double epsilon, bool paper_noise) {
  auto w = std::make_unique<World>();
  w->params.scenario = scenario;
  w->params.paper_noise = paper_noise;
  w->params.dim = dim;
  w->params.epsilon = epsilon;
  w->root = std::make_unique<random::Csprng>(random::Csprng::FromSeed(seed));
  w->ratings = ratings;
  const bool masked = scenario != Scenario::kUntrusted;
  if (masked) {
    w->codec.emplace(*ZpCodec::Create(w->params.zp));
    w->tp.emplace(*ThirdParty::Create(scenario, dim, ThirdPartyStream(*w->root)));
  }
  const ZpCodec* codec = masked ? &*w->codec : nullptr;
  w->server.emplace(
      *Recommender::Create(w->params, num_items, w->range, codec, RecommenderStream(*w->root)));
  for (size_t i = 0; i < ratings.size(); ++i) {
    const auto id = static_cast<int32_t>(i);
    w->users.push_back(
        *User::Create(id, ratings[i], w->params, w->range, codec, UserStream(*w->root, id)));
    if (!w->server->Register(w->users.back().Hello()).ok()) return nullptr;
  }
  return w;
}

std::vector<std::vector<RatedItem>> SmallRatings() {
  return {{{0, 5}, {1, 3}, {2, 4}}, {{0, 4}, {2, 2}, {3, 1}},         {{1, 5}, {2, 5}, {3, 3}},
          {{0, 1}, {1, 2}, {3, 4}}, {{0, 3}, {1, 4}, {2, 1}, {3, 5}}, {{1, 1}, {2, 3}}};
}

absl::Status RunInit(World& w, const std::vector<int32_t>& online) {
  ASSIGN_OR_RETURN(auto round, w.server->StartInit(online));
  RETURN_IF_ERROR(w.tp->Begin(round.plan));
  for (const InitRequest& req : round.requests) {
    ASSIGN_OR_RETURN(auto report, w.users[req.user].HandleInit(req));
    RETURN_IF_ERROR(w.tp->Accept(report));
  }
  ASSIGN_OR_RETURN(auto forward, w.tp->Flush());
  return w.server->FinishInit(forward);
}

absl::StatusOr<Round> RunMaskedPass(World& w, const Round& round, const std::set<int32_t>& drop,
                                    std::vector<MaskedReport>* seen) {
  RETURN_IF_ERROR(w.tp->Begin(round.plan));
  for (const IterationRequest& req : round.requests) {
    if (drop.count(req.user)) continue;
    ASSIGN_OR_RETURN(auto report, w.users[req.user].HandleMasked(req));
    if (seen != nullptr) seen->push_back(report);
    RETURN_IF_ERROR(w.tp->Accept(report));
  }
  ASSIGN_OR_RETURN(auto forward, w.tp->Flush());
  return w.server->AcceptForward(forward);
}

absl::Status RunMaskedIteration(World& w, const std::vector<int32_t>& participants,
                                const std::set<int32_t>& drop) {
  auto round = w.server->StartIteration(participants);
  if (!round.ok()) return round.status();
  std::set<int32_t> dropping = drop;
  while (!round->requests.empty()) {
    round = RunMaskedPass(w, *round, dropping);
    if (!round.ok()) return round.status();
    dropping.clear();  // they vanished in pass 0; later passes do not ask them
  }
  return w.server->FinishIteration().status();
}

}  // namespace fedmf::hua::testing
