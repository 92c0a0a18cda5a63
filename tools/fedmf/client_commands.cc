#include "tools/fedmf/client_commands.h"

#include <algorithm>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "common/base/peer_text.h"
#include "common/base/status_macros.h"
#include "common/cli/command_line.h"
#include "common/config/yaml_reader.h"
#include "common/data/catalogue.h"
#include "common/fmf/saved_model.h"
#include "common/net/client_context.h"
#include "common/net/credentials.h"
#include "common/net/job_codec.h"
#include "common/net/job_view.h"
#include "common/net/model_codec.h"
#include "common/net/tls_diagnosis.h"
#include "fedmf/v1/federation.grpc.pb.h"
#include "tools/fedmf/accounting_json.h"
#include "tools/fedmf/cli_util.h"
#include "tools/fedmf/hua_job_spec.h"
#include "tools/fedmf/job_progress.h"
#include "tools/fedmf/lfl_job_spec.h"

namespace fedmf::cli {
namespace {

struct ClientArgs {
  std::string server;
  std::string party;
  std::string peer_name;
  std::string cert_dir = "certs";
  std::string name = "operator";
  bool insecure = false;
  std::string spec_path;
  std::string job_id;
  std::string user;
  int32_t top = 10;
  bool json = false;
  bool include_rated = false;
  std::string model_dir;        // recommend --model: offline, from a saved model
  std::string model_party;      // recommend --model-party: which party of it
  std::string out_dir;          // export-model --out
  double interval_seconds = 1;  // job watch --interval
};

void AddTlsFlags(CLI::App* cmd, ClientArgs* a) {
  cmd->add_option("--cert-dir", a->cert_dir, "directory with ca.crt and NAME.crt/.key")
      ->capture_default_str();
  cmd->add_option("--name", a->name, "this operator's certificate name")->capture_default_str();
  cmd->add_flag("--insecure", a->insecure, "plaintext (only against --insecure daemons)");
}

// Every operator call: the server answers from memory or its store.
constexpr absl::Duration kOperatorCallTimeout = absl::Seconds(30);

absl::StatusOr<std::shared_ptr<grpc::Channel>> Dial(const ClientArgs& a, const std::string& addr,
                                                    const std::string& peer_name, pki::Role role) {
  return net::MakeChannel(addr, net::TlsConfig{a.insecure, a.cert_dir, a.name},
                          net::ExpectedPeer{peer_name, role});
}

int Fail(const std::string& what, const absl::Status& s) {
  std::cerr << "fedmf " << what << ": " << s.message() << "\n";
  return ExitCodeFor(s);
}

// A failed RPC to `addr`: the error, and when the connection itself failed,
// its TLS cause (wrong peer name, another CA, an expired or refused
// certificate) found with a plain handshake — gRPC alone says only
// "failed to connect" or "Deadline Exceeded".
int FailRpc(const std::string& what, const absl::Status& s, const ClientArgs& a,
            const std::string& addr, const std::string& peer_name, pki::Role role) {
  const int code = Fail(what, s);
  const std::string cause = net::DiagnoseRpcFailure(
      s, addr, net::TlsConfig{a.insecure, a.cert_dir, a.name},
      net::ExpectedPeer{peer_name, role,
                        role == pki::Role::kServer ? "--server-name" : "--party-name"},
      absl::Seconds(5));
  if (!cause.empty()) std::cerr << "fedmf " << what << ": cause: " << cause << "\n";
  return code;
}

int FailRpc(const std::string& what, const grpc::Status& rpc, const ClientArgs& a,
            const std::string& addr, const std::string& peer_name, pki::Role role) {
  return FailRpc(what, net::FromGrpc(rpc), a, addr, peer_name, role);
}

std::string ServerPeer(const ClientArgs& a) { return a.peer_name.empty() ? "server" : a.peer_name; }

int Submit(const ClientArgs& a) {
  auto spec = LoadJobSpecFile(a.spec_path);
  if (!spec.ok()) return Fail("job submit", DataError(spec.status()));
  auto ch = Dial(a, a.server, ServerPeer(a), pki::Role::kServer);
  if (!ch.ok()) return Fail("job submit", ch.status());
  v1::SubmitJobRequest req;
  *req.mutable_spec() = *spec;
  v1::SubmitJobResponse resp;
  auto stub = v1::Operator::NewStub(*ch);
  // A flood of other callers can fill the server's threads for a moment.
  auto s = net::RetryThreadQuotaRefusals([&] {
    auto ctx = net::DeadlineContext(kOperatorCallTimeout);
    return stub->SubmitJob(ctx.get(), req, &resp);
  });
  if (!s.ok()) return FailRpc("job submit", s, a, a.server, ServerPeer(a), pki::Role::kServer);
  if (a.json) {
    std::cout << nlohmann::json{{"job_id", resp.job_id()}}.dump() << "\n";
  } else {
    std::cout << "submitted job " << resp.job_id() << "\n";
  }
  return 0;
}

using net::JobWord;
using net::PartyWord;

std::string Duration(double seconds) {
  if (seconds < 90) return absl::StrFormat("%.1f s", seconds);
  if (seconds < 5400) return absl::StrFormat("%.1f min", seconds / 60);
  return absl::StrFormat("%.1f h", seconds / 3600);
}

// Text the server relays from peers (errors that quote refusals, names,
// ids), printed with control characters escaped: a party's refusal once
// erased the operator's lines, printed a fake "finished" and wrote the
// clipboard (OSC 52). JSON output gets the same, so that it is valid UTF-8.
std::string Shown(const std::string& s) { return base::EscapePeerText(s, 8192); }

std::string ProgressText(const v1::JobStatus& st) {
  const Progress p = ProgressOf(st);
  std::string out = absl::StrFormat("rounds %d/%d", p.done, p.total);
  if (st.rounds_size() > 0) absl::StrAppend(&out, ", ", Duration(p.seconds), " in rounds");
  if (p.eta_seconds) absl::StrAppend(&out, ", ETA ", Duration(*p.eta_seconds));
  return out;
}

absl::StatusOr<v1::JobStatus> FetchStatus(v1::Operator::Stub& stub, const std::string& job_id) {
  v1::GetJobRequest req;
  req.set_job_id(job_id);
  v1::JobStatus st;
  auto ctx = net::DeadlineContext(kOperatorCallTimeout);
  RETURN_IF_ERROR(net::FromGrpc(stub.GetJob(ctx.get(), req, &st)));
  return st;
}

int Status(const ClientArgs& a) {
  auto ch = Dial(a, a.server, ServerPeer(a), pki::Role::kServer);
  if (!ch.ok()) return Fail("job status", ch.status());
  auto fetched = FetchStatus(*v1::Operator::NewStub(*ch), a.job_id);
  if (!fetched.ok()) {
    return FailRpc("job status", fetched.status(), a, a.server, ServerPeer(a), pki::Role::kServer);
  }
  const v1::JobStatus& st = *fetched;
  if (a.json) {
    nlohmann::json parties = nlohmann::json::array();
    for (const auto& p : st.parties()) {
      parties.push_back({{"name", Shown(p.name())},
                         {"status", PartyWord(st, p)},
                         {"accepted", p.accepted()},
                         {"refusal", Shown(p.refusal())},
                         {"epsilon", p.job_epsilon()},
                         {"ledger_epsilon", p.epsilon_spent()},
                         {"test_mse", p.test_mse()},
                         {"connected", p.connected()},
                         {"bytes_up", p.bytes_up()},
                         {"bytes_down", p.bytes_down()}});
    }
    const Progress progress = ProgressOf(st);
    nlohmann::json history = nlohmann::json::array();
    for (const v1::RoundRecord& r : st.rounds()) history.push_back(RoundJson(r));
    nlohmann::json out{{"job_id", Shown(st.spec().job_id())},
                       {"state", v1::JobState_Name(st.state())},
                       {"status", JobWord(st)},
                       {"round", st.round()},
                       {"rounds_completed", progress.done},
                       {"rounds_total", progress.total},
                       {"seconds_in_rounds", progress.seconds},
                       {"eta_seconds", progress.eta_seconds ? nlohmann::json(*progress.eta_seconds)
                                                            : nlohmann::json(nullptr)},
                       {"error", Shown(st.error())},
                       {"parties", parties},
                       {"history", history}};
    // A cross-silo job's accounting, from its spec: the plan every party
    // recomputes from the job it admitted (fmf::PlanNoise), so a reader can
    // recompute the parties' epsilon (issue #54). LFL and Hua have their own.
    if (auto config = net::JobConfigFromSpec(st.spec()); config.ok()) {
      if (auto plan = fmf::PlanNoise(*config); plan.ok()) {
        AddFmfAccounting(*config, *plan, st.parties_size(), out);
      }
    }
    if (st.has_hua()) {  // Hua S3: per-iteration records and the hosts' test error
      const v1::HuaStatus& h = st.hua();
      nlohmann::json iterations = nlohmann::json::array();
      for (const auto& r : h.iterations()) {
        iterations.push_back({{"iteration", r.iteration()},
                              {"users", r.users()},
                              {"items_updated", r.items_updated()},
                              {"passes", r.passes()},
                              {"dropped_users", r.dropped_users()}});
      }
      // Every user's epsilon as the server counts it (the valid variant;
      // docs/privacy.md, section hua), and the largest.
      nlohmann::json users = nlohmann::json::array();
      for (const auto& u : h.users()) {
        users.push_back(
            {{"user", u.user()}, {"releases", u.releases()}, {"epsilon", JsonNumber(u.epsilon())}});
      }
      out["hua"] = {{"registered_users", h.registered_users()},
                    {"init_rounds", h.init_rounds()},
                    {"iterations", iterations},
                    {"test_count", h.test_count()},
                    {"test_mse", JsonNumber(h.test_mse())},
                    {"test_mae", JsonNumber(h.test_mae())},
                    {"epsilon", JsonNumber(h.epsilon())},
                    {"users", users}};
    }
    std::cout << out.dump() << "\n";
    return 0;
  }
  std::cout << absl::StrFormat("job %s: %s, %s%s\n", Shown(st.spec().job_id()), JobWord(st),
                               ProgressText(st),
                               st.error().empty() ? "" : " — " + Shown(st.error()));
  if (st.has_hua()) {
    std::cout << absl::StrFormat("  %d users, largest epsilon so far %.4f (per user: --json)\n",
                                 st.hua().registered_users(), st.hua().epsilon());
  }
  for (const auto& p : st.parties()) {
    std::cout << absl::StrFormat("  %-16s epsilon %.4f (ledger %.4f)  test MSE %s  %-12s  %s\n",
                                 Shown(p.name()), p.job_epsilon(), p.epsilon_spent(),
                                 p.test_mse() >= 0 ? absl::StrFormat("%.4f", p.test_mse()) : "-",
                                 p.connected() ? "connected" : "disconnected", PartyWord(st, p));
  }
  return 0;
}

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
  if (!model.ok()) return Fail("recommend --model", DataError(model.status()));
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
    return Fail("recommend --model",
                absl::NotFoundError(absl::StrCat("--model-party ", a.model_party,
                                                 ": not a party of ", a.model_dir, "/model.json")));
  }
  if (a.model_party.empty() && holders.size() > 1) {
    return Fail("recommend --model",
                absl::InvalidArgumentError(absl::StrCat("user '", a.user, "' is in the models of ",
                                                        absl::StrJoin(holders, ", "),
                                                        ": choose one with --model-party")));
  }
  if (party == nullptr) {
    return Fail("recommend --model",
                absl::NotFoundError(
                    absl::StrCat("user '", a.user, "' is in no party's model in ", a.model_dir)));
  }
  auto items = fmf::RecommendFromModel(*party, a.user, a.top, a.include_rated);
  if (!items.ok()) return Fail("recommend --model", items.status());
  PrintRecommendations(a, model->job, *items);
  return 0;
}

