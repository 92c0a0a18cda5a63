// The `fedmf` binary as an operator uses it: exit codes, messages, files and
// JSON output. Runs FEDMF_BIN_DIR/fedmf as a subprocess.
#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/pki/identity.h"
#include "common/pki/tls_files.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/testing/status_matchers.h"
#include "tests/unit/tools/fedmf_runner.h"

using ::fedmf::testing::IsOk;
using ::fedmf::testing::ReadFile;

namespace fedmf {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

using CliTest = FedmfCliTest;

// Whether the certificate's SANs match a host name / IP literal.
bool CertMatchesHost(const std::string& pem, const std::string& host, bool ip) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  if (cert == nullptr) return false;
  const int rc = ip ? X509_check_ip_asc(cert, host.c_str(), 0)
                    : X509_check_host(cert, host.c_str(), host.size(), 0, nullptr);
  X509_free(cert);
  return rc == 1;
}

TEST_F(CliTest, CaInitThenIssue) {
  const std::string ca = Path("ca");
  RunResult init = Run({"ca", "init", "--dir", ca, "--federation", "demo"});
  ASSERT_EQ(init.exit_code, 0) << Describe(init);
  EXPECT_THAT(init.out, HasSubstr(ca + "/ca.crt"));
  EXPECT_THAT(init.out, HasSubstr(ca + "/ca.key"));
  EXPECT_TRUE(std::filesystem::exists(ca + "/ca.crt"));
  EXPECT_TRUE(std::filesystem::exists(ca + "/ca.key"));

  const std::string out = Path("party-a");
  RunResult issue =
      Run({"ca", "issue", "--dir", ca, "--name", "party-a", "--role", "party", "--out", out});
  ASSERT_EQ(issue.exit_code, 0) << Describe(issue);
  for (const char* f : {"/party-a.crt", "/party-a.key", "/ca.crt"}) {
    EXPECT_THAT(issue.out, HasSubstr(out + f));
    EXPECT_TRUE(std::filesystem::exists(out + f)) << f;
  }
  // What the daemons will load at startup.
  auto files = pki::LoadTlsFiles(out, "party-a");
  ASSERT_THAT(files, IsOk());
  auto id = pki::IdentityFromCertificatePem(files->cert_pem);
  ASSERT_THAT(id, IsOk());
  EXPECT_EQ(id->name, "party-a");
  EXPECT_EQ(id->role, pki::Role::kParty);
  // The SANs are what the operator asked for: the name, nothing else.
  EXPECT_TRUE(CertMatchesHost(files->cert_pem, "party-a", false));
  EXPECT_FALSE(CertMatchesHost(files->cert_pem, "localhost", false));
  EXPECT_FALSE(CertMatchesHost(files->cert_pem, "127.0.0.1", true));
}

TEST_F(CliTest, IssueDefaultsToCaDirectoryAndHonoursSans) {
  const std::string ca = Path("ca");
  ASSERT_EQ(Run({"ca", "init", "--dir", ca}).exit_code, 0);
  RunResult issue = Run({"ca", "issue", "--dir", ca, "--name", "server", "--role", "server",
                         "--san", "coord.example.org", "--san", "10.1.2.3", "--days", "30"});
  ASSERT_EQ(issue.exit_code, 0) << Describe(issue);
  EXPECT_THAT(issue.out, HasSubstr(ca + "/server.crt"));
  auto files = pki::LoadTlsFiles(ca, "server");
  ASSERT_THAT(files, IsOk());
  EXPECT_TRUE(CertMatchesHost(files->cert_pem, "coord.example.org", false));
  EXPECT_TRUE(CertMatchesHost(files->cert_pem, "10.1.2.3", true));
  EXPECT_TRUE(CertMatchesHost(files->cert_pem, "server", false));
  // Only the SANs asked for.
  EXPECT_FALSE(CertMatchesHost(files->cert_pem, "localhost", false));
  auto id = pki::IdentityFromCertificatePem(files->cert_pem);
  ASSERT_THAT(id, IsOk());
  EXPECT_EQ(id->role, pki::Role::kServer);
}

TEST_F(CliTest, CaCommandsPrintJson) {
  const std::string ca = Path("ca");
  RunResult init =
      Run({"ca", "init", "--dir", ca, "--federation", "acme", "--days", "10", "--json"});
  ASSERT_EQ(init.exit_code, 0) << Describe(init);
  const auto i = nlohmann::json::parse(init.out);
  EXPECT_EQ(i["federation"], "acme");
  EXPECT_EQ(i["days"], 10);
  EXPECT_EQ(i["certificate"], ca + "/ca.crt");
  RunResult issue = Run(
      {"ca", "issue", "--dir", ca, "--name", "bank-a", "--role", "party", "--days", "3", "--json"});
  ASSERT_EQ(issue.exit_code, 0) << Describe(issue);
  const auto j = nlohmann::json::parse(issue.out);
  EXPECT_EQ(j["name"], "bank-a");
  EXPECT_EQ(j["role"], "party");
  EXPECT_EQ(j["certificate"], ca + "/bank-a.crt");
  EXPECT_EQ(j["key"], ca + "/bank-a.key");
  EXPECT_TRUE(std::filesystem::exists(j["certificate"].get<std::string>()));
  EXPECT_THAT(j["valid_until"].get<std::string>(), HasSubstr(" UTC"));
}

