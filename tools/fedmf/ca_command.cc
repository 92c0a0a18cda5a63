#include "tools/fedmf/ca_command.h"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/cli/command_line.h"
#include "common/pki/ca.h"
#include "common/pki/certificate_request.h"
#include "common/pki/identity.h"
#include "common/pki/role.h"
#include "common/pki/tls_files.h"
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
  // ca sign / ca check.
  std::string csr;
  std::string key_fingerprint;
  std::string cert_dir;
};

// Checked here rather than with a CLI11 validator so that every bad value
// gets the same "fedmf ca ...: reason" line (exit 2, INVALID_ARGUMENT).
absl::Status CheckDays(int days) {
  if (days < 1) {
    return absl::InvalidArgumentError(absl::StrCat("--days must be at least 1 (got ", days, ")"));
  }
  return absl::OkStatus();
}

std::string ReadWhole(const std::string& path) {
  std::ifstream in(path);
  return std::string{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

int RunInit(const CaArgs& a) {
  if (auto s = CheckDays(a.init_days); !s.ok()) return Report("fedmf ca init", s);
  if (auto s = pki::InitCa(a.dir, a.federation, absl::Hours(24) * a.init_days); !s.ok()) {
    return Report("fedmf ca init", s);
  }
  absl::StatusOr<std::string> fingerprint =
      pki::CertificateFingerprint(ReadWhole(a.dir + "/ca.crt"));
  if (a.json) {
    std::cout << nlohmann::json{{"federation", a.federation},
                                {"days", a.init_days},
                                {"key", a.dir + "/ca.key"},
                                {"certificate", a.dir + "/ca.crt"},
                                {"fingerprint", fingerprint.ok() ? *fingerprint : ""}}
                     .dump()
              << "\n";
    return 0;
  }
  std::cout << "created federation CA '" << a.federation << "' (valid " << a.init_days << " days)\n"
            << "  " << a.dir << "/ca.key  (private: keep it offline, never copy it to a daemon)\n"
            << "  " << a.dir << "/ca.crt\n";
  if (fingerprint.ok()) {
    std::cout << "CA fingerprint " << *fingerprint
              << " (tell it to every member: `fedmf ca check` shows theirs)\n";
  }
  return 0;
}

int RunIssue(const CaArgs& a) {
  if (auto s = CheckDays(a.issue_days); !s.ok()) return Report("fedmf ca issue", s);
  auto role = pki::RoleFromString(a.role);
  if (!role.ok()) return Report("fedmf ca issue", role.status());
  const std::string out = a.out.empty() ? a.dir : a.out;
  if (auto s =
          pki::IssueCertificate(a.dir, out, a.name, *role, a.sans, absl::Hours(24) * a.issue_days);
      !s.ok()) {
    return Report("fedmf ca issue", s);
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

std::string ValidUntil(const std::string& cert_pem) {
  absl::StatusOr<absl::Time> not_after = pki::CertificateNotAfter(cert_pem);
  if (!not_after.ok()) return "";
  return absl::FormatTime("%Y-%m-%d %H:%M:%S UTC", *not_after, absl::UTCTimeZone());
}

// The partner's side: key pair and request on this host; only the request
// and the key's fingerprint go to the operator.
int RunRequest(const CaArgs& a) {
  auto role = pki::RoleFromString(a.role);
  if (!role.ok()) return Report("fedmf ca request", role.status());
  absl::StatusOr<pki::CertificateRequestInfo> made =
      pki::CreateCertificateRequest(a.out, a.name, *role, a.sans);
  if (!made.ok()) return Report("fedmf ca request", made.status());
  const std::string key = a.out + "/" + a.name + ".key";
  const std::string csr = a.out + "/" + a.name + ".csr";
  if (a.json) {
    std::cout << nlohmann::json{{"name", a.name},     {"role", a.role},
                                {"key", key},         {"request", csr},
                                {"sans", made->sans}, {"key_fingerprint", made->key_fingerprint}}
                     .dump()
              << "\n";
    return 0;
  }
  std::cout << "certificate request for '" << a.name << "' (role " << a.role << ")\n"
            << "  " << key << "  (private: it never leaves this host)\n"
            << "  " << csr << "  (send this to the federation operator)\n"
            << "key fingerprint " << made->key_fingerprint << "\n"
            << "read the fingerprint to the operator over another channel; put the " << a.name
            << ".crt and ca.crt you get back in " << a.out << "\n";
  return 0;
}

// The operator's side: sign a partner's request only if it is exactly what
// the operator intends (name, role, SANs, and the key the partner read out).
int RunSign(const CaArgs& a) {
  if (auto s = CheckDays(a.issue_days); !s.ok()) return Report("fedmf ca sign", s);
  auto role = pki::RoleFromString(a.role);
  if (!role.ok()) return Report("fedmf ca sign", role.status());
  const pki::CertificateRequestExpectation expected{a.name, *role, a.sans, a.key_fingerprint};
  // The request is data the command names: missing, malformed or refused is
  // exit 4, before the CA is touched.
  std::ifstream probe(a.csr);
  std::error_code size_error;
  if (!probe) {
    return Report("fedmf ca sign",
                  DataError(absl::NotFoundError(absl::StrCat("cannot read the request ", a.csr,
                                                             ": no such file or not readable"))));
  }
  if (std::filesystem::file_size(a.csr, size_error) > (1u << 20) || size_error) {
    return Report("fedmf ca sign", DataError(absl::InvalidArgumentError(
                                       absl::StrCat(a.csr,
                                                    " is not a certificate request (not a regular "
                                                    "file, or over 1 MiB)"))));
  }
  if (auto checked = pki::CheckCertificateRequest(ReadWhole(a.csr), a.csr, expected);
      !checked.ok()) {
    return Report("fedmf ca sign", DataError(checked.status()));
  }
  const std::string out = a.out.empty() ? a.dir : a.out;
  absl::StatusOr<pki::CertificateRequestInfo> info =
      pki::SignCertificateRequest(a.dir, a.csr, out, expected, absl::Hours(24) * a.issue_days);
  if (!info.ok()) return Report("fedmf ca sign", info.status());
  const std::string crt = out + "/" + a.name + ".crt";
  const std::string cert_pem = ReadWhole(crt);
  const std::string valid_until = ValidUntil(cert_pem);
  absl::StatusOr<std::string> ca_fingerprint =
      pki::CertificateFingerprint(ReadWhole(out + "/ca.crt"));
  if (a.json) {
    std::cout << nlohmann::json{{"name", a.name},
                                {"role", a.role},
                                {"request", a.csr},
                                {"key_fingerprint", info->key_fingerprint},
                                {"certificate", crt},
                                {"ca_certificate", out + "/ca.crt"},
                                {"ca_fingerprint", ca_fingerprint.ok() ? *ca_fingerprint : ""},
                                {"valid_until", valid_until}}
                     .dump()
              << "\n";
    return 0;
  }
  std::cout << "signed the request of '" << a.name << "' (role " << a.role << ")\n"
            << "  " << crt << "\n"
            << "  " << out << "/ca.crt\n"
            << "key fingerprint " << info->key_fingerprint << "\n";
  if (a.key_fingerprint.empty()) {
    std::cout << "(not checked against the partner's: pass --key-fingerprint with the one it "
                 "read out to you)\n";
  }
  if (ca_fingerprint.ok()) std::cout << "CA fingerprint " << *ca_fingerprint << "\n";
  if (!valid_until.empty()) std::cout << "valid until " << valid_until << "\n";
  std::cout << "send both files to '" << a.name << "': they are public, no private key was made "
            << "or seen here\n";
  return 0;
}

// Either side: are the three files a working identity?
int RunCheck(const CaArgs& a) {
  absl::StatusOr<pki::TlsFiles> files = pki::LoadTlsFiles(a.cert_dir, a.name);
  // A missing file is a data error (exit 4); files that are there but do not
  // make a working identity are the check's answer: it failed (exit 1), as
  // a test command's "no" is, whatever code the loader gave the reason.
  if (!files.ok()) {
    if (absl::IsNotFound(files.status())) {
      return Report("fedmf ca check", DataError(files.status()));
    }
    return Report("fedmf ca check", RuntimeError(files.status()));
  }
  absl::StatusOr<pki::PeerIdentity> id = pki::IdentityFromCertificatePem(files->cert_pem);
  absl::StatusOr<std::string> ca_fingerprint = pki::CertificateFingerprint(files->ca_cert_pem);
  if (!id.ok() || !ca_fingerprint.ok()) {
    return Report("fedmf ca check", RuntimeError(id.ok() ? ca_fingerprint.status() : id.status()));
  }
  const std::string valid_until = ValidUntil(files->cert_pem);
  const std::string role = pki::RoleToString(id->role);
  if (a.json) {
    std::cout << nlohmann::json{{"name", id->name},
                                {"role", role},
                                {"valid_until", valid_until},
                                {"ca_fingerprint", *ca_fingerprint}}
                     .dump()
              << "\n";
    return 0;
  }
  std::cout << a.cert_dir << ": '" << id->name << "' (role " << role
            << "), key and certificate match, signed by ca.crt\n"
            << "CA fingerprint " << *ca_fingerprint << "\n";
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

  CLI::App* request = ca->add_subcommand(
      "request",
      "make this host's key pair and a certificate request (<name>.key stays here, <name>.csr "
      "goes to the federation operator)");
  request->add_option("--name", args->name, "the name you will be known by in the federation")
      ->required();
  request->add_option("--role", args->role, "server|party|device|aggregator|operator")->required();
  request->add_option("--out", args->out, "directory for <name>.key and <name>.csr (created 0700)")
      ->required();
  request->add_option("--san", args->sans,
                      "DNS name or IP address to ask for besides --name, repeatable");
  request->add_flag("--json", args->json,
                    "print one JSON object {name, role, key, request, sans, key_fingerprint}");
  request->callback([args, exit_code] { *exit_code = RunRequest(*args); });

  CLI::App* sign = ca->add_subcommand(
      "sign", "sign a partner's certificate request after checking it is for --name and --role");
  sign->add_option("--dir", args->dir, "the CA directory (from `fedmf ca init`)")->required();
  sign->add_option("--csr", args->csr, "the request (<name>.csr from `fedmf ca request`)")
      ->required();
  sign->add_option("--name", args->name, "the name you mean to sign: the request must ask for it")
      ->required();
  sign->add_option("--role", args->role, "the role you mean to sign: the request must ask for it")
      ->required();
  sign->add_option("--key-fingerprint", args->key_fingerprint,
                   "sha256:... the partner read out from `fedmf ca request`: the request's key "
                   "must have it");
  sign->add_option("--out", args->out,
                   "directory for <name>.crt and a copy of ca.crt (default: the CA directory)");
  sign->add_option("--san", args->sans,
                   "DNS name or IP address the certificate is also valid for, repeatable (the "
                   "request may ask for no other)");
  sign->add_option("--days", args->issue_days, "validity in days")->capture_default_str();
  sign->add_flag("--json", args->json,
                 "print one JSON object {name, role, request, key_fingerprint, certificate, "
                 "ca_certificate, ca_fingerprint, valid_until}");
  sign->callback([args, exit_code] { *exit_code = RunSign(*args); });

  CLI::App* check = ca->add_subcommand(
      "check", "check that DIR holds a working identity: ca.crt, <name>.crt and its <name>.key");
  check->add_option("--cert-dir", args->cert_dir, "the directory a daemon's tls.cert_dir names")
      ->required();
  check->add_option("--name", args->name, "the certificate name")->required();
  check->add_flag("--json", args->json,
                  "print one JSON object {name, role, valid_until, "
                  "ca_fingerprint}");
  check->callback([args, exit_code] { *exit_code = RunCheck(*args); });
}

}  // namespace fedmf::cli