int Recommend(const ClientArgs& a) {
  if (a.model_dir.empty() == a.party.empty()) {
    return Fail("recommend", absl::InvalidArgumentError(
                                 "give --party ADDR --party-name NAME (a running party) or --model "
                                 "DIR (a saved model, offline)"));
  }
  if (!a.model_dir.empty()) return RecommendOffline(a);
  if (a.peer_name.empty()) {
    return Fail("recommend", absl::InvalidArgumentError("--party needs --party-name NAME"));
  }
  auto ch = Dial(a, a.party, a.peer_name, pki::Role::kParty);
  if (!ch.ok()) return Fail("recommend", ch.status());
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
  if (!ch.ok()) return Fail("export-model", ch.status());
  v1::ExportModelRequest req;
  req.set_job_id(a.job_id);
  v1::ExportModelResponse resp;
  auto ctx = net::DeadlineContext(kOperatorCallTimeout);
  auto s = v1::PartyAdmin::NewStub(*ch)->ExportModel(ctx.get(), req, &resp);
  if (!s.ok()) return FailRpc("export-model", s, a, a.party, a.peer_name, pki::Role::kParty);
  auto party = net::ModelFromProto(resp, a.peer_name);
  if (!party.ok()) return Fail("export-model", party.status());
  const size_t users = party->user_ids.size(), items = party->item_ids.size();
  fmf::SavedModel model{resp.setting(), resp.job_id(), {std::move(*party)}};
  if (auto w = fmf::WriteSavedModel(a.out_dir, model); !w.ok()) {
    return Fail("export-model", w);
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
  if (!ch.ok()) return Fail("ledger", ch.status());
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

namespace {

// A cross-silo (FMF) job file's keys as written, before they are resolved.
struct FmfJobFile {
  fmf::JobConfig config;
  std::string setting = "hfl", granularity = "default", epsilon = "1";
  std::string item_catalogue, algorithm;
  std::vector<std::string> roster;
  double deadline = 0;
  int32_t min_parties = 0;
  int64_t seed = -1;
};

// Every key ReadFmfJobFile reads.
constexpr const char* kFmfJobKeys[] = {"job_id",
                                       "setting",
                                       "granularity",
                                       "epsilon",
                                       "delta",
                                       "rounds",
                                       "local_iters",
                                       "dim",
                                       "sample_rate",
                                       "theta",
                                       "vfl_finetune_iters",
                                       "learning_rate",
                                       "lr_final_ratio",
                                       "sgd_learning_rate",
                                       "sgd_l2",
                                       "pretrain_epochs",
                                       "finetune_epochs",
                                       "rating_max",
                                       "seed",
                                       "roster",
                                       "round_deadline_seconds",
                                       "min_parties",
                                       "item_catalogue",
                                       "align_users",
                                       "algorithm",
                                       "alternations",
                                       "validation_fraction",
                                       "max_finetune_epochs",
                                       "clip_norm",
                                       "coupling_zeta",
                                       "coupling_bound",
                                       "coupling_init"};

absl::StatusOr<FmfJobFile> ReadFmfJobFile(config::YamlMap& root) {
  FmfJobFile f;
  fmf::JobConfig& c = f.config;
  config::FirstError check;
  check(root.GetString("job_id", &c.job_id));
  if (!root.Has("job_id")) c.job_id.clear();  // ResolveFmfJobFile names it
  check(root.GetString("setting", &f.setting));
  check(root.GetString("granularity", &f.granularity));
  check(root.GetString("epsilon", &f.epsilon));
  check(root.GetDouble("delta", &c.delta));
  check(root.GetInt("rounds", &c.rounds));
  c.local_iters = 0;  // absent: resolved per setting (ResolveFmfJobFile)
  check(root.GetInt("local_iters", &c.local_iters));
  check(root.GetInt("dim", &c.dim));
  check(root.GetDouble("sample_rate", &c.sample_rate));
  check(root.GetInt("theta", &c.theta));
  check(root.GetInt("vfl_finetune_iters", &c.vfl_finetune_iters));
  check(root.GetDouble("learning_rate", &c.learning_rate));
  check(root.GetDouble("lr_final_ratio", &c.lr_final_ratio));
  check(root.GetDouble("sgd_learning_rate", &c.sgd_learning_rate));
  check(root.GetDouble("sgd_l2", &c.sgd_l2));
  check(root.GetInt("pretrain_epochs", &c.pretrain_epochs));
  check(root.GetInt("finetune_epochs", &c.finetune_epochs));
  check(root.GetDouble("rating_max", &c.rating_max));
  check(root.GetInt("seed", &f.seed));
  check(root.GetStringList("roster", &f.roster));
  check(root.GetDouble("round_deadline_seconds", &f.deadline));
  check(root.GetInt("min_parties", &f.min_parties));
  check(root.GetString("item_catalogue", &f.item_catalogue));
  check(root.GetBool("align_users", &c.align_users));
  check(root.GetString("algorithm", &f.algorithm));
  check(root.GetInt("alternations", &c.alternations));
  check(root.GetDouble("validation_fraction", &c.validation_fraction));
  check(root.GetInt("max_finetune_epochs", &c.max_finetune_epochs));
  check(root.GetDouble("clip_norm", &c.clip_norm));
  check(root.GetDouble("coupling_zeta", &c.coupling_zeta));
  check(root.GetDouble("coupling_bound", &c.coupling_bound));
  check(root.GetDouble("coupling_init", &c.coupling_init));
  RETURN_IF_ERROR(check.status());
  RETURN_IF_ERROR(root.Finish());
  return f;
}

// The words of the file (algorithm, catalogue file, setting, granularity,
// epsilon) into f.config; errors name `path` and the key.
absl::Status ResolveFmfJobFile(FmfJobFile& f, const std::string& path) {
  fmf::JobConfig& c = f.config;
  if (!f.algorithm.empty()) {
    auto parsed = fmf::ParseAlgorithm(f.algorithm);
    if (!parsed.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": key 'algorithm': ", parsed.status().message()));
    }
    c.algorithm = *parsed;
  }
  c.item_catalogue = f.item_catalogue;
  if (!f.item_catalogue.empty() && f.item_catalogue.rfind("sha256:", 0) != 0) {
    // A file: the job carries its digest (the parties hold the file).
    auto catalogue = data::Catalogue::Load(f.item_catalogue);
    if (!catalogue.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": key 'item_catalogue': ", catalogue.status().message()));
    }
    c.item_catalogue = catalogue->digest();
  }
  ASSIGN_OR_RETURN(c.setting, fmf::ParseSetting(f.setting));
  if (c.job_id.empty()) c.job_id = TimestampedJobId(f.setting, absl::Now());
  // A coupling round is one DP step; the FMF settings run T' = 10 by default.
  if (c.local_iters == 0) c.local_iters = c.setting == fmf::Setting::kCoupling ? 1 : 10;
  c.split =
      c.setting == fmf::Setting::kVfl ? fmf::SplitKind::kVertical : fmf::SplitKind::kHorizontal;
  if (f.granularity == "default") {
    // Absent: per user for hfl / hfl-synsgd (per rating is refused there).
    c.granularity = fmf::DefaultGranularity(c.setting);
  } else {
    auto gran = fmf::ParseGranularity(f.granularity);
    if (!gran.ok())
      return absl::InvalidArgumentError(absl::StrCat(path, ": ", gran.status().message()));
    c.granularity = *gran;
  }
  ASSIGN_OR_RETURN(c.epsilon, ParseEpsilon(f.epsilon, "epsilon"));
  if (f.seed >= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        path,
        ": key 'seed': a cross-silo job carries no seed (the server refuses it); set "
        "noise_seed in each party's config and seed in the server's for a reproducible run"));
  }
  if (auto st = fmf::ValidateJobConfig(c); !st.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", st.message()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<v1::JobSpec> LoadJobSpecFile(const std::string& path) {
  ASSIGN_OR_RETURN(auto root, config::YamlMap::FromFile(path));
  if (auto peek = config::YamlMap::FromFile(path); peek.ok()) {
    std::string setting;
    if (peek->GetString("setting", &setting).ok() && setting == "lfl") {
      return LflJobSpecFromYaml(root, path);  // device hosts, not parties
    }
    if (setting == "hua-s3") return HuaJobSpecFromYaml(root, path);  // device hosts + aggregator
  }
  ASSIGN_OR_RETURN(FmfJobFile f, ReadFmfJobFile(root));
  RETURN_IF_ERROR(ResolveFmfJobFile(f, path));
  v1::JobSpec spec = net::SpecFromJobConfig(f.config);
  for (const auto& r : f.roster) spec.add_roster(r);
  spec.set_round_deadline_seconds(f.deadline);
  spec.set_min_parties(f.min_parties);
  // Validate the wire form too (only federated settings travel).
  if (auto back = net::JobConfigFromSpec(spec); !back.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", back.status().message()));
  }
  return spec;
}