// Issue 56, item 1: the partner makes its own key; only public files travel.
TEST_F(CliTest, CaRequestSignCheckKeepsThePrivateKeyWithThePartner) {
  const std::string ca = Path("ca");
  RunResult init = Run({"ca", "init", "--dir", ca, "--federation", "acme-recsys"});
  ASSERT_EQ(init.exit_code, 0) << Describe(init);
  const std::string partner = Path("bank-a-certs");
  RunResult request =
      Run({"ca", "request", "--name", "bank-a", "--role", "party", "--out", partner, "--json"});
  ASSERT_EQ(request.exit_code, 0) << Describe(request);
  const auto r = nlohmann::json::parse(request.out);
  const std::string fingerprint = r["key_fingerprint"];
  EXPECT_EQ(r["request"], partner + "/bank-a.csr");
  EXPECT_EQ(r["key"], partner + "/bank-a.key");

  // The operator means to sign 'bank-a' as a party: another name, another
  // role or another key is refused (exit 4: the request file is wrong) and
  // nothing is written.
  const std::string signed_dir = Path("to-bank-a");
  const std::string csr = partner + "/bank-a.csr";
  RunResult wrong_name = Run({"ca", "sign", "--dir", ca, "--csr", csr, "--name", "shop-b", "--role",
                              "party", "--out", signed_dir});
  EXPECT_EQ(wrong_name.exit_code, 4) << Describe(wrong_name);
  EXPECT_THAT(wrong_name.err, HasSubstr("asks for 'bank-a' (role party)"));
  RunResult wrong_role = Run({"ca", "sign", "--dir", ca, "--csr", csr, "--name", "bank-a", "--role",
                              "operator", "--out", signed_dir});
  EXPECT_EQ(wrong_role.exit_code, 4) << Describe(wrong_role);
  std::string other_key = fingerprint;
  other_key.back() = other_key.back() == 'a' ? 'b' : 'a';
  RunResult wrong_key = Run({"ca", "sign", "--dir", ca, "--csr", csr, "--name", "bank-a", "--role",
                             "party", "--key-fingerprint", other_key, "--out", signed_dir});
  EXPECT_EQ(wrong_key.exit_code, 4) << Describe(wrong_key);
  RunResult missing = Run({"ca", "sign", "--dir", ca, "--csr", Path("nothere.csr"), "--name",
                           "bank-a", "--role", "party", "--out", signed_dir});
  EXPECT_EQ(missing.exit_code, 4) << Describe(missing);
  EXPECT_FALSE(std::filesystem::exists(signed_dir + "/bank-a.crt"));

  RunResult sign = Run({"ca", "sign", "--dir", ca, "--csr", csr, "--name", "bank-a", "--role",
                        "party", "--key-fingerprint", fingerprint, "--out", signed_dir});
  ASSERT_EQ(sign.exit_code, 0) << Describe(sign);
  EXPECT_THAT(sign.out, HasSubstr("key fingerprint " + fingerprint));
  std::set<std::string> sent;
  for (const auto& e : std::filesystem::directory_iterator(signed_dir)) {
    sent.insert(e.path().filename().string());
  }
  EXPECT_EQ(sent, (std::set<std::string>{"bank-a.crt", "ca.crt"}));

  RunResult not_yet = Run({"ca", "check", "--cert-dir", partner, "--name", "bank-a"});
  EXPECT_EQ(not_yet.exit_code, 4) << Describe(not_yet);
  EXPECT_THAT(not_yet.err, HasSubstr("bank-a.crt is missing"));
  std::filesystem::copy_file(signed_dir + "/bank-a.crt", partner + "/bank-a.crt");
  std::filesystem::copy_file(signed_dir + "/ca.crt", partner + "/ca.crt");
  RunResult check = Run({"ca", "check", "--cert-dir", partner, "--name", "bank-a"});
  ASSERT_EQ(check.exit_code, 0) << Describe(check);
  EXPECT_THAT(check.out, HasSubstr("'bank-a' (role party), key and certificate match"));
  // The CA fingerprint the operator announced at init is the one the partner sees.
  const std::string announced = init.out.substr(init.out.find("CA fingerprint ") + 15, 71);
  EXPECT_THAT(check.out, HasSubstr("CA fingerprint " + announced));
}

TEST_F(CliTest, SecondInitInSameDirectoryFails) {
  const std::string ca = Path("ca");
  ASSERT_EQ(Run({"ca", "init", "--dir", ca}).exit_code, 0);
  const std::string before = ReadFile(ca + "/ca.crt");
  RunResult again = Run({"ca", "init", "--dir", ca});
  // Refused by what is on disk, not by the command line: ALREADY_EXISTS,
  // a failure of the work (exit 1; cli::ExitCodeFor).
  EXPECT_EQ(again.exit_code, 1) << Describe(again);
  EXPECT_THAT(again.err, HasSubstr("fedmf ca init: "));
  EXPECT_THAT(again.err, HasSubstr("already exists"));
  EXPECT_THAT(again.err, HasSubstr(ca + "/ca."));
  EXPECT_EQ(ReadFile(ca + "/ca.crt"), before);  // nothing overwritten
}

// One failure path (cli::Report): a run-time failure of `ca init` exits 1,
// a usage error 2 — both as "fedmf ca init: <why>" on stderr. (ca init used
// to exit 2 for everything.)
TEST_F(CliTest, CaInitRuntimeFailureExitsOneUsageErrorExitsTwo) {
  // A directory that cannot be created, even by root: its parent is a file.
  const std::string file = Path("not-a-directory");
  std::ofstream(file) << "x";
  const RunResult runtime = Run({"ca", "init", "--dir", file + "/ca"});
  EXPECT_EQ(runtime.exit_code, 1) << Describe(runtime);
  EXPECT_EQ(runtime.err,
            absl::StrCat("fedmf ca init: cannot create directory ", file, "/ca: Not a directory\n"))
      << Describe(runtime);
  EXPECT_EQ(runtime.out, "");
  EXPECT_FALSE(std::filesystem::exists(file + "/ca"));

  const RunResult usage = Run({"ca", "init", "--dir", Path("ca"), "--days", "0"});
  EXPECT_EQ(usage.exit_code, 2) << Describe(usage);
  EXPECT_EQ(usage.err, "fedmf ca init: --days must be at least 1 (got 0)\n") << Describe(usage);
  EXPECT_FALSE(std::filesystem::exists(Path("ca") + "/ca.key"));

  const RunResult no_dir = Run({"ca", "init"});
  EXPECT_EQ(no_dir.exit_code, 2) << Describe(no_dir);
  EXPECT_THAT(no_dir.err, HasSubstr("--dir"));
}

TEST_F(CliTest, IssueErrorsAreClear) {
  const std::string ca = Path("ca");
  ASSERT_EQ(Run({"ca", "init", "--dir", ca}).exit_code, 0);

  RunResult role = Run({"ca", "issue", "--dir", ca, "--name", "p1", "--role", "admin"});
  EXPECT_EQ(role.exit_code, 2) << Describe(role);
  EXPECT_THAT(role.err, HasSubstr("fedmf ca issue: "));
  EXPECT_THAT(role.err, HasSubstr("party"));  // lists the valid roles

  RunResult name = Run({"ca", "issue", "--dir", ca, "--name", "Bad Name", "--role", "party"});
  EXPECT_EQ(name.exit_code, 2) << Describe(name);
  EXPECT_THAT(name.err, HasSubstr("fedmf ca issue: "));

  RunResult no_ca =
      Run({"ca", "issue", "--dir", Path("nowhere"), "--name", "p1", "--role", "party"});
  EXPECT_EQ(no_ca.exit_code, 2) << Describe(no_ca);
  EXPECT_THAT(no_ca.err, HasSubstr(Path("nowhere")));

  ASSERT_EQ(Run({"ca", "issue", "--dir", ca, "--name", "p1", "--role", "party"}).exit_code, 0);
  RunResult twice = Run({"ca", "issue", "--dir", ca, "--name", "p1", "--role", "party"});
  EXPECT_EQ(twice.exit_code, 1) << Describe(twice);
  EXPECT_THAT(twice.err, HasSubstr("already exists"));

  RunResult days =
      Run({"ca", "issue", "--dir", ca, "--name", "p2", "--role", "party", "--days", "0"});
  EXPECT_EQ(days.exit_code, 2) << Describe(days);
  EXPECT_THAT(days.err, HasSubstr("--days"));

  RunResult missing = Run({"ca", "issue", "--dir", ca, "--role", "party"});
  EXPECT_NE(missing.exit_code, 0) << Describe(missing);
  EXPECT_THAT(missing.out + missing.err, HasSubstr("--name"));
}

