#include "tools/fedmf/party_commands.h"

#include <algorithm>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/cli/command_line.h"
#include "common/fmf/saved_model.h"
#include "common/fmf/wire/model_codec.h"
#include "common/net/client_context.h"
#include "common/net/credentials.h"
#include "fedmf/v1/federation.grpc.pb.h"
#include "nlohmann/json.hpp"
#include "tools/fedmf/operator_client.h"

namespace fedmf::cli {
namespace {

void PrintRecommendations(const ClientArgs& a, const std::string& job,
                          const std::vector<std::pair<std::string, double>>& items) {
  if (a.json) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& [item, score] : items) list.push_back({{"item", item}, {"score", score}});
    std::cout << nlohmann::json{{"user", a.user},
                                {"job_id", job},
                                {"include_rated", a.include_rated},
                                {"items", list}}
                     .dump()
              << "\n";
    return;
  }
  for (size_t i = 0; i < items.size(); ++i) {
    std::cout << absl::StrFormat("%2d. item %-10s predicted %.3f\n", i + 1, items[i].first,
                                 items[i].second);
  }
}

// --model DIR: no server, no party; the user's party is --model-party, or
// the only party whose model holds the user.
int RecommendOffline(const ClientArgs& a) {
  auto model = fmf::ReadSavedModel(a.model_dir);
  if (!model.ok()) return Report("fedmf recommend --model", DataError(model.status()));
  const fmf::SavedPartyModel* party = nullptr;
  std::vector<std::string> holders;
  for (const fmf::SavedPartyModel& p : model->parties) {
    if (!a.model_party.empty()) {
      if (p.name == a.model_party) party = &p;
      continue;
    }
    if (std::find(p.user_ids.begin(), p.user_ids.end(), a.user) != p.user_ids.end()) {
      holders.push_back(p.name);
      party = &p;
    }
  }
  if (!a.model_party.empty() && party == nullptr) {
    return Report("fedmf recommend --model", absl::NotFoundError(absl::StrCat(
                                                 "--model-party ", a.model_party,
                                                 ": not a party of ", a.model_dir, "/model.json")));
  }
  if (a.model_party.empty() && holders.size() > 1) {
    return Report("fedmf recommend --model",
                  absl::InvalidArgumentError(absl::StrCat(
                      "user '", a.user, "' is in the models of ", absl::StrJoin(holders, ", "),
                      ": choose one with --model-party")));
  }
  if (party == nullptr) {
    return Report("fedmf recommend --model",
                  absl::NotFoundError(
                      absl::StrCat("user '", a.user, "' is in no party's model in ", a.model_dir)));
  }
  auto items = fmf::RecommendFromModel(*party, a.user, a.top, a.include_rated);
  if (!items.ok()) return Report("fedmf recommend --model", items.status());
  PrintRecommendations(a, model->job, *items);
  return 0;
}

int Recommend(const ClientArgs& a) {
  if (a.model_dir.empty() == a.party.empty()) {
    return Report("fedmf recommend",
                  absl::InvalidArgumentError(
                      "give --party ADDR --party-name NAME (a running party) or --model "
                      "DIR (a saved model, offline)"));
  }
  if (!a.model_dir.empty()) return RecommendOffline(a);
  if (a.peer_name.empty()) {
    return Report("fedmf recommend", absl::InvalidArgumentError("--party needs --party-name NAME"));
  }
  auto ch = Dial(a, a.party, a.peer_name, pki::Role::kParty);
  if (!ch.ok()) return Report("fedmf recommend", ch.status());
  v1::RecommendRequest req;
  req.set_job_id(a.job_id);
  req.set_user(a.user);
  req.set_top(a.top);
  req.set_include_rated(a.include_rated);
  v1::RecommendResponse resp;
  auto ctx = net::DeadlineContext(kOperatorCallTimeout);
  auto s = v1::PartyAdmin::NewStub(*ch)->Recommend(ctx.get(), req, &resp);
  if (!s.ok()) return FailRpc("recommend", s, a, a.party, a.peer_name, pki::Role::kParty);
  std::vector<std::pair<std::string, double>> items;
  for (const v1::Recommendation& r : resp.items()) items.emplace_back(r.item(), r.score());
  PrintRecommendations(a, a.job_id, items);
  return 0;
}