absl::StatusOr<JobFile> ReadJobFile(const std::string& path) {
  ASSIGN_OR_RETURN(auto root, config::YamlMap::FromFile(path));
  std::string setting;
  if (root.Has("setting")) {
    if (auto peek = config::YamlMap::FromFile(path); peek.ok()) {
      (void)peek->GetString("setting", &setting);
    }
  }
  if (setting == "lfl" || setting == "hua-s3") {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": key 'setting': ", setting,
                     " jobs run over device hosts; fedmf train and demo --job take the "
                     "cross-silo job files (hfl, vfl, hfl-synsgd, coupling). Give their "
                     "flags instead (fedmf demo --setting ",
                     setting, " ...)"));
  }
  JobFile out;
  for (const char* key : kFmfJobKeys) {
    if (root.Has(key)) out.keys.insert(key);
  }
  ASSIGN_OR_RETURN(FmfJobFile f, ReadFmfJobFile(root));
  if (!f.item_catalogue.empty() && f.item_catalogue.rfind("sha256:", 0) != 0) {
    out.catalogue_file = f.item_catalogue;
  }
  RETURN_IF_ERROR(ResolveFmfJobFile(f, path));
  out.config = std::move(f.config);
  out.roster = std::move(f.roster);
  out.min_parties = f.min_parties;
  return out;
}