TEST_F(CliTest, PrivacyEpsilonJson) {
  RunResult r = Run({"privacy", "epsilon", "--sample-rate", "0.01", "--noise-multiplier", "1.1",
                     "--steps", "1000", "--delta", "1e-5", "--json"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const auto j = nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  ASSERT_TRUE(j.contains("epsilon") && j["epsilon"].is_number()) << r.out;
  const double eps = j["epsilon"].get<double>();
  EXPECT_TRUE(std::isfinite(eps));
  EXPECT_GT(eps, 0.0);
  // Known ballpark for q=0.01, z=1.1, 1000 steps, delta=1e-5 (about 1.0-1.3).
  EXPECT_LT(eps, 3.0);
  EXPECT_DOUBLE_EQ(j["delta"].get<double>(), 1e-5);
}

TEST_F(CliTest, PrivacyNoiseRoundTripsThroughEpsilon) {
  RunResult noise = Run({"privacy", "noise", "--sample-rate", "0.01", "--steps", "1000", "--delta",
                         "1e-5", "--epsilon", "1", "--json"});
  ASSERT_EQ(noise.exit_code, 0) << Describe(noise);
  const auto n = nlohmann::json::parse(noise.out, nullptr, false);
  ASSERT_FALSE(n.is_discarded()) << noise.out;
  ASSERT_TRUE(n["noise_multiplier"].is_number()) << noise.out;
  const double z = n["noise_multiplier"].get<double>();
  EXPECT_GT(z, 0.0);

  RunResult eps =
      Run({"privacy", "epsilon", "--sample-rate", "0.01", "--noise-multiplier",
           absl::StrFormat("%.17g", z), "--steps", "1000", "--delta", "1e-5", "--json"});
  ASSERT_EQ(eps.exit_code, 0) << Describe(eps);
  const auto e = nlohmann::json::parse(eps.out, nullptr, false);
  ASSERT_FALSE(e.is_discarded()) << eps.out;
  const double reached = e["epsilon"].get<double>();
  EXPECT_NEAR(reached, 1.0, 1e-3);
  EXPECT_LE(reached, 1.0 + 1e-9);  // calibration always meets the target
}

TEST_F(CliTest, PrivacyBadInputExitsNonZero) {
  RunResult r = Run({"privacy", "noise", "--sample-rate", "0.01", "--steps", "1000", "--delta",
                     "1e-5", "--epsilon", "-3"});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("--epsilon"));
  EXPECT_THAT(r.out, Not(HasSubstr("noise multiplier")));
}

TEST_F(CliTest, TrainRefusesHflPerRatingAndDefaultsToPerUser) {
  const std::string data = "synthetic:users=60,items=30,density=0.2";
  for (const char* setting : {"hfl", "hfl-synsgd"}) {
    RunResult r = Run({"train", "--setting", setting, "--data", data, "--granularity", "rating",
                       "--epsilon", "1", "--quiet", "--algorithm", "alternate"});
    EXPECT_EQ(r.exit_code, 2) << Describe(r);
    EXPECT_THAT(r.err, HasSubstr("per-rating privacy is not available for setting"));
    EXPECT_THAT(r.err, HasSubstr("--granularity user"));
  }
  const std::vector<std::string> small = {
      "train", "--setting", "hfl", "--data", data, "--parties", "3",     "--T", "2", "--T-local",
      "2",     "--epsilon", "1",   "--seed", "1",  "--quiet",   "--json"};
  RunResult d = Run(small);
  ASSERT_EQ(d.exit_code, 0) << Describe(d);
  const auto j = nlohmann::json::parse(d.out);
  EXPECT_EQ(j["granularity"], "user");
  // fedmf train's default for hfl is algorithm stats (issue #53): both
  // guarantees reported, at most the target.
  EXPECT_EQ(j["algorithm"], "stats");
  EXPECT_LE(j["epsilon"].get<double>(), 1.0 + 1e-9);
  EXPECT_GT(j["epsilon_alone"].get<double>(), 1.0);
  EXPECT_FALSE(j.contains("epsilon_per_user_global"));
  // Per rating, stats releases item biases only: offered.
  std::vector<std::string> rating = small;
  rating.insert(rating.end(), {"--granularity", "rating"});
  RunResult r = Run(rating);
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_EQ(nlohmann::json::parse(r.out)["releases"][0]["dim"], 0);
  // The SGD algorithm: the default clips each user's whole gradient; the
  // paper trims.
  std::vector<std::string> alternate = small;
  alternate.insert(alternate.end(), {"--algorithm", "alternate"});
  RunResult alt = Run(alternate);
  ASSERT_EQ(alt.exit_code, 0) << Describe(alt);
  const auto ja = nlohmann::json::parse(alt.out);
  EXPECT_EQ(ja["clip_norm"], 3.0);
  EXPECT_EQ(ja["theta"], 0);
  std::vector<std::string> paper_args = small;
  paper_args.insert(paper_args.end(), {"--algorithm", "paper"});
  RunResult paper = Run(paper_args);
  ASSERT_EQ(paper.exit_code, 0) << Describe(paper);
  EXPECT_EQ(nlohmann::json::parse(paper.out)["theta"], 10);
}

// --compare --repeats --epsilon-sweep (issue #53): the gain's mean, sd and
// 95% interval per epsilon over seeds, the baselines once per seed, a plot.
TEST_F(CliTest, TrainSweepReportsTheGainWithItsSpread) {
  const std::string plot = ::testing::TempDir() + "/sweep.svg";
  RunResult r =
      Run({"train", "--setting", "hfl", "--data", "synthetic", "--parties", "3", "--quiet",
           "--json", "--compare", "--repeats", "2", "--epsilon-sweep", "4,inf", "--plot", plot});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["sweep"].size(), 2u);
  ASSERT_EQ(j["baselines"].size(), 2u);
  EXPECT_EQ(j["baselines"][0]["seed"], 1);
  EXPECT_EQ(j["baselines"][1]["seed"], 2);
  for (const auto& p : j["sweep"]) {
    ASSERT_EQ(p["runs"].size(), 2u);
    double sum = 0;
    for (const auto& run : p["runs"]) sum += run["gain_captured"].get<double>();
    EXPECT_NEAR(p["gain_captured"].get<double>(), sum / 2, 1e-12);
    const double sd = p["gain_captured_sd"].get<double>();
    const double a = p["runs"][0]["gain_captured"].get<double>();
    const double b = p["runs"][1]["gain_captured"].get<double>();
    EXPECT_NEAR(sd, std::abs(a - b) / std::sqrt(2.0), 1e-12);
    EXPECT_LE(p["gain_captured_ci95"][0].get<double>(), p["gain_captured"].get<double>());
    EXPECT_GE(p["gain_captured_ci95"][1].get<double>(), p["gain_captured"].get<double>());
  }
  EXPECT_EQ(j["sweep"][1]["epsilon"], "inf");
  // Without noise the federation gains; at epsilon 4 on 600 users its
  // parties keep their own models (gain 0, never below).
  EXPECT_GT(j["sweep"][1]["gain_captured"].get<double>(), 0.5);
  EXPECT_GE(j["sweep"][0]["gain_captured"].get<double>(), -0.02);
  EXPECT_THAT(ReadFile(plot), HasSubstr("gain captured against epsilon"));
  // Issue #56: whether each gain is told from zero, by its 95% interval.
  for (const auto& p : j["sweep"]) {
    const double low = p["gain_captured_ci95"][0].get<double>();
    const double high = p["gain_captured_ci95"][1].get<double>();
    const std::string want = low > 0 ? "helps" : high < 0 ? "hurts" : "not distinguishable";
    EXPECT_EQ(p["gain_verdict"], want) << p.dump();
    EXPECT_EQ(p["gain_distinguishable"], want != "not distinguishable");
  }
  RunResult text = Run({"train", "--setting", "hfl", "--data", "synthetic", "--parties", "3",
                        "--quiet", "--compare", "--repeats", "2", "--epsilon", "inf"});
  ASSERT_EQ(text.exit_code, 0) << Describe(text);
  EXPECT_THAT(text.out, ::testing::ContainsRegex(
                            "epsilon inf: (joining helps: the 95% interval \\[.*\\] lies above 0 "
                            "\\(2 repeats\\)|not distinguishable from training alone with 2 "
                            "repeats: the 95% interval \\[.*\\] contains 0)"));
  RunResult no_compare = Run({"train", "--setting", "hfl", "--repeats", "2", "--quiet"});
  EXPECT_EQ(no_compare.exit_code, 2);
  EXPECT_THAT(no_compare.err, HasSubstr("add --compare"));
}

