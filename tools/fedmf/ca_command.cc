#include "tools/fedmf/ca_command.h"

#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/pki/ca.h"
#include "common/pki/identity.h"
#include "common/pki/role.h"
#include "nlohmann/json.hpp"

namespace fedmf::cli {
namespace {

struct CaArgs {
  std::string dir;
  std::string federation = "fedmf";
  int init_days = 3650;
  std::string name;
  std::string role;
  std::string out;
  // Only what the operator asks for: DNS:<name> always, plus each --san. (No
  // loopback by default: a certificate valid for "localhost" is one more name
  // a peer may be reached under. fedmf's clients dial by certificate name.)
  std::vector<std::string> sans;
  int issue_days = 365;
  bool json = false;
};

int Fail(const char* command, const absl::Status& s) {
  std::cerr << "fedmf ca " << command << ": " << s.message() << "\n";
  return 2;
}

// Checked here rather than with a CLI11 validator so that every bad value
// gets the same "fedmf ca ...: reason" line and exit code 2.
absl::Status CheckDays(int days) {
  if (days < 1) {
    return absl::InvalidArgumentError(absl::StrCat("--days must be at least 1 (got ", days, ")"));
  }
  return absl::OkStatus();
}

int RunInit(const CaArgs& a) {
  if (auto s = CheckDays(a.init_days); !s.ok()) return Fail("init", s);
  if (auto s = pki::InitCa(a.dir, a.federation, absl::Hours(24) * a.init_days); !s.ok()) {
    return Fail("init", s);
  }
  if (a.json) {
    std::cout << nlohmann::json{{"federation", a.federation},
                                {"days", a.init_days},
                                {"key", a.dir + "/ca.key"},
                                {"certificate", a.dir + "/ca.crt"}}
                     .dump()
              << "\n";
    return 0;
  }
  std::cout << "created federation CA '" << a.federation << "' (valid " << a.init_days << " days)\n"
            << "  " << a.dir << "/ca.key  (private: keep it offline, never copy it to a daemon)\n"
            << "  " << a.dir << "/ca.crt\n";
  return 0;
}

int RunIssue(const CaArgs& a) {
  if (auto s = CheckDays(a.issue_days); !s.ok()) return Fail("issue", s);
  auto role = pki::RoleFromString(a.role);
  if (!role.ok()) return Fail("issue", role.status());
  const std::string out = a.out.empty() ? a.dir : a.out;
  if (auto s =
          pki::IssueCertificate(a.dir, out, a.name, *role, a.sans, absl::Hours(24) * a.issue_days);
      !s.ok()) {
    return Fail("issue", s);
  }
  const std::string crt = out + "/" + a.name + ".crt";
  // The expiry is worth seeing at issue time; failing to read it back is not
  // an error of the issue itself, so it is only left out.
  std::string valid_until;
  std::ifstream in(crt);
  const std::string pem{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (!pem.empty()) {
    if (auto not_after = pki::CertificateNotAfter(pem); not_after.ok()) {
      valid_until = absl::FormatTime("%Y-%m-%d %H:%M:%S UTC", *not_after, absl::UTCTimeZone());
    }
  }
  if (a.json) {
    std::cout << nlohmann::json{{"name", a.name},
                                {"role", a.role},
                                {"key", out + "/" + a.name + ".key"},
                                {"certificate", crt},
                                {"ca_certificate", out + "/ca.crt"},
                                {"valid_until", valid_until}}
                     .dump()
              << "\n";
    return 0;
  }
  std::cout << "issued certificate for '" << a.name << "' (role " << a.role << ")\n"
            << "  " << out << "/" << a.name << ".key\n"
            << "  " << crt << "\n"
            << "  " << out << "/ca.crt\n";
  if (!valid_until.empty()) std::cout << "valid until " << valid_until << "\n";
  return 0;
}

}  // namespace

void RegisterCaCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<CaArgs>();
  CLI::App* ca = app.add_subcommand("ca", "federation certificate authority (mutual TLS)");
  ca->require_subcommand(1);

  CLI::App* init = ca->add_subcommand("init", "create a new federation CA (ca.key, ca.crt)");
  init->add_option("--dir", args->dir, "directory for ca.key and ca.crt (created 0700)")
      ->required();
  init->add_option("--federation", args->federation, "federation name (CA CN '<name> CA')")
      ->capture_default_str();
  init->add_option("--days", args->init_days, "validity in days")->capture_default_str();
  init->add_flag("--json", args->json,
                 "print one JSON object {federation, days, key, certificate}");
  init->callback([args, exit_code] { *exit_code = RunInit(*args); });

  CLI::App* issue = ca->add_subcommand(
      "issue", "issue <name>.key/<name>.crt signed by the CA, plus a copy of ca.crt");
  issue->add_option("--dir", args->dir, "the CA directory (from `fedmf ca init`)")->required();
  issue->add_option("--name", args->name, "certificate name: party/device/server id")->required();
  issue->add_option("--role", args->role, "server|party|device|aggregator|operator")->required();
  issue->add_option("--out", args->out, "output directory (default: the CA directory)");
  issue->add_option("--san", args->sans,
                    "DNS name or IP address the certificate is also valid for, repeatable "
                    "(--name is always included; nothing else unless given)");
  issue->add_option("--days", args->issue_days, "validity in days")->capture_default_str();
  issue->add_flag(
      "--json", args->json,
      "print one JSON object {name, role, key, certificate, ca_certificate, valid_until}");
  issue->callback([args, exit_code] { *exit_code = RunIssue(*args); });
}

}  // namespace fedmf::cli