// Under a failed job in `job list`: the reason, then one line per party
// that did not take part (its refusal, or that it never answered), instead
// of one line holding them all.
void PrintFailureLines(const v1::JobStatus& st) {
  if (st.error().empty()) return;
  std::string error = st.error();
  std::vector<const v1::PartyStatus*> out;
  for (const v1::PartyStatus& p : st.parties()) {
    if (!p.accepted()) out.push_back(&p);
  }
  // "N of M parties accepted, K needed (a: why; b: no reply)": the list in
  // parentheses is the lines below.
  if (const size_t open = error.find(" needed ("); !out.empty() && open != std::string::npos) {
    error.resize(open + 7);
  }
  std::cout << "    " << Shown(error) << "\n";
  for (const v1::PartyStatus* p : out) {
    std::cout << absl::StrFormat("    %-20s %s\n", Shown(p->name()), PartyWord(st, *p));
  }
}

int List(const ClientArgs& a) {
  auto ch = Dial(a, a.server, ServerPeer(a), pki::Role::kServer);
  if (!ch.ok()) return Fail("job list", ch.status());
  v1::ListJobsRequest req;
  v1::ListJobsResponse resp;
  auto ctx = net::DeadlineContext(kOperatorCallTimeout);
  auto s = v1::Operator::NewStub(*ch)->ListJobs(ctx.get(), req, &resp);
  if (!s.ok()) return FailRpc("job list", s, a, a.server, ServerPeer(a), pki::Role::kServer);
  if (a.json) {
    nlohmann::json jobs = nlohmann::json::array();
    for (const v1::JobStatus& st : resp.jobs()) {
      const Progress p = ProgressOf(st);
      int accepted = 0;
      for (const v1::PartyStatus& party : st.parties()) accepted += party.accepted();
      jobs.push_back({{"job_id", Shown(st.spec().job_id())},
                      {"setting", v1::Setting_Name(st.spec().setting())},
                      {"state", v1::JobState_Name(st.state())},
                      {"status", JobWord(st)},
                      {"rounds_completed", p.done},
                      {"rounds_total", p.total},
                      {"parties", st.parties_size()},
                      {"accepted", accepted},
                      {"error", Shown(st.error())}});
    }
    std::cout << nlohmann::json{{"jobs", jobs}}.dump() << "\n";
    return 0;
  }
  std::cout << absl::StrFormat("%-24s %-18s %-28s %-11s %s\n", "job", "setting", "status", "rounds",
                               "parties");
  for (const v1::JobStatus& st : resp.jobs()) {
    const Progress p = ProgressOf(st);
    int accepted = 0;
    for (const v1::PartyStatus& party : st.parties()) accepted += party.accepted();
    std::cout << absl::StrFormat("%-24s %-18s %-28s %-11s %d/%d accepted\n",
                                 Shown(st.spec().job_id()), net::SettingWord(st.spec().setting()),
                                 JobWord(st), absl::StrCat(p.done, "/", p.total), accepted,
                                 st.parties_size());
    PrintFailureLines(st);
  }
  return 0;
}