// --compare on a vertical split compares like with like: the default VFL
// ends with a noise-free model the party keeps, so its baseline is the
// better (on validation) of plain local SGD and the same job at epsilon
// 1e-6; the paper's ends with a DP model, compared with DP-SGD alone.
TEST_F(CliTest, VflCompareBaselineIsAsPrivateAsThePartysModel) {
  const std::vector<std::string> job = {"train",
                                        "--setting",
                                        "vfl",
                                        "--data",
                                        "synthetic:users=60,items=40,density=0.3",
                                        "--parties",
                                        "2",
                                        "--T",
                                        "3",
                                        "--T-local",
                                        "2",
                                        "--epsilon",
                                        "1",
                                        "--seed",
                                        "1",
                                        "--central-epochs",
                                        "3",
                                        "--quiet",
                                        "--json",
                                        "--compare"};
  std::vector<std::string> alt_job = job;
  alt_job.insert(alt_job.end(), {"--algorithm", "alternate"});
  RunResult alt = Run(alt_job);
  ASSERT_EQ(alt.exit_code, 0) << Describe(alt);
  const auto a = nlohmann::json::parse(alt.out);
  EXPECT_EQ(a["algorithm"], "alternate");
  ASSERT_TRUE(a.contains("mse_no_transfer"));
  ASSERT_TRUE(a.contains("mse_local_sgd"));
  ASSERT_TRUE(a.contains("mse_no_transfer_stats"));
  // The strongest of the local recipes (issue #53).
  const double local = a["mse_local"].get<double>();
  EXPECT_EQ(local, std::min({a["mse_local_sgd"].get<double>(), a["mse_no_transfer"].get<double>(),
                             a["mse_no_transfer_stats"].get<double>()}));
  EXPECT_THAT(a["mse_local_kind"].get<std::string>(),
              ::testing::AnyOf(HasSubstr("sgd: non-private"), HasSubstr("the vfl alternate job"),
                               HasSubstr("the vfl stats job")));
  std::vector<std::string> paper_job = job;
  paper_job.insert(paper_job.end(), {"--algorithm", "paper"});
  RunResult paper = Run(paper_job);
  ASSERT_EQ(paper.exit_code, 0) << Describe(paper);
  const auto p = nlohmann::json::parse(paper.out);
  EXPECT_EQ(p["mse_local_kind"], "dp-sgd at the job's epsilon");
  EXPECT_FALSE(p.contains("mse_no_transfer"));
  // The same split and pooled SGD fit; the default's central is the better of
  // it and the pooled stats model (issue #53).
  EXPECT_EQ(p["mse_central"], a["mse_central_sgd"]);
  EXPECT_EQ(a["mse_central"].get<double>(),
            std::min(a["mse_central_sgd"].get<double>(), a["mse_central_stats"].get<double>()));
}

// Without dropouts a session loses no device, and the secure sums are exact
// fixed-point sums either way: the same model to the last bit.
TEST_F(CliTest, TrainLflInASecAggSessionGivesTheSameModel) {
  std::vector<std::string> args = {
      "train", "--setting", "lfl",       "--data",  "synthetic:users=40,items=20,density=0.3",
      "--T",   "2",         "--epsilon", "4",       "--dropout",
      "0,0",   "--seed",    "3",         "--quiet", "--json"};
  RunResult fresh = Run(args);
  ASSERT_EQ(fresh.exit_code, 0) << Describe(fresh);
  args.push_back("--secagg-session");
  RunResult session = Run(args);
  ASSERT_EQ(session.exit_code, 0) << Describe(session);
  const auto a = nlohmann::json::parse(fresh.out), b = nlohmann::json::parse(session.out);
  EXPECT_EQ(a["secagg_session"], false);
  EXPECT_EQ(b["secagg_session"], true);
  EXPECT_EQ(a["test_mse"].get<double>(), b["test_mse"].get<double>());
}

