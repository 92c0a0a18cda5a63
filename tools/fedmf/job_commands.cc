#include "tools/fedmf/job_commands.h"

#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "common/base/status_macros.h"
#include "common/cli/command_line.h"
#include "common/fmf/wire/job_codec.h"
#include "common/net/client_context.h"
#include "common/net/credentials.h"
#include "common/net/job_view.h"
#include "fedmf/v1/federation.grpc.pb.h"
#include "nlohmann/json.hpp"
#include "tools/fedmf/accounting_json.h"
#include "tools/fedmf/cli_util.h"
#include "tools/fedmf/job_file.h"
#include "tools/fedmf/job_progress.h"
#include "tools/fedmf/operator_client.h"

namespace fedmf::cli {
namespace {

int Submit(const ClientArgs& a) {
  auto spec = LoadJobSpecFile(a.spec_path);
  if (!spec.ok()) return Report("fedmf job submit", DataError(spec.status()));
  auto ch = Dial(a, a.server, ServerPeer(a), pki::Role::kServer);
  if (!ch.ok()) return Report("fedmf job submit", ch.status());
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
  if (!ch.ok()) return Report("fedmf job status", ch.status());
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
  if (!ch.ok()) return Report("fedmf job list", ch.status());
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
  if (!ch.ok()) return Report("fedmf job cancel", ch.status());
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
  if (!ch.ok()) return Report("fedmf job watch", ch.status());
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

}  // namespace

void RegisterJobCommands(CLI::App& app, int* exit_code) {
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
}

}  // namespace fedmf::cli