int Cancel(const ClientArgs& a) {
  auto ch = Dial(a, a.server, ServerPeer(a), pki::Role::kServer);
  if (!ch.ok()) return Fail("job cancel", ch.status());
  v1::CancelJobRequest req;
  req.set_job_id(a.job_id);
  v1::CancelJobResponse resp;
  auto ctx = net::DeadlineContext(kOperatorCallTimeout);
  auto s = v1::Operator::NewStub(*ch)->CancelJob(ctx.get(), req, &resp);
  if (!s.ok()) return FailRpc("job cancel", s, a, a.server, ServerPeer(a), pki::Role::kServer);
  const std::string was =
      resp.previous_state() == v1::JOB_STATE_RUNNING ? "running" : "pending or queued";
  if (a.json) {
    std::cout << nlohmann::json{{"job_id", a.job_id}, {"cancelled", true}, {"was", was}}.dump()
              << "\n";
  } else {
    std::cout << "job " << a.job_id << " cancelled (it was " << was << ")\n";
  }
  return 0;
}

// Follows a job to its end: a line per round as the server closes it, a line
// per change of the job's status word (--json: one JSON object per line,
// {"round": ...} as in `job status --json`'s history, {"job_id", "status",
// "rounds_completed", "rounds_total", "error"} on a change). Exit 0 when it
// finishes, 1 when it fails.
int Watch(const ClientArgs& a) {
  auto ch = Dial(a, a.server, ServerPeer(a), pki::Role::kServer);
  if (!ch.ok()) return Fail("job watch", ch.status());
  auto stub = v1::Operator::NewStub(*ch);
  std::string last_word;
  RoundFollower rounds;
  while (true) {
    auto st = FetchStatus(*stub, a.job_id);
    if (!st.ok()) {
      return FailRpc("job watch", st.status(), a, a.server, ServerPeer(a), pki::Role::kServer);
    }
    const std::string word = JobWord(*st);
    rounds.Follow(*st, [&](int i, double elapsed) {
      std::cout << (a.json ? RoundJson(st->rounds(i)).dump() : RoundLine(*st, i, elapsed)) << "\n"
                << std::flush;
    });
    if (word != last_word) {
      const Progress p = ProgressOf(*st);
      std::cout << (a.json ? nlohmann::json{{"job_id", a.job_id},
                                            {"status", word},
                                            {"rounds_completed", p.done},
                                            {"rounds_total", p.total},
                                            {"error", Shown(st->error())}}
                                 .dump()
                           : absl::StrFormat("job %s: %s, %s", a.job_id, word, ProgressText(*st)))
                << "\n"
                << std::flush;
      last_word = word;
    }
    if (st->state() == v1::JOB_STATE_FINISHED) return 0;
    if (st->state() == v1::JOB_STATE_FAILED) {
      if (!a.json) std::cout << "failed: " << Shown(st->error()) << "\n";
      return 1;
    }
    // A bounded poll of the server's state (it has no push channel).
    absl::SleepFor(absl::Seconds(a.interval_seconds));
  }
}