TEST_F(CliTest, TrainVflPerUserReportsTheComposedGlobalEpsilon) {
  RunResult r = Run({"train",
                     "--setting",
                     "vfl",
                     "--data",
                     "synthetic:users=60,items=30,density=0.2",
                     "--parties",
                     "3",
                     "--granularity",
                     "user",
                     "--T",
                     "2",
                     "--T-local",
                     "2",
                     "--kappa",
                     "2",
                     "--algorithm",
                     "paper",  // charges kappa: T * T' + kappa = 6 steps per party
                     "--epsilon",
                     "1",
                     "--seed",
                     "1",
                     "--quiet",
                     "--json"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const auto j = nlohmann::json::parse(r.out);
  const double per_party = j["epsilon"].get<double>();
  const double global = j["epsilon_per_user_global"].get<double>();
  EXPECT_LE(per_party, 1.0 + 1e-9);
  // Three parties' curves summed: 3 x 6 steps of the same mechanism.
  RunResult e = Run({"privacy", "epsilon", "--sample-rate", "0.01", "--noise-multiplier",
                     absl::StrFormat("%.17g", j["noise_multiplier"].get<double>()), "--steps", "18",
                     "--delta", "1e-5", "--json"});
  ASSERT_EQ(e.exit_code, 0) << Describe(e);
  // The global composition also holds each party's one DP size release
  // (docs/privacy.md, size-release: ~5% of the gradient steps' RDP), so it
  // lies a little above the gradient steps' composition alone.
  const double gradients_only = nlohmann::json::parse(e.out)["epsilon"].get<double>();
  EXPECT_GT(global, gradients_only);
  EXPECT_LT(global, gradients_only * 1.1);
  EXPECT_GT(global, per_party);
}

// Issue #54: the JSON says what each step samples and how epsilon composes
// its releases, down to a `fedmf privacy epsilon` command that gives the same
// number: a reader recomputes epsilon from the JSON alone.
// A private stats run's summary states its guarantee: it has no SGD plan,
// and the line once read "non-private (no noise)" at epsilon 16.
TEST_F(CliTest, TrainTextStatesTheStatsGuarantee) {
  RunResult r =
      Run({"train", "--setting", "hfl", "--data", "synthetic:users=60,items=30,density=0.2",
           "--parties", "3", "--algorithm", "stats", "--epsilon", "16", "--seed", "1", "--quiet"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_THAT(r.out, HasSubstr("epsilon 16.0000 at delta 1e-05 against the server and 1 colluding "
                               "party"));
  EXPECT_THAT(r.out, Not(HasSubstr("non-private")));
  RunResult inf =
      Run({"train", "--setting", "hfl", "--data", "synthetic:users=60,items=30,density=0.2",
           "--parties", "3", "--algorithm", "stats", "--epsilon", "inf", "--seed", "1", "--quiet"});
  ASSERT_EQ(inf.exit_code, 0) << Describe(inf);
  EXPECT_THAT(inf.out, HasSubstr("non-private (no noise)"));
}

TEST_F(CliTest, TrainJsonLetsAReaderRecomputeEpsilon) {
  auto recompute = [&](const std::string& command) {
    std::vector<std::string> args = absl::StrSplit(command, ' ');
    EXPECT_EQ(args.front(), "fedmf");
    args.erase(args.begin());
    args.push_back("--json");
    RunResult e = Run(args);
    EXPECT_EQ(e.exit_code, 0) << Describe(e);
    return nlohmann::json::parse(e.out)["epsilon"].get<double>();
  };
  const struct {
    const char* setting;
    const char* granularity;
    const char* unit;
  } jobs[] = {{"vfl", "rating", "rating"},
              {"vfl", "user", "user"},
              {"local", "rating", "rating"},
              {"hfl", "user", "user"}};
  for (const auto& job : jobs) {
    std::vector<std::string> args = {"train",
                                     "--setting",
                                     job.setting,
                                     "--data",
                                     "synthetic:users=60,items=30,density=0.2",
                                     "--parties",
                                     "3",
                                     "--granularity",
                                     job.granularity,
                                     "--T",
                                     "2",
                                     "--T-local",
                                     "2",
                                     "--epsilon",
                                     "1",
                                     "--seed",
                                     "1",
                                     "--quiet",
                                     "--json"};
    if (std::string(job.setting) == "local") args.insert(args.end(), {"--split", "vertical"});
    // The SGD algorithm, RDP-accounted (train's default for these is stats,
    // whose Gaussian-DP accounting has a JSON of its own).
    if (std::string(job.setting) != "local") args.insert(args.end(), {"--algorithm", "alternate"});
    RunResult r = Run(args);
    ASSERT_EQ(r.exit_code, 0) << Describe(r);
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["sampling_unit"], job.unit) << job.setting << " per " << job.granularity;
    ASSERT_TRUE(j["accounting"].is_object()) << r.out;
    EXPECT_EQ(j["accounting"]["accountant"], "rdp");
    EXPECT_EQ(j["accounting"]["composes"][0]["sampling_unit"], job.unit);
    EXPECT_EQ(j["accounting"]["composes"][0]["sample_rate"], j["sample_rate"]);
    EXPECT_EQ(j["accounting"]["composes"][0]["steps"], j["steps"]);
    EXPECT_EQ(j["accounting"]["composes"][1]["noise_multiplier"], j["count_noise_multiplier"]);
    const double eps = recompute(j["accounting"]["epsilon_command"].get<std::string>());
    EXPECT_NEAR(eps, j["epsilon"].get<double>(), 1e-9 * eps) << job.setting;
    if (j.contains("epsilon_per_user_global")) {
      const double global =
          recompute(j["accounting"]["epsilon_per_user_global_command"].get<std::string>());
      EXPECT_NEAR(global, j["epsilon_per_user_global"].get<double>(), 1e-9 * global);
    }
  }
}

// Issue #54: --tune built its proxy from the exact rating count, so removing
// one rating could change the chosen learning rate. The proxy's shape is now
// declared (--tune-shape) and nothing of the data enters it: two data sets
// that differ in one rating give the very same tuning, grid and all.
TEST_F(CliTest, TuneReadsNothingOfTheData) {
  std::string lines;
  int kept = 0;
  for (int u = 1; u <= 60; ++u) {
    for (int i = 1; i <= 40; ++i) {
      if ((u * 7 + i * 13) % 5 != 0) continue;
      lines += absl::StrCat(u, "\t", i, "\t", 1 + (u + i) % 5, "\t0\n");
      ++kept;
    }
  }
  const std::string full = Path("full.data"), less = Path("less.data");
  std::ofstream(full) << lines;
  std::ofstream(less) << lines.substr(lines.find('\n') + 1);  // one rating fewer
  auto tune = [&](const std::string& file, bool shape) {
    std::vector<std::string> args = {"train",
                                     "--setting",
                                     "vfl",
                                     "--data",
                                     "movielens:" + file,
                                     "--rating-range",
                                     "1,5",
                                     "--parties",
                                     "2",
                                     "--T",
                                     "2",
                                     "--T-local",
                                     "2",
                                     "--epsilon",
                                     "1",
                                     "--seed",
                                     "1",
                                     "--tune",
                                     "--quiet",
                                     "--json"};
    if (shape) args.insert(args.end(), {"--tune-shape", "users=60,items=40,ratings=480"});
    return Run(args);
  };
  RunResult a = tune(full, true), b = tune(less, true);
  ASSERT_EQ(a.exit_code, 0) << Describe(a);
  ASSERT_EQ(b.exit_code, 0) << Describe(b);
  const auto ja = nlohmann::json::parse(a.out), jb = nlohmann::json::parse(b.out);
  ASSERT_TRUE(ja.contains("tuning")) << a.out;
  EXPECT_EQ(ja["tuning"], jb["tuning"]);
  EXPECT_GE(ja["tuning"]["grid"].size(), 5u);
  // Without a declared shape --tune refuses, naming the flag and why.
  RunResult none = tune(full, false);
  EXPECT_NE(none.exit_code, 0) << Describe(none);
  EXPECT_THAT(none.err, HasSubstr("--tune-shape users=N,items=M,ratings=R"));
  EXPECT_THAT(none.err, HasSubstr("private"));
  EXPECT_GT(kept, 400);
}

// fedmf train --setting coupling: --epsilon calibrates z for all the steps;
// --coupling-sigma is the paper's absolute noise, z = sigma / C, and the
// epsilon reported is the accountant's for those steps.
// --write-split writes exactly the ratings the central run trained and
// tested on (its JSON counts), with ids inside the data's dense ranges, so
// another engine (LIBMF, docs/benchmarks.md) can run on the same split.
TEST_F(CliTest, TrainWritesTheCentralSplitForAnotherEngine) {
  const std::string dir = Path("split");
  RunResult r = Run({"train", "--setting", "central", "--data",
                     "synthetic:users=50,items=40,density=0.3,seed=2", "--central-epochs", "2",
                     "--dim", "3", "--seed", "1", "--quiet", "--json", "--write-split", dir});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  const nlohmann::json& party = j["per_party"][0];
  std::map<std::string, int64_t> lines;
  for (const char* name : {"train.txt", "test.txt"}) {
    std::ifstream in(dir + "/" + name);
    ASSERT_TRUE(in.good()) << name;
    int64_t user = 0, item = 0;
    double value = 0;
    while (in >> user >> item >> value) {
      ++lines[name];
      EXPECT_GE(user, 0);
      EXPECT_LT(user, 50);
      EXPECT_GE(item, 0);
      EXPECT_LT(item, 40);
      EXPECT_GE(value, 1);
      EXPECT_LE(value, 5);
    }
    EXPECT_TRUE(in.eof()) << name << ": a line that is not 'user item rating'";
  }
  EXPECT_EQ(lines["train.txt"], party["train_ratings"].get<int64_t>());
  EXPECT_EQ(lines["test.txt"], party["test_ratings"].get<int64_t>());
  EXPECT_EQ(lines["train.txt"] + lines["test.txt"], 600);  // 0.3 * 50 * 40

  RunResult hfl = Run({"train", "--setting", "hfl", "--write-split", dir});
  EXPECT_EQ(hfl.exit_code, 2);
  EXPECT_THAT(hfl.err, HasSubstr("--write-split writes the central setting's split"));
}

TEST_F(CliTest, TrainCouplingAccountsEveryStepAndTakesThePapersSigma) {
  const std::vector<std::string> base = {"train",
                                         "--setting",
                                         "coupling",
                                         "--data",
                                         "synthetic:users=30,items=40,density=0.3",
                                         "--parties",
                                         "2",
                                         "--sample-rate",
                                         "0.1",
                                         "--coupling-epochs",
                                         "3",
                                         "--dim",
                                         "4",
                                         "--seed",
                                         "1",
                                         "--quiet",
                                         "--json"};
  std::vector<std::string> args = base;
  args.insert(args.end(), {"--epsilon", "2"});
  RunResult r = Run(args);
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["setting"], "coupling");
  EXPECT_EQ(j["steps"].get<int>(), 30);  // 3 epochs of ceil(1/q) = 10 steps
  EXPECT_EQ(j["parameters"].get<int>(), 30 * 4 + 40 * 4 + 30 * 30 + 40 * 40);
  EXPECT_LE(j["epsilon"].get<double>(), 2.0 + 1e-9);
  EXPECT_GT(j["epsilon"].get<double>(), 1.99);
  EXPECT_DOUBLE_EQ(j["sigma"].get<double>(),
                   j["noise_multiplier"].get<double>() * j["clip"].get<double>());
  EXPECT_GT(j["test_rmse"].get<double>(), 0);

  args = base;
  args.insert(args.end(), {"--coupling-sigma", "0.1"});
  r = Run(args);
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  j = nlohmann::json::parse(r.out);
  EXPECT_NEAR(j["noise_multiplier"].get<double>(), 0.6, 1e-12);  // 0.1 / (1/6)
  RunResult e = Run({"privacy", "epsilon", "--sample-rate", "0.1", "--noise-multiplier", "0.6",
                     "--steps", "30", "--delta", "1e-5", "--json"});
  ASSERT_EQ(e.exit_code, 0) << Describe(e);
  EXPECT_NEAR(j["epsilon"].get<double>(), nlohmann::json::parse(e.out)["epsilon"].get<double>(),
              1e-9);

  args = base;
  args.insert(args.end(), {"--coupling-sigma", "-1"});
  r = Run(args);
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("--coupling-sigma -1: must be >= 0"));
  args = base;
  args.insert(args.end(), {"--coupling-clip", "0"});
  r = Run(args);
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("coupling option clip = 0: must be > 0"));
  for (const char* fraction : {"1.5", "-0.1", "1"}) {
    args = base;
    args.insert(args.end(), {"--validation-fraction", fraction});
    r = Run(args);
    EXPECT_EQ(r.exit_code, 2) << Describe(r);
    EXPECT_THAT(r.err,
                HasSubstr(absl::StrCat("--validation-fraction ", fraction, ": must be in [0, 1)")));
  }
  // None held out: no validation error rather than a validation error of 0.
  args = base;
  args.insert(args.end(), {"--validation-fraction", "0", "--epsilon", "inf"});
  r = Run(args);
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j["validation_rmse"].is_null()) << r.out;
  EXPECT_EQ(j["validation_ratings"].get<int>(), 0);
  EXPECT_TRUE(j["per_epoch"][0]["validation_rmse"].is_null()) << r.out;
}