// A party's own model, from its admin endpoint into a model directory
// (common/fmf/saved_model.h) that recommend --model reads offline.
int ExportModel(const ClientArgs& a) {
  auto ch = Dial(a, a.party, a.peer_name, pki::Role::kParty);
  if (!ch.ok()) return Report("fedmf export-model", ch.status());
  v1::ExportModelRequest req;
  req.set_job_id(a.job_id);
  v1::ExportModelResponse resp;
  auto ctx = net::DeadlineContext(kOperatorCallTimeout);
  auto s = v1::PartyAdmin::NewStub(*ch)->ExportModel(ctx.get(), req, &resp);
  if (!s.ok()) return FailRpc("export-model", s, a, a.party, a.peer_name, pki::Role::kParty);
  auto party = net::ModelFromProto(resp, a.peer_name);
  if (!party.ok()) return Report("fedmf export-model", party.status());
  const size_t users = party->user_ids.size(), items = party->item_ids.size();
  fmf::SavedModel model{resp.setting(), resp.job_id(), {std::move(*party)}};
  if (auto w = fmf::WriteSavedModel(a.out_dir, model); !w.ok()) {
    return Report("fedmf export-model", w);
  }
  if (a.json) {
    std::cout << nlohmann::json{{"job_id", resp.job_id()},
                                {"party", a.peer_name},
                                {"users", users},
                                {"items", items},
                                {"out", a.out_dir}}
                     .dump()
              << "\n";
  } else {
    std::cout << absl::StrFormat("job %s: %s's model (%d users, %d items) written to %s\n",
                                 resp.job_id(), a.peer_name, users, items, a.out_dir);
  }
  return 0;
}

int Ledger(const ClientArgs& a) {
  auto ch = Dial(a, a.party, a.peer_name, pki::Role::kParty);
  if (!ch.ok()) return Report("fedmf ledger", ch.status());
  v1::LedgerResponse resp;
  auto ctx = net::DeadlineContext(kOperatorCallTimeout);
  auto s = v1::PartyAdmin::NewStub(*ch)->Ledger(ctx.get(), v1::LedgerRequest(), &resp);
  if (!s.ok()) return FailRpc("ledger", s, a, a.party, a.peer_name, pki::Role::kParty);
  if (a.json) {
    nlohmann::json entries = nlohmann::json::array();
    for (const auto& e : resp.entries()) {
      entries.push_back({{"job_id", e.job_id()},
                         {"round", e.round()},
                         {"sample_rate", e.sample_rate()},
                         {"noise_multiplier", e.noise_multiplier()},
                         {"steps", e.steps()},
                         {"granularity", e.granularity()}});
    }
    nlohmann::json alignments = nlohmann::json::array();
    for (const auto& r : resp.alignments()) {
      alignments.push_back({{"job_id", r.job_id()},
                            {"started_unix", r.started_unix()},
                            {"partners", r.partners()},
                            {"own_size", r.own_size()},
                            {"partner_sizes", r.partner_sizes()},
                            {"shared", r.shared()},
                            {"outcome", r.outcome()}});
    }
    std::cout << nlohmann::json{{"max_epsilon", resp.max_epsilon()},
                                {"delta", resp.delta()},
                                {"epsilon_spent", resp.epsilon_spent()},
                                {"epsilon_per_rating", resp.epsilon_per_rating()},
                                {"epsilon_per_user", resp.epsilon_per_user()},
                                {"entries", entries},
                                {"alignments", alignments}}
                     .dump()
              << "\n";
    return 0;
  }
  // Per unit, never added: a per-rating and a per-user epsilon bound
  // different neighbours (docs/privacy.md, ledger).
  std::cout << absl::StrFormat(
      "epsilon spent per rating %.4f, per user %.4f, of %.4f each (delta %g), %d charges\n",
      resp.epsilon_per_rating(), resp.epsilon_per_user(), resp.max_epsilon(), resp.delta(),
      resp.entries_size());
  if (resp.entries_size() > 0) {
    std::cout << "  (per charge: the job, its round, the sampling rate q, the noise multiplier z, "
                 "the DP steps and the unit)\n";
  }
  // A job's size release (noise_plan.h CountReleaseRound) is charged once,
  // when the party accepts, under a round after the job's last (T + 1): one
  // step at q = 1.
  std::map<std::string, int32_t> last_round;
  for (const auto& e : resp.entries()) {
    int32_t& r = last_round[e.job_id()];
    r = std::max(r, e.round());
  }
  for (const auto& e : resp.entries()) {
    const bool size_release = e.sample_rate() == 1 && e.steps() == 1 &&
                              e.round() == last_round[e.job_id()] && e.round() > 0;
    std::cout << absl::StrFormat(
        "  %-20s round %4d  q=%g z=%.4f steps=%d per %s%s\n", Shown(e.job_id()), e.round(),
        e.sample_rate(), e.noise_multiplier(), e.steps(), e.granularity(),
        size_release ? "  (the size release: the noised count of this party's users, once per "
                       "job when it accepted)"
                     : "");
  }
  for (const auto& r : resp.alignments()) {
    std::cout << absl::StrFormat(
        "  alignment %-20s with %s: own %d ids, partners %s, shared %d, %s\n", Shown(r.job_id()),
        Shown(r.partners()), r.own_size(), r.partner_sizes().empty() ? "-" : r.partner_sizes(),
        r.shared(), r.outcome());
  }
  return 0;
}

}  // namespace

