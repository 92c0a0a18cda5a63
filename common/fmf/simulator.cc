#include "common/fmf/simulator.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/base/status_macros.h"
#include "common/data/loaders.h"
#include "common/dp/composition.h"
#include "common/dp/ledger.h"
#include "common/fmf/party_session.h"
#include "common/fmf/server_session.h"
#include "common/fmf/stats_federation.h"
#include "common/random/csprng.h"

namespace fedmf::fmf {

absl::StatusOr<data::Federation> BuildFederation(const JobConfig& config, data::Dataset dataset,
                                                 const FederationOptions& options) {
  data::SplitOptions split{options.test_fraction, options.split_seed};
  switch (config.split) {
    case SplitKind::kNone: return data::PartitionCentral(std::move(dataset), split);
    case SplitKind::kHorizontal: return data::PartitionHfl(dataset, options.parties, split);
    case SplitKind::kVertical:
      if (options.vfl_split == "genre") {
        if (options.item_genres == nullptr) {
          return absl::InvalidArgumentError(
              "VFL genre split needs item genres (MovieLens 100K u.item next to u.data)");
        }
        return data::PartitionVflByGenre(dataset, *options.item_genres, split);
      }
      if (options.vfl_split != "random") {
        return absl::InvalidArgumentError(
            absl::StrCat("unknown VFL split '", options.vfl_split, "': use random or genre"));
      }
      return data::PartitionVflRandom(dataset, options.parties, split);
  }
  return absl::InternalError("unreachable");
}

absl::StatusOr<data::Federation> BuildFederationFromSpec(const JobConfig& config,
                                                         data::Dataset dataset,
                                                         const std::string& spec,
                                                         FederationOptions options) {
  std::vector<std::vector<int>> genres;
  if (config.split == SplitKind::kVertical && options.vfl_split == "genre") {
    const std::string prefix = "movielens:";
    if (spec.rfind(prefix, 0) != 0) {
      return absl::InvalidArgumentError("the genre split needs movielens:PATH data (ML-100K)");
    }
    std::filesystem::path p = spec.substr(prefix.size());
    std::filesystem::path dir = std::filesystem::is_directory(p) ? p : p.parent_path();
    ASSIGN_OR_RETURN(auto loaded, data::LoadMovieLensGenres((dir / "u.item").string(), dataset));
    genres = std::move(loaded);
    options.item_genres = &genres;
  }
  return BuildFederation(config, std::move(dataset), options);
}

absl::StatusOr<SimulationResult> Simulate(const JobConfig& config, data::Federation federation,
                                          const ProgressFn& progress, int32_t eval_every) {
  std::vector<double> party_epsilon(federation.parties.size(), config.epsilon);
  return SimulateWithPartyEpsilons(config, std::move(federation), party_epsilon, progress,
                                   eval_every);
}

namespace {

// The simulated parties: each admits the job against its own range and seed
// stream, with its own ledger holding exactly its budget, as fedmf-party does.
struct Parties {
  // What the results report of each party's data, taken before it moved
  // into the session (which holds out validation ratings from its copy).
  struct Size {
    int32_t party = 0, users = 0, items = 0;
    int64_t train_ratings = 0;
  };
  std::vector<Size> sizes;
  std::vector<std::unique_ptr<dp::PrivacyLedger>> ledgers;
  std::vector<std::unique_ptr<PartySession>> sessions;
  std::vector<NoisePlan> plans;
};

absl::StatusOr<Parties> AdmitParties(const JobConfig& config, data::Federation& federation,
                                     const std::vector<double>& party_epsilon) {
  const size_t s = federation.parties.size();
  if (party_epsilon.size() != s) {
    return absl::InvalidArgumentError(
        absl::StrCat("party_epsilon has ", party_epsilon.size(), " entries for ", s, " parties"));
  }
  Parties parties;
  for (size_t k = 0; k < s; ++k) {
    JobConfig own = config;
    own.epsilon = party_epsilon[k];
    ASSIGN_OR_RETURN(AdmittedJob admitted,
                     AdmittedJob::Admit(own,
                                        {federation.parties[k].range, config.seed,
                                         absl::StrCat("party-", k), config.local_threads},
                                        nullptr));
    parties.plans.push_back(admitted.plan());
    const data::PartyData& data = federation.parties[k];
    parties.sizes.push_back(
        {data.party, data.num_users(), data.num_items(), static_cast<int64_t>(data.train.size())});
    parties.ledgers.push_back(std::make_unique<dp::PrivacyLedger>(
        admitted.plan().private_training ? own.epsilon * (1 + 1e-9)
                                         : std::numeric_limits<double>::infinity(),
        config.delta));
    ASSIGN_OR_RETURN(std::unique_ptr<PartySession> session,
                     PartySession::Create(std::move(admitted), std::move(federation.parties[k]),
                                          federation.num_users, federation.num_items,
                                          parties.ledgers.back().get()));
    parties.sessions.push_back(std::move(session));
  }
  return parties;
}

// Stages 1-3 of a federated setting, every party in turn, the server session
// averaging; progress (with test MSE every eval_every rounds) after each.
// Returns the number of rounds run.
absl::StatusOr<int32_t> RunFederation(const JobConfig& config, Parties& parties,
                                      random::Csprng& root, const ProgressFn& progress,
                                      int32_t eval_every, const std::function<double()>& seconds) {
  std::vector<std::unique_ptr<PartySession>>& sessions = parties.sessions;
  std::vector<std::unique_ptr<dp::PrivacyLedger>>& ledgers = parties.ledgers;
  const size_t s = sessions.size();
  // The weights as fedmf-server averages by them: declared, then capped.
  std::vector<double> declared;
  for (size_t k = 0; k < s; ++k) declared.push_back(sessions[k]->weight());
  const std::vector<double> weights = CappedWeights(declared, std::vector<bool>(s, true));
  std::vector<PartyInfo> infos;
  for (size_t k = 0; k < s; ++k) infos.push_back({absl::StrCat("party-", k), weights[k]});
  random::Csprng server_rng = root.Fork("server");
  ASSIGN_OR_RETURN(auto server,
                   ServerSession::Create(config, sessions[0]->shared_rows(), infos, server_rng));
  for (auto& session : sessions) {
    RETURN_IF_ERROR(session->Pretrain(server.shared()));
  }
  while (server.phase() == ServerSession::Phase::kRoundOpen) {
    const int32_t round = server.round();
    for (size_t k = 0; k < s; ++k) {
      ASSIGN_OR_RETURN(auto update, sessions[k]->RunRound(round, server.shared()));
      RETURN_IF_ERROR(server.SubmitUpdate(static_cast<int32_t>(k), round, update));
    }
    RETURN_IF_ERROR(server.CloseRound());
    if (progress) {
      RoundProgress p;
      p.round = round + 1;
      p.total_rounds = server.total_rounds();
      p.seconds = seconds();
      for (auto& ledger : ledgers) {
        auto e = ledger->SpentEpsilon();
        p.party_epsilon.push_back(e.ok() ? *e : std::numeric_limits<double>::infinity());
        p.epsilon = std::max(p.epsilon, p.party_epsilon.back());
      }
      if (eval_every > 0 && ((round + 1) % eval_every == 0 || round + 1 == p.total_rounds)) {
        std::vector<mf::ErrorMetrics> parts;
        for (auto& session : sessions) {
          parts.push_back(session->EvaluateTestWith(server.shared()));
          p.party_test_mse.push_back(parts.back().mse);
        }
        p.test_mse = mf::Combine(parts).mse;
      }
      progress(p);
    }
  }
  for (auto& session : sessions) {
    RETURN_IF_ERROR(session->Finish(server.shared()));
  }
  return server.total_rounds();
}

// Each party's metrics, model (moved out of its session) and spend; the
// job's epsilon (the max over parties, or VFL per user the parties' RDP
// curves composed) and the pooled test, train and validation errors.
absl::Status CollectResults(const JobConfig& config, Parties& parties, SimulationResult& result) {
  const std::vector<std::unique_ptr<PartySession>>& sessions = parties.sessions;
  const std::vector<std::unique_ptr<dp::PrivacyLedger>>& ledgers = parties.ledgers;
  const std::vector<NoisePlan>& party_plans = parties.plans;
  const size_t s = sessions.size();
  std::vector<mf::ErrorMetrics> tests, trains, validations;
  std::vector<mf::RankingMetrics> rankings, popularities, by_prediction;
  for (size_t k = 0; k < s; ++k) {
    PartyResult r;
    r.party = parties.sizes[k].party;
    r.users = parties.sizes[k].users;
    r.items = parties.sizes[k].items;
    r.train_ratings = parties.sizes[k].train_ratings;
    r.test = sessions[k]->EvaluateTest();
    r.train = sessions[k]->EvaluateTrain();
    r.validation = sessions[k]->EvaluateValidation();
    if (r.validation.count > 0) validations.push_back(r.validation);
    r.ranking_rule = sessions[k]->ranking_rule();
    if (config.measure_ranking) {
      r.ranking = sessions[k]->EvaluateTestRanking();
      r.popularity = sessions[k]->EvaluateTestPopularity();
      r.ranking_by_prediction = sessions[k]->EvaluateTestRanking(mf::RankingRule{});
      rankings.push_back(r.ranking);
      popularities.push_back(r.popularity);
      by_prediction.push_back(r.ranking_by_prediction);
    }
    r.steps = sessions[k]->steps_charged();
    r.learning_rate = sessions[k]->StepLearningRate();
    std::tie(r.user_embeddings, r.item_embeddings) = sessions[k]->TakeEmbeddings();
    r.rating_offset = sessions[k]->rating_offset();
    if (party_plans[k].private_training) {
      ASSIGN_OR_RETURN(auto e, ledgers[k]->SpentEpsilon());
      r.epsilon = e;
    } else {
      r.epsilon = std::numeric_limits<double>::infinity();
    }
    result.epsilon = std::max(result.epsilon, r.epsilon);
    tests.push_back(r.test);
    trains.push_back(r.train);
    result.parties.push_back(std::move(r));  // its embeddings are not copied twice
  }
  const bool all_private = std::all_of(party_plans.begin(), party_plans.end(),
                                       [](const NoisePlan& p) { return p.private_training; });
  if (all_private && config.setting == Setting::kVfl && config.granularity == Granularity::kUser) {
    std::vector<dp::GaussianSchedule> schedules;
    for (size_t k = 0; k < s; ++k) {
      schedules.push_back(
          {party_plans[k].sample_rate, party_plans[k].noise_multiplier, result.parties[k].steps});
      schedules.push_back({1.0, party_plans[k].count_noise_multiplier, 1});  // its size release
    }
    ASSIGN_OR_RETURN(auto global, dp::ComposeGaussianSchedules(schedules, config.delta));
    result.epsilon_per_user_global = global;
  }
  result.test = mf::Combine(tests);
  result.train = mf::Combine(trains);
  if (!validations.empty()) result.validation = mf::Combine(validations);
  result.ranking = mf::CombineRanking(rankings);
  result.popularity = mf::CombineRanking(popularities);
  result.ranking_by_prediction = mf::CombineRanking(by_prediction);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<SimulationResult> SimulateWithPartyEpsilons(const JobConfig& config,
                                                           data::Federation federation,
                                                           const std::vector<double>& party_epsilon,
                                                           const ProgressFn& progress,
                                                           int32_t eval_every) {
  if (config.algorithm == Algorithm::kStatistics &&
      (config.setting == Setting::kHfl || config.setting == Setting::kVfl)) {
    // No SGD rounds: releases of statistics (stats_federation.h), one budget
    // for the federation's parties.
    for (double e : party_epsilon) {
      if (e != config.epsilon) {
        return absl::InvalidArgumentError(
            "algorithm stats runs every party at the job's epsilon (its noise is shared)");
      }
    }
    return SimulateStatistics(config, std::move(federation));
  }
  const auto start = std::chrono::steady_clock::now();
  auto seconds = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  ASSIGN_OR_RETURN(NoisePlan plan, PlanNoise(config));
  if (federation.parties.empty()) return absl::InvalidArgumentError("federation has no parties");
  random::Csprng root = random::Csprng::FromOptionalSeed(config.seed);
  ASSIGN_OR_RETURN(Parties parties, AdmitParties(config, federation, party_epsilon));
  SimulationResult result;
  result.config = config;
  result.plan = plan;
  const bool federated = config.setting == Setting::kVfl || config.setting == Setting::kHfl ||
                         config.setting == Setting::kHflSynSgd;
  if (!federated) {
    for (auto& session : parties.sessions) RETURN_IF_ERROR(session->TrainAlone());
  } else {
    ASSIGN_OR_RETURN(result.rounds,
                     RunFederation(config, parties, root, progress, eval_every, seconds));
  }
  RETURN_IF_ERROR(CollectResults(config, parties, result));
  result.seconds = seconds();
  return result;
}

}  // namespace fedmf::fmf