// Two small synthetic players, a grid of inf, 2 and alone: seconds per run.
std::vector<std::string> SmallAdvise() {
  return {"advise",
          "--setting",
          "hfl",
          "--party-data",
          "synthetic:users=50,items=30,density=0.25,seed=1",
          "--party-data",
          "synthetic:users=50,items=30,density=0.25,seed=2",
          "--epsilons",
          "2",
          "--T",
          "3",
          "--T-local",
          "2",
          "--dim",
          "4",
          "--seed",
          "3",
          "--quiet"};
}

TEST_F(CliTest, AdviseFindsTheEquilibriaAndWritesThePlot) {
  const std::vector<std::string> common = SmallAdvise();
  std::vector<std::string> args = common;
  for (const char* a : {"--json", "--plot"}) args.push_back(a);
  args.push_back(Path("advice.svg"));
  RunResult r = Run(args);
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["grid"]["epsilon"], nlohmann::json::parse(R"(["inf", 2.0, "alone"])"));
  EXPECT_EQ(j["grid"]["rmse_player1"].size(), 3u);
  // Theorem 1: (alone, alone) is always among the equilibria.
  bool alone_alone = false;
  for (const auto& e : j["equilibria"]) {
    if (e["epsilon"] == nlohmann::json::parse(R"(["alone", "alone"])")) alone_alone = true;
  }
  EXPECT_TRUE(alone_alone) << j["equilibria"].dump();
  ASSERT_TRUE(j["recommendation"].contains("collaborate"));
  EXPECT_EQ(j["recommendation"]["epsilon"].size(), 2u);
  if (!j["price_of_privacy"].is_null()) {
    EXPECT_GE(j["price_of_privacy"].get<double>(), -1e-12);
    EXPECT_LE(j["price_of_privacy"].get<double>(), 1.0 + 1e-12);
  }
  // Joint mode: an inf cell releases without noise, so the grid costs inf.
  EXPECT_EQ(j["measurement_cost"]["epsilon_per_party"][0], "inf");
  const std::string svg = ReadFile(Path("advice.svg"));
  EXPECT_THAT(svg, HasSubstr("<svg"));
  EXPECT_THAT(svg, HasSubstr("player 2: b2, max"));

  // Proxy mode reads nothing but the shape and costs nothing.
  args = common;
  for (const char* a : {"--json", "--mode", "proxy"}) args.push_back(a);
  RunResult p = Run(args);
  ASSERT_EQ(p.exit_code, 0) << Describe(p);
  EXPECT_EQ(nlohmann::json::parse(p.out)["measurement_cost"]["epsilon_per_party"][0], 0.0);
}

