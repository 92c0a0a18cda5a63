#include "server/dashboard_pages.h"

#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/net/job_view.h"
#include "common/plot/svg_chart.h"

namespace fedmf::server {
namespace {

using plot::EscapeXml;

std::string Page(const std::string& title, const std::string& body, int refresh_seconds) {
  return absl::StrCat(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">",
      refresh_seconds > 0
          ? absl::StrFormat("<meta http-equiv=\"refresh\" content=\"%d\">", refresh_seconds)
          : "",
      "<title>", EscapeXml(title),
      "</title><style>"
      "body{font-family:sans-serif;margin:1.5em;color:#222}"
      "table{border-collapse:collapse;margin:0.5em 0 1.5em}"
      "td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}"
      "th{background:#f3f3f3}.live{color:#1b7a3a}.down{color:#b00}"
      "</style></head><body>\n",
      body, "</body></html>\n");
}

std::string Number(double x, const char* format = "%.4f") {
  return std::isfinite(x) ? absl::StrFormat(format, x) : (x > 0 ? "inf" : "-");
}

std::string Live(bool connected) {
  return connected ? "<span class=\"live\">connected</span>"
                   : "<span class=\"down\">disconnected</span>";
}

std::string SettingName(const v1::JobStatus& job) {
  std::string name = v1::Setting_Name(job.spec().setting());
  if (absl::StartsWith(name, "SETTING_")) name = name.substr(8);
  return absl::AsciiStrToLower(name);
}

}  // namespace

std::string DashboardIndexHtml(const std::vector<v1::JobStatus>& jobs,
                               const v1::ListPartiesResponse& parties) {
  std::string body =
      "<h1>fedmf-server</h1>\n<h2>Parties</h2>\n<table id=\"parties\">"
      "<tr><th>party</th><th>liveness</th></tr>\n";
  for (const v1::PartyStatus& p : parties.parties()) {
    absl::StrAppend(&body, "<tr class=\"party\" data-party=\"", EscapeXml(p.name()), "\"><td>",
                    EscapeXml(p.name()), "</td><td>", Live(p.connected()), "</td></tr>\n");
  }
  absl::StrAppend(&body,
                  "</table>\n<h2>Jobs</h2>\n<table id=\"jobs\"><tr><th>job</th>"
                  "<th>setting</th><th>state</th><th>rounds</th><th>parties</th></tr>\n");
  for (const v1::JobStatus& job : jobs) {
    const std::string id = EscapeXml(job.spec().job_id());
    absl::StrAppend(&body, "<tr class=\"job\" data-job=\"", id, "\"><td><a href=\"/jobs/", id,
                    "\">", id, "</a></td><td>", SettingName(job), "</td><td class=\"state\">",
                    EscapeXml(net::JobWord(job)), "</td><td class=\"rounds\">",
                    job.rounds_completed(), "/", net::TotalRounds(job), "</td><td>",
                    job.parties_size(), "</td></tr>\n");
  }
  absl::StrAppend(&body, "</table>\n");
  return Page("fedmf-server", body, 0);
}

std::string DashboardJobHtml(const v1::JobStatus& job, int refresh_seconds) {
  const std::string id = EscapeXml(job.spec().job_id());
  std::string body = absl::StrCat(
      "<p><a href=\"/\">all jobs</a></p>\n<h1>job <span id=\"job-id\">", id, "</span></h1>\n",
      "<p>", SettingName(job), ", <span id=\"state\">", EscapeXml(net::JobWord(job)),
      "</span>, rounds <span id=\"rounds-done\">", job.rounds_completed(), "</span>/",
      net::TotalRounds(job), job.error().empty() ? "" : " — " + EscapeXml(job.error()),
      "</p>\n<h2>Parties</h2>\n<table id=\"job-parties\"><tr><th>party</th><th>status</th>"
      "<th>epsilon (this job)</th><th>epsilon (ledger)</th><th>test MSE</th>"
      "<th>liveness</th></tr>\n");
  for (const v1::PartyStatus& p : job.parties()) {
    absl::StrAppend(&body, "<tr class=\"party\" data-party=\"", EscapeXml(p.name()), "\"><td>",
                    EscapeXml(p.name()), "</td><td>", EscapeXml(net::PartyWord(p)),
                    "</td><td class=\"job-epsilon\">", Number(p.job_epsilon()),
                    "</td><td class=\"ledger-epsilon\">", Number(p.epsilon_spent()),
                    "</td><td class=\"test-mse\">", p.test_mse() >= 0 ? Number(p.test_mse()) : "-",
                    "</td><td>", Live(p.connected()), "</td></tr>\n");
  }
  absl::StrAppend(&body, "</table>\n<h2>Per round</h2>\n");
  for (const plot::LineChart& chart : net::JobRoundCharts(job)) {
    absl::StrAppend(&body, "<div class=\"chart-box\">", plot::SvgChart(chart), "</div>\n");
  }
  absl::StrAppend(&body,
                  "<table id=\"rounds\"><tr><th>round</th><th>seconds</th>"
                  "<th>contributors</th><th>missing</th></tr>\n");
  for (const v1::RoundRecord& r : job.rounds()) {
    absl::StrAppend(&body, "<tr data-round=\"", r.round() + 1, "\"><td>", r.round() + 1,
                    "</td><td>", Number(r.seconds(), "%.3f"), "</td><td>",
                    EscapeXml(absl::StrJoin(r.contributors(), ", ")), "</td><td>",
                    EscapeXml(absl::StrJoin(r.missing(), ", ")), "</td></tr>\n");
  }
  absl::StrAppend(&body, "</table>\n");
  const bool ended = job.state() == v1::JOB_STATE_FINISHED || job.state() == v1::JOB_STATE_FAILED;
  return Page(absl::StrCat("job ", job.spec().job_id()), body, ended ? 0 : refresh_seconds);
}

std::string DashboardErrorHtml(const std::string& message) {
  return Page("fedmf-server",
              absl::StrCat("<p><a href=\"/\">all jobs</a></p>\n<p id=\"error\">",
                           EscapeXml(message), "</p>\n"),
              0);
}

}  // namespace fedmf::server