void RegisterClientCommands(CLI::App& app, int* exit_code) {
  auto a = std::make_shared<ClientArgs>();
  CLI::App* job = app.add_subcommand("job", "submit and inspect jobs on a running fedmf-server");
  job->require_subcommand(1);
  CLI::App* submit = job->add_subcommand("submit", "submit a job (YAML spec)");
  submit->add_option("--server", a->server, "server address host:port")->required();
  submit->add_option("--spec", a->spec_path, "job spec YAML (docs/configuration.md)")->required();
  submit->add_option("--server-name", a->peer_name, "server certificate name (default server)");
  AddTlsFlags(submit, a.get());
  submit->add_flag("--json", a->json, "print one JSON object {job_id}");
  submit->callback([a, exit_code] { *exit_code = Submit(*a); });
  CLI::App* status = job->add_subcommand("status", "a job's state, rounds and parties");
  status->add_option("--server", a->server, "server address host:port")->required();
  status->add_option("--job", a->job_id, "job id")->required();
  status->add_option("--server-name", a->peer_name, "server certificate name (default server)");
  status->add_flag("--json", a->json, "print one JSON object");
  AddTlsFlags(status, a.get());
  status->callback([a, exit_code] { *exit_code = Status(*a); });
  CLI::App* list = job->add_subcommand("list", "every job on the server, oldest first");
  list->add_option("--server", a->server, "server address host:port")->required();
  list->add_option("--server-name", a->peer_name, "server certificate name (default server)");
  list->add_flag("--json", a->json, "print one JSON object {jobs: [...]}");
  AddTlsFlags(list, a.get());
  list->callback([a, exit_code] { *exit_code = List(*a); });
  CLI::App* watch = job->add_subcommand("watch", "follow a job round by round until it ends");
  watch->add_option("--server", a->server, "server address host:port")->required();
  watch->add_option("--job", a->job_id, "job id")->required();
  watch->add_option("--server-name", a->peer_name, "server certificate name (default server)");
  watch->add_option("--interval", a->interval_seconds, "seconds between status polls")
      ->capture_default_str()
      ->check(CLI::Range(0.05, 60.0));
  AddTlsFlags(watch, a.get());
  watch->add_flag("--json", a->json,
                  "print one JSON object per line: each round, each change of state");
  watch->callback([a, exit_code] { *exit_code = Watch(*a); });
  CLI::App* cancel = job->add_subcommand("cancel", "end a queued, pending or running job");
  cancel->add_option("--server", a->server, "server address host:port")->required();
  cancel->add_option("--job", a->job_id, "job id")->required();
  cancel->add_option("--server-name", a->peer_name, "server certificate name (default server)");
  AddTlsFlags(cancel, a.get());
  cancel->add_flag("--json", a->json, "print one JSON object {job_id, cancelled, was}");
  cancel->callback([a, exit_code] { *exit_code = Cancel(*a); });

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