// Issue #56: train and demo --plot draw each party's final model as its
// marked last point (the per-round MSE is the Stage-2 model's) and, with
// --compare, the local and central baselines as dashed lines, at the values
// the JSON reports.
TEST_F(CliTest, TrainPlotMarksTheFinalModelAndDrawsTheBaselines) {
  // train in one process (per-round MSE with --eval-every), then demo over
  // the daemons (per-round MSE from the parties' opt-in reports).
  for (const std::string command : {"train", "demo"}) {
    SCOPED_TRACE(command);
    const std::string plot = Path(command + ".svg");
    std::vector<std::string> args = {
        command,     "--setting", "hfl",    "--algorithm", "alternate", "--data",
        "synthetic", "--parties", "3",      "--T",         "4",         "--seed",
        "2",         "--quiet",   "--json", "--compare",   "--plot",    plot};
    if (command == "train") args.insert(args.end(), {"--eval-every", "1"});
    RunResult r = Run(args);
    ASSERT_EQ(r.exit_code, 0) << Describe(r);
    const auto j = nlohmann::json::parse(r.out);
    const std::string svg = ReadFile(plot);
    auto value = [&](const std::string& anchor, const std::string& attr) {
      const size_t at = svg.find(anchor);
      if (at == std::string::npos) return std::string("<missing ") + anchor + ">";
      const size_t v = svg.find(attr + "=\"", at) + attr.size() + 2;
      return svg.substr(v, svg.find('"', v) - v);
    };
    ASSERT_EQ(j["per_party"].size(), 3u);
    const int rounds = j["rounds"].get<int>();
    ASSERT_EQ(rounds, 4);
    for (int k = 0; k < 3; ++k) {
      const std::string name = absl::StrCat("party-", k);
      // The per-round line, one point per round, ends before the final point.
      const std::vector<std::string> points = absl::StrSplit(
          value(absl::StrCat("<polyline class=\"series\" data-series=\"", name, "\""),
                "data-values"),
          ' ');
      EXPECT_EQ(static_cast<int>(points.size()), rounds) << name;
      const std::vector<std::string> final_point = absl::StrSplit(
          value(absl::StrCat("<circle class=\"final\" data-series=\"", name, "\""), "data-value"),
          ':');
      ASSERT_EQ(final_point.size(), 2u) << svg;
      EXPECT_EQ(std::stoi(final_point[0]), rounds + 1);
      EXPECT_NEAR(std::stod(final_point[1]), j["per_party"][k]["test_mse"].get<double>(), 1e-5);
    }
    EXPECT_NEAR(std::stod(value("data-series=\"local only\"", "data-value")),
                j["mse_local"].get<double>(), 1e-5);
    EXPECT_NEAR(std::stod(value("data-series=\"central\"", "data-value")),
                j["mse_central"].get<double>(), 1e-5);
    EXPECT_THAT(svg, HasSubstr(">final model</text>"));
  }
  // Without --compare no baseline is drawn, the final points still are.
  RunResult plain =
      Run({"train", "--setting", "hfl", "--algorithm", "alternate", "--data", "synthetic",
           "--parties", "3", "--T", "4", "--seed", "2", "--quiet", "--plot", Path("plain.svg")});
  ASSERT_EQ(plain.exit_code, 0) << Describe(plain);
  const std::string p = ReadFile(Path("plain.svg"));
  EXPECT_THAT(p, Not(HasSubstr("class=\"reference\"")));
  EXPECT_THAT(p, HasSubstr("<circle class=\"final\" data-series=\"party-2\""));
}