void RegisterPartyCommands(CLI::App& app, int* exit_code) {
  auto a = std::make_shared<ClientArgs>();
  CLI::App* rec = app.add_subcommand("recommend", "top-N items for a user, from a party's model");
  rec->add_option("--party", a->party, "the party's admin address host:port (or --model)");
  rec->add_option("--party-name", a->peer_name, "the party's certificate name");
  rec->add_option("--model", a->model_dir,
                  "offline: a saved model directory (fedmf train --save-model, fedmf "
                  "export-model) instead of a running party");
  rec->add_option("--model-party", a->model_party,
                  "with --model: the party whose model to use (default: the one holding --user)");
  rec->add_option("--user", a->user, "user id as in the party's ratings file")->required();
  rec->add_option("--top", a->top, "how many items")->capture_default_str();
  rec->add_option("--job", a->job_id, "job id (default: the party's last finished job)");
  rec->add_flag("--include-rated", a->include_rated,
                "also rank items the user already rated (left out by default)");
  rec->add_flag("--json", a->json, "print one JSON object {user, job_id, include_rated, items}");
  AddTlsFlags(rec, a.get());
  rec->callback([a, exit_code] { *exit_code = Recommend(*a); });

  CLI::App* exp = app.add_subcommand(
      "export-model", "a party's own final model of a job, into a directory for recommend --model");
  exp->add_option("--party", a->party, "the party's admin address host:port")->required();
  exp->add_option("--party-name", a->peer_name, "the party's certificate name")->required();
  exp->add_option("--job", a->job_id, "job id (default: the party's last finished job)");
  exp->add_option("--out", a->out_dir, "the model directory to write")->required();
  AddTlsFlags(exp, a.get());
  exp->add_flag("--json", a->json, "print one JSON object {job_id, party, users, items, out}");
  exp->callback([a, exit_code] { *exit_code = ExportModel(*a); });

  CLI::App* ledger = app.add_subcommand("ledger", "a party's privacy ledger");
  ledger->add_option("--party", a->party, "the party's admin address host:port")->required();
  ledger->add_option("--party-name", a->peer_name, "the party's certificate name")->required();
  ledger->add_flag("--json", a->json, "print one JSON object");
  AddTlsFlags(ledger, a.get());
  ledger->callback([a, exit_code] { *exit_code = Ledger(*a); });
}

}  // namespace fedmf::cli