// Issue #56: advise measures the grid --repeats times, plays the game on the
// mean grid and says whether each player's gain is told from zero.
TEST_F(CliTest, AdviseRepeatsPlayTheMeanGridAndJudgeTheGain) {
  std::vector<std::string> args = SmallAdvise();
  args.insert(args.end(), {"--repeats", "3"});
  std::vector<std::string> json_args = args;
  json_args.push_back("--json");
  RunResult r = Run(json_args);
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["repeats"], 3);
  EXPECT_EQ(j["seeds"], nlohmann::json::parse("[3, 4, 5]"));
  ASSERT_EQ(j["repeat_grids"].size(), 3u);
  // The game's grid is the mean of the three.
  for (int n = 1; n <= 2; ++n) {
    const std::string key = absl::StrCat("rmse_player", n);
    double sum = 0;
    for (const auto& g : j["repeat_grids"]) sum += g[key][0][0].get<double>();
    EXPECT_NEAR(j["grid"][key][0][0].get<double>(), sum / 3, 1e-12);
  }
  EXPECT_NE(j["repeat_grids"][0]["rmse_player1"], j["repeat_grids"][1]["rmse_player1"]);
  // Each player's gain at the judged cell, recomputed from the repeats.
  const auto& rec = j["recommendation"];
  ASSERT_EQ(rec["gain"].size(), 2u);
  const auto& labels = j["grid"]["epsilon"];
  size_t ci = 0, cj = 0;
  for (size_t a = 0; a < labels.size(); ++a) {
    if (labels[a] == rec["gain_epsilon"][0]) ci = a;
    if (labels[a] == rec["gain_epsilon"][1]) cj = a;
  }
  for (int n = 0; n < 2; ++n) {
    const std::string key = absl::StrCat("rmse_player", n + 1);
    double sum = 0;
    for (const auto& g : j["repeat_grids"]) {
      const double alone = g["alone_rmse"][n].get<double>();
      const double together =
          labels[ci] == "alone" || labels[cj] == "alone" ? alone : g[key][ci][cj].get<double>();
      sum += (alone - together) / alone;
    }
    const auto& gain = rec["gain"][n];
    EXPECT_NEAR(gain["mean"].get<double>(), sum / 3, 1e-12);
    const double low = gain["ci95"][0].get<double>(), high = gain["ci95"][1].get<double>();
    EXPECT_EQ(gain["verdict"], low > 0 ? "helps" : high < 0 ? "hurts" : "not distinguishable");
  }
  // Collaborating is recommended only with both gains told above zero.
  if (rec["collaborate"].get<bool>()) {
    EXPECT_EQ(rec["gain"][0]["verdict"], "helps");
    EXPECT_EQ(rec["gain"][1]["verdict"], "helps");
  }
  // The text says it in words; a replay of the JSON keeps the repeats.
  RunResult text = Run(args);
  ASSERT_EQ(text.exit_code, 0) << Describe(text);
  EXPECT_THAT(text.out, HasSubstr("repeats (seeds 3..5):"));
  EXPECT_THAT(text.out, ::testing::ContainsRegex("player 1: mean .*: (joining helps|joining "
                                                 "hurts|not distinguishable from training alone)"));
  const std::string saved = Path("advice.json");
  std::ofstream(saved) << r.out;
  RunResult replay = Run({"advise", "--grid-from", saved, "--json", "--quiet"});
  ASSERT_EQ(replay.exit_code, 0) << Describe(replay);
  const auto rj = nlohmann::json::parse(replay.out);
  EXPECT_EQ(rj["repeats"], 3);
  EXPECT_EQ(rj["recommendation"]["gain"], rec["gain"]);
  EXPECT_EQ(rj["recommendation"]["collaborate"], rec["collaborate"]);
}

TEST_F(CliTest, AdviseErrorsNameTheFlag) {
  RunResult one = Run({"advise", "--party-data", "synthetic", "--quiet"});
  EXPECT_EQ(one.exit_code, 2);
  EXPECT_THAT(one.err, HasSubstr("give --party-data exactly twice"));
  RunResult w = Run({"advise", "--party-data", "synthetic", "--party-data", "synthetic",
                     "--weights", "1,0.1,1", "--quiet"});
  EXPECT_EQ(w.exit_code, 2);
  EXPECT_THAT(w.err, HasSubstr("--weights has 3 values; give B1,C1,B2,C2"));
  RunResult m = Run({"advise", "--party-data", "synthetic", "--party-data", "synthetic", "--mode",
                     "guess", "--quiet"});
  EXPECT_EQ(m.exit_code, 2);
  EXPECT_THAT(m.err, HasSubstr("use joint, self-division or proxy"));
  RunResult s = Run({"advise", "--setting", "central", "--party-data", "synthetic", "--party-data",
                     "synthetic", "--quiet"});
  EXPECT_EQ(s.exit_code, 2);
  EXPECT_THAT(s.err, HasSubstr("use hfl, hfl-synsgd or vfl"));
}

TEST_F(CliTest, UnknownCommandIsNamedWithTheClosestOneAndExitsUsage) {
  const RunResult typo = Run({"trian", "--setting", "hfl"});
  EXPECT_EQ(typo.exit_code, 2) << Describe(typo);
  EXPECT_NE(typo.err.find("unknown command 'trian' (did you mean 'train'?)"), std::string::npos)
      << Describe(typo);
  EXPECT_NE(typo.err.find("commands: train, demo"), std::string::npos) << Describe(typo);
  const RunResult flag = Run({"train", "--no-such-flag"});
  EXPECT_EQ(flag.exit_code, 2) << Describe(flag);
  EXPECT_NE(flag.err.find("--no-such-flag"), std::string::npos) << Describe(flag);
  EXPECT_NE(flag.err.find("--help"), std::string::npos) << Describe(flag);
  const RunResult none = Run({});
  EXPECT_EQ(none.exit_code, 2) << Describe(none);
  // Settings: train takes all ten, demo only those that run over daemons,
  // and each error lists what it takes.
  const RunResult setting = Run({"train", "--setting", "bogus"});
  EXPECT_EQ(setting.exit_code, 2) << Describe(setting);
  EXPECT_THAT(setting.err,
              HasSubstr("fedmf: --setting 'bogus': use one of central, local, vfl, hfl, "
                        "hfl-synsgd, lfl, hua-s1, hua-s2, hua-s2-tp, hua-s3, coupling, cdr\n"))
      << Describe(setting);
  const RunResult demo = Run({"demo", "--setting", "central"});
  EXPECT_EQ(demo.exit_code, 2) << Describe(demo);
  EXPECT_THAT(demo.err, HasSubstr("fedmf: --setting 'central': use one of hfl, vfl, hfl-synsgd, "
                                  "lfl, hua-s3, coupling\n"))
      << Describe(demo);
  // The help lists the same settings.
  const RunResult help = Run({"demo", "--help"});
  EXPECT_THAT(help.out, HasSubstr("--setting TEXT:{hfl,vfl,hfl-synsgd,lfl,hua-s3,coupling}=hfl"));
}

TEST_F(CliTest, VersionAndHelpExitZeroOnStdout) {
  const RunResult v = Run({"--version"});
  EXPECT_EQ(v.exit_code, 0) << Describe(v);
  EXPECT_EQ(v.out.rfind("fedmf ", 0), 0u) << Describe(v);
  EXPECT_NE(v.out.find('.'), std::string::npos) << Describe(v);  // fedmf MAJOR.MINOR.PATCH
  const RunResult h = Run({"train", "--help"});
  EXPECT_EQ(h.exit_code, 0) << Describe(h);
  EXPECT_NE(h.out.find("--setting"), std::string::npos) << Describe(h);
}

}  // namespace
}  // namespace fedmf
