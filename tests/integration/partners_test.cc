// Issue #15's acceptance with real daemons: partners that each bring their own
// ratings file. HFL maps items by a public catalogue (a party holding another
// catalogue refuses before reading data; string ids and row order change
// nothing); VFL aligns users by a private set intersection of which the
// server's database, logs and metrics keep no user id.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/data/catalogue.h"
#include "common/fmf/wire/job_codec.h"
#include "common/random/csprng.h"
#include "common/store/sqlite.h"
#include "httplib.h"
#include "tests/integration/cluster_test_util.h"
#include "tests/testing/status_matchers.h"

using ::fedmf::testing::IsOk;

namespace fedmf::it {
namespace {

struct Row {
  std::string user, item;
  int rating;
};

// Low rank plus noise, so items or users matched wrongly change the model.
std::vector<Row> Ratings(int users, int items, uint64_t seed) {
  random::Csprng rng = random::Csprng::FromSeed(seed);
  std::vector<double> uf(users), vf(items);
  for (double& x : uf) x = rng.NextDouble();
  for (double& x : vf) x = rng.NextDouble();
  std::vector<Row> rows;
  for (int u = 0; u < users; ++u) {
    for (int i = 0; i < items; ++i) {
      if (!rng.Bernoulli(0.25)) continue;
      const int r = std::clamp(static_cast<int>(1 + 4 * uf[u] * vf[i] + rng.NextDouble()), 1, 5);
      rows.push_back({absl::StrCat(u), absl::StrCat(i), r});
    }
  }
  return rows;
}

void WriteCsv(const std::string& path, std::vector<Row> rows, uint64_t shuffle_seed) {
  random::Csprng rng = random::Csprng::FromSeed(shuffle_seed);
  std::shuffle(rows.begin(), rows.end(), rng);
  std::ofstream out(path);
  out << "user,item,rating\n";
  for (const Row& r : rows) out << r.user << "," << r.item << "," << r.rating << "\n";
}

// What fedmf-server stored of each party's offer reply for `job_id`
// (server/fmf/server_store.cc): the sizes the party sent and its weight.
struct StoredSizes {
  std::string name;
  int64_t users = 0, items = 0, global_users = 0, global_items = 0;
  double weight = 0;
};
std::vector<StoredSizes> StoredReplySizes(const std::string& db_path, const std::string& job_id) {
  std::vector<StoredSizes> out;
  auto db = store::Database::Open(db_path);
  EXPECT_THAT(db, IsOk());
  if (!db.ok()) return out;
  auto st = (*db)->Prepare(
      "SELECT name, users, items, global_users, global_items, weight FROM job_parties WHERE "
      "job_id = ? ORDER BY ord");
  EXPECT_THAT(st, IsOk());
  if (!st.ok()) return out;
  st->Bind(1, job_id);
  while (true) {
    auto row = st->Step();
    EXPECT_THAT(row, IsOk());
    if (!row.ok() || !*row) break;
    out.push_back({st->ColumnText(0), st->ColumnInt(1), st->ColumnInt(2), st->ColumnInt(3),
                   st->ColumnInt(4), st->ColumnDouble(5)});
  }
  return out;
}

v1::JobSpec Spec(const std::string& setting, const std::string& job_id, int parties) {
  cli::JobFlags flags;
  flags.setting = cli::ParseSettingKind(setting).value();
  flags.epsilon = "2";
  flags.rounds = 4;
  flags.local_iters = 2;
  flags.kappa = 2;
  flags.dim = 4;
  auto config = cli::BuildJobConfig(flags, data::RatingRange{1, 5});
  EXPECT_THAT(config, IsOk());
  config->job_id = job_id;
  v1::JobSpec spec = net::SpecFromJobConfig(*config);
  for (int k = 0; k < parties; ++k) spec.add_roster(cluster::LocalCluster::PartyName(k));
  spec.set_round_deadline_seconds(120);
  return spec;
}

class PartnersTest : public ClusterTest {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/fedmf_partners_" + std::to_string(::getpid());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    ClusterTest::TearDown();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  std::string Path(const std::string& f) const { return dir_ + "/" + f; }

  cluster::ClusterOptions Options(const std::string& role, int parties) const {
    cluster::ClusterOptions o;
    o.bin_dir = BinDir();
    o.parties = parties;
    o.role = role;
    o.seed = 3;
    o.poll_seconds = 0.5;
    o.liveness_seconds = 30;
    o.rating_min = 1;
    o.rating_max = 5;
    return o;
  }

  // Runs the HFL job of two partners (+ optionally a third with another
  // catalogue) to its end; returns the status.
  v1::JobStatus RunHfl(const std::string& a, const std::string& b, const std::string& catalogue,
                       const std::string& other_catalogue) {
    const int parties = other_catalogue.empty() ? 2 : 3;
    cluster::ClusterOptions o = Options("hfl", parties);
    const std::string files[3] = {a, b, a};
    for (int k = 0; k < parties; ++k) {
      cluster::PartyOptions p;
      p.own_file = true;
      p.data_spec = "csv:" + Path(files[k]);
      p.catalogue = k == 2 ? Path(other_catalogue) : Path(catalogue);
      o.party_overrides[k] = p;
    }
    std::vector<int> all;
    for (int k = 0; k < parties; ++k) all.push_back(k);
    StartCluster(o, all);
    v1::JobSpec spec = Spec("hfl", "partners-hfl", parties);
    auto cat = data::Catalogue::Load(Path(catalogue));
    EXPECT_THAT(cat, IsOk());
    spec.set_item_catalogue(cat->digest());
    spec.set_min_parties(2);
    auto id = cluster_->SubmitJob(spec);
    EXPECT_THAT(id, IsOk());
    auto st = cluster_->WaitJob(*id, absl::Minutes(3));
    EXPECT_THAT(st, IsOk());
    v1::JobStatus out = *st;
    cluster_->StopAll();
    return out;
  }

  std::string dir_;
};

TEST_F(PartnersTest, HflByCatalogueMatchesPreAlignedDataAndRefusesAnotherCatalogue) {
  const std::vector<Row> all = Ratings(60, 70, 5);
  std::vector<int> order(70);
  for (int i = 0; i < 70; ++i) order[i] = (i * 29) % 70;  // the catalogue's own order
  std::vector<int> position(70);
  for (int p = 0; p < 70; ++p) position[order[p]] = p;
  std::vector<Row> a, b, a_aligned, b_aligned;
  for (const Row& r : all) {
    const int u = std::stoi(r.user), i = std::stoi(r.item);
    const bool to_a = u < 30 && i < 50, to_b = u >= 30 && i >= 15;  // overlap 15..49
    if (!to_a && !to_b) continue;
    const std::string user = absl::StrCat(to_a ? "acct-" : "cust/", 1000 + u);
    (to_a ? a : b).push_back({user, absl::StrCat("sku:", i), r.rating});
    (to_a ? a_aligned : b_aligned).push_back({user, absl::StrCat(position[i]), r.rating});
  }
  WriteCsv(Path("a.csv"), a, 1);
  WriteCsv(Path("b.csv"), b, 2);
  WriteCsv(Path("a_aligned.csv"), a_aligned, 3);
  WriteCsv(Path("b_aligned.csv"), b_aligned, 4);
  {
    std::ofstream named(Path("skus.txt")), aligned(Path("positions.txt")), other(Path("other.txt")),
        other_aligned(Path("other_positions.txt"));
    for (int p = 0; p < 70; ++p) {
      named << "sku:" << order[p] << "\n";
      aligned << p << "\n";
      other << "sku:" << p << "\n";  // same items, another order: another catalogue
      other_aligned << 69 - p << "\n";
    }
  }
  const v1::JobStatus named = RunHfl("a.csv", "b.csv", "skus.txt", "other.txt");
  ASSERT_EQ(named.state(), v1::JOB_STATE_FINISHED) << named.error();
  const v1::PartyStatus* third = FindParty(named, "party-2");
  ASSERT_NE(third, nullptr);
  EXPECT_FALSE(third->accepted());
  EXPECT_TRUE(absl::StrContains(third->refusal(), "catalogue")) << third->refusal();
  EXPECT_EQ(third->epsilon_spent(), 0);
  const std::string log2 = ReadFile(cluster_->work_dir() + "/logs/party-2.log");
  EXPECT_FALSE(absl::StrContains(log2, "not used")) << "party-2 mapped its data for the job";
  // No count of a partner's own file reached the server (issue #54, item 3):
  // the catalogue's size as V's rows, a DP weight, and no user count.
  for (const StoredSizes& p :
       StoredReplySizes(cluster_->work_dir() + "/server.db", "partners-hfl")) {
    if (p.name == "party-2") continue;  // refused: nothing stored
    SCOPED_TRACE(p.name);
    EXPECT_EQ(p.global_users, 0);
    EXPECT_EQ(p.global_items, 70);
    EXPECT_EQ(p.items, 70);
  }

  cluster_.reset();
  // The same partners with their items already written as catalogue
  // positions and their rows in other orders (the third party refuses again).
  const v1::JobStatus aligned =
      RunHfl("a_aligned.csv", "b_aligned.csv", "positions.txt", "other_positions.txt");
  ASSERT_EQ(aligned.state(), v1::JOB_STATE_FINISHED) << aligned.error();
  for (const char* name : {"party-0", "party-1"}) {
    const v1::PartyStatus* n = FindParty(named, name);
    const v1::PartyStatus* p = FindParty(aligned, name);
    ASSERT_NE(n, nullptr);
    ASSERT_NE(p, nullptr);
    ASSERT_TRUE(n->accepted()) << n->refusal();
    EXPECT_GT(n->test_count(), 0);
    EXPECT_EQ(n->test_count(), p->test_count()) << name;
    // Seeded noise, same federation: the same model to the last bit.
    EXPECT_EQ(n->test_mse(), p->test_mse()) << name;
  }
}

TEST_F(PartnersTest, VflAlignsUsersByPrivateSetIntersectionAndTheServerKeepsNoId) {
  const std::vector<Row> all = Ratings(150, 45, 6);
  random::Csprng rng = random::Csprng::FromSeed(8);
  std::vector<std::set<int>> holds(3);
  for (auto& h : holds) {
    for (int u = 0; u < 150; ++u) {
      if (rng.Bernoulli(0.8)) h.insert(u);
    }
  }
  std::vector<std::vector<Row>> files(3);
  std::vector<std::set<std::string>> users(3);
  std::set<std::string> every_id;
  for (const Row& r : all) {
    const int u = std::stoi(r.user), i = std::stoi(r.item);
    const int k = i % 3;
    if (!holds[k].contains(u)) continue;
    const std::string id = absl::StrCat("member", 7000 + u, "@bank.example");
    files[k].push_back({id, absl::StrCat("offer-", k, "-", i), r.rating});
    users[k].insert(id);
    every_id.insert(id);
  }
  int shared = 0;
  for (const std::string& id : users[0]) shared += users[1].contains(id) && users[2].contains(id);
  ASSERT_GT(shared, 40);
  cluster::ClusterOptions o = Options("vfl", 3);
  o.metrics = true;
  for (int k = 0; k < 3; ++k) {
    WriteCsv(Path(absl::StrCat("v", k, ".csv")), files[k], 10 + k);
    cluster::PartyOptions p;
    p.own_file = true;
    p.data_spec = "csv:" + Path(absl::StrCat("v", k, ".csv"));
    o.party_overrides[k] = p;
  }
  ASSERT_NO_FATAL_FAILURE(StartCluster(o, {0, 1, 2}));
  v1::JobSpec spec = Spec("vfl", "partners-vfl", 3);
  spec.set_align_users(true);
  auto id = cluster_->SubmitJob(spec);
  ASSERT_THAT(id, IsOk());
  auto st = cluster_->WaitJob(*id, absl::Minutes(3));
  ASSERT_THAT(st, IsOk());
  ASSERT_EQ(st->state(), v1::JOB_STATE_FINISHED) << st->error();
  EXPECT_EQ(st->aligned_users(), shared);
  for (int k = 0; k < 3; ++k) {
    const v1::PartyStatus& p = st->parties(k);
    EXPECT_TRUE(p.accepted()) << p.refusal();
    EXPECT_GT(p.test_count(), 0);
    const std::string log = ReadFile(cluster_->work_dir() + "/logs/" + p.name() + ".log");
    EXPECT_TRUE(absl::StrContains(log, absl::StrCat(shared, " shared"))) << p.name();
  }
  // The server learnt the intersection's size (and logs it), no id.
  const std::string server_log = cluster_->ServerLog();
  EXPECT_TRUE(absl::StrContains(server_log, absl::StrCat(shared, " shared"))) << server_log;
  httplib::Client client("127.0.0.1", cluster_->server_metrics_port());
  auto metrics = client.Get("/metrics");
  ASSERT_TRUE(metrics) << "no /metrics";
  cluster_->StopAll();  // the database is complete and closed
  const std::string db = ReadFile(cluster_->work_dir() + "/server.db");
  ASSERT_FALSE(db.empty());
  int found = 0;
  for (const std::string& id : every_id) {
    // The local part alone too ("member7012"), in case of another encoding.
    const std::string local = id.substr(0, id.find('@'));
    const std::string& body = metrics->body;
    for (const std::string* text : {&server_log, &db, &body}) {
      found += absl::StrContains(*text, local);
    }
  }
  EXPECT_EQ(found, 0) << "user ids reached the server";
  // Sizes (issue #54, item 3): U's rows are the intersection, which the
  // server knows from the alignment; no party declared an item count, so
  // each sends 1 and is averaged with weight 1 (the count of distinct items
  // in its file never leaves it).
  const std::vector<StoredSizes> sizes = StoredReplySizes(cluster_->work_dir() + "/server.db", *id);
  ASSERT_EQ(sizes.size(), 3u);
  for (const StoredSizes& p : sizes) {
    SCOPED_TRACE(p.name);
    EXPECT_EQ(p.users, shared);
    EXPECT_EQ(p.global_users, shared);
    EXPECT_EQ(p.items, 1);
    EXPECT_EQ(p.global_items, 1);
    EXPECT_EQ(p.weight, 1);
  }
  // The test can see them where they are: in the parties' own files.
  EXPECT_TRUE(absl::StrContains(ReadFile(Path("v0.csv")), "member70"));
}

// A party killed during an aligned VFL job and restarted on its state dir
// rejoins with the alignment it kept (no second intersection), and the job
// finishes with it.
TEST_F(PartnersTest, APartyRestartedDuringAnAlignedJobRejoinsWithItsStoredAlignment) {
  const std::vector<Row> all = Ratings(80, 30, 9);
  std::vector<std::vector<Row>> files(2);
  for (const Row& r : all) {
    const int u = std::stoi(r.user), i = std::stoi(r.item);
    const int k = i % 2;
    if ((k == 0 && u % 7 == 3) || (k == 1 && u % 5 == 1)) continue;  // ~80% overlap
    files[k].push_back({absl::StrCat("c", u), absl::StrCat("i", i), r.rating});
  }
  cluster::ClusterOptions o = Options("vfl", 2);
  for (int k = 0; k < 2; ++k) {
    WriteCsv(Path(absl::StrCat("r", k, ".csv")), files[k], 40 + k);
    cluster::PartyOptions p;
    p.own_file = true;
    p.data_spec = "csv:" + Path(absl::StrCat("r", k, ".csv"));
    o.party_overrides[k] = p;
  }
  ASSERT_NO_FATAL_FAILURE(StartCluster(o, {0, 1}));
  v1::JobSpec spec = Spec("vfl", "partners-restart", 2);
  spec.set_align_users(true);
  spec.set_rounds(150);
  auto id = cluster_->SubmitJob(spec);
  ASSERT_THAT(id, IsOk());
  // Bounded poll of the job's rounds: kill party-1 once Stage 2 has begun.
  int closed = 0;
  const absl::Time give_up = absl::Now() + absl::Minutes(2);
  while (closed < 2 && absl::Now() < give_up) {
    auto st = cluster_->GetJob(*id);
    ASSERT_THAT(st, IsOk());
    ASSERT_NE(st->state(), v1::JOB_STATE_FAILED) << st->error();
    closed = st->rounds_size();
    if (closed < 2) absl::SleepFor(absl::Milliseconds(5));
  }
  ASSERT_GE(closed, 2) << "Stage 2 never began";
  ASSERT_LT(closed, 150) << "the job ended before the restart";
  cluster_->KillParty(1);
  ASSERT_THAT(cluster_->StartParty(1), IsOk());
  auto st = cluster_->WaitJob(*id, absl::Minutes(3));
  ASSERT_THAT(st, IsOk());
  ASSERT_EQ(st->state(), v1::JOB_STATE_FINISHED) << st->error();
  const v1::PartyStatus* restarted = FindParty(*st, "party-1");
  ASSERT_NE(restarted, nullptr);
  EXPECT_GT(restarted->test_count(), 0);
  EXPECT_EQ(restarted->last_round(), 149);
  const std::string log = ReadFile(cluster_->work_dir() + "/logs/party-1.log");
  EXPECT_TRUE(absl::StrContains(log, "users aligned before a restart")) << log;
  // One intersection only: the server opened one alignment.
  const std::string server_log = cluster_->ServerLog();
  size_t opened = 0;
  for (size_t at = server_log.find("aligning the users"); at != std::string::npos;
       at = server_log.find("aligning the users", at + 1)) {
    ++opened;
  }
  EXPECT_EQ(opened, 1u) << server_log;
}

// The party's PSI policy (issue #54, item 4): a partner bringing a list more
// than max_partner_list_ratio times the party's own is refused before the
// party's key touches it, every alignment is in the party's ledger database
// with its partners and sizes, and alignments with the same partners are
// limited per day.
TEST_F(PartnersTest, APsiWithAnOversizedPartnerListIsRefusedRecordedAndRateLimited) {
  std::vector<std::vector<Row>> files(2);
  const std::vector<Row> all = Ratings(300, 20, 12);
  for (const Row& r : all) {
    const int u = std::stoi(r.user), i = std::stoi(r.item);
    if (i % 2 == 0 && u < 50) files[0].push_back({absl::StrCat("c", u), r.item, r.rating});
    if (i % 2 == 1) files[1].push_back({absl::StrCat("c", u), r.item, r.rating});
  }
  cluster::ClusterOptions o = Options("vfl", 2);
  for (int k = 0; k < 2; ++k) {
    WriteCsv(Path(absl::StrCat("p", k, ".csv")), files[k], 60 + k);
    cluster::PartyOptions p;
    p.own_file = true;
    p.data_spec = "csv:" + Path(absl::StrCat("p", k, ".csv"));
    // Party-0's limit is the one under test; party-1's default (3) lets it
    // answer, so the job fails on party-0's refusal, not on whichever
    // party refused first (party-1's own limit raced it).
    p.max_alignments_per_day = k == 0 ? 1 : 3;
    o.party_overrides[k] = p;
  }
  ASSERT_NO_FATAL_FAILURE(StartCluster(o, {0, 1}));
  std::set<std::string> users0, users1;
  for (const Row& r : files[0]) users0.insert(r.user);
  for (const Row& r : files[1]) users1.insert(r.user);
  ASSERT_GT(users1.size(), 4 * users0.size());  // party-1 brings > 4x party-0's ids

  const std::vector<std::string> rules{"max_partner_list_ratio", "max_alignments_per_day"};
  for (size_t attempt = 0; attempt < rules.size(); ++attempt) {
    SCOPED_TRACE(rules[attempt]);
    v1::JobSpec spec = Spec("vfl", absl::StrCat("psi-", attempt), 2);
    spec.set_align_users(true);
    auto id = cluster_->SubmitJob(spec);
    ASSERT_THAT(id, IsOk());
    auto st = cluster_->WaitJob(*id, absl::Minutes(3));
    ASSERT_THAT(st, IsOk());
    EXPECT_EQ(st->state(), v1::JOB_STATE_FAILED);
    const v1::PartyStatus* p0 = FindParty(*st, "party-0");
    ASSERT_NE(p0, nullptr);
    EXPECT_TRUE(absl::StrContains(p0->refusal(), rules[attempt])) << p0->refusal();
    // The refusal names the rule, not the sizes (they are in the party's log).
    EXPECT_FALSE(absl::StrContains(p0->refusal(), absl::StrCat(users1.size()))) << p0->refusal();
  }
  // One alignment was started (the second was refused before any list), and
  // the party's database holds it with the partners and sizes it saw.
  auto ledger = cluster_->PartyLedger(0);
  ASSERT_THAT(ledger, IsOk());
  ASSERT_EQ(ledger->alignments_size(), 1);
  const v1::AlignmentRecord& a = ledger->alignments(0);
  EXPECT_EQ(a.job_id(), "psi-0");
  EXPECT_EQ(a.partners(), "party-1");
  EXPECT_EQ(a.own_size(), static_cast<int64_t>(users0.size()));
  EXPECT_EQ(a.partner_sizes(), absl::StrCat("party-1=", users1.size()));
  EXPECT_EQ(a.shared(), -1);
  EXPECT_EQ(a.outcome(), "refused: policy.max_partner_list_ratio");
  EXPECT_GT(a.started_unix(), 0);
}

// The party, not the server, chooses its partners (issue #54, item 4): a
// party whose allowed_partners lack a roster name refuses the job, naming
// it, and the others train without it.
TEST_F(PartnersTest, APartyRefusesARosterNamingAPartnerItDoesNotList) {
  cluster::ClusterOptions o = Options("hfl", 3);
  cluster::PartyOptions wary;
  wary.allowed_partners = std::vector<std::string>{"party-0"};
  o.party_overrides[2] = wary;
  ASSERT_NO_FATAL_FAILURE(StartCluster(o, {0, 1, 2}));
  v1::JobSpec spec = Spec("hfl", "roster", 3);
  spec.set_min_parties(2);
  auto id = cluster_->SubmitJob(spec);
  ASSERT_THAT(id, IsOk());
  auto st = cluster_->WaitJob(*id, absl::Minutes(3));
  ASSERT_THAT(st, IsOk());
  ASSERT_EQ(st->state(), v1::JOB_STATE_FINISHED) << st->error();
  const v1::PartyStatus* p2 = FindParty(*st, "party-2");
  ASSERT_NE(p2, nullptr);
  EXPECT_FALSE(p2->accepted());
  EXPECT_TRUE(absl::StrContains(p2->refusal(), "'party-1'")) << p2->refusal();
  EXPECT_TRUE(absl::StrContains(p2->refusal(), "allowed_partners")) << p2->refusal();
  auto ledger = cluster_->PartyLedger(2);
  ASSERT_THAT(ledger, IsOk());
  EXPECT_EQ(ledger->entries_size(), 0);
  for (const char* name : {"party-0", "party-1"}) {
    const v1::PartyStatus* p = FindParty(*st, name);
    ASSERT_NE(p, nullptr);
    EXPECT_TRUE(p->accepted()) << p->refusal();
  }
}

// A party validates its file at start: a bad row, or no file at all, stops
// fedmf-party before it registers, with the file and line to fix.
TEST_F(PartnersTest, APartyWithABadOrMissingFileRefusesToStart) {
  {
    std::ofstream bad(Path("bad.csv"));
    bad << "user,item,rating\nacct-1,sku:1,4\nacct-2,sku:2,four\n";
  }
  std::ofstream(Path("items.txt")) << "sku:1\nsku:2\n";
  cluster::ClusterOptions o = Options("hfl", 2);
  for (int k = 0; k < 2; ++k) {
    cluster::PartyOptions p;
    p.own_file = true;
    p.data_spec = "csv:" + Path(k == 0 ? "bad.csv" : "absent.csv");
    p.catalogue = Path("items.txt");
    o.party_overrides[k] = p;
  }
  auto cluster = cluster::LocalCluster::Create(o);
  ASSERT_THAT(cluster, IsOk());
  cluster_ = std::move(*cluster);
  ASSERT_THAT(cluster_->StartServer(), IsOk());
  // Both refuse to start with the data error's exit code (4).
  for (int k = 0; k < 2; ++k) {
    const absl::Status started = cluster_->StartParty(k);
    EXPECT_FALSE(started.ok());
    EXPECT_TRUE(absl::StrContains(started.message(), "exited (code 4)")) << started;
  }
  const std::string log0 = ReadFile(cluster_->work_dir() + "/logs/party-0.log");
  const std::string log1 = ReadFile(cluster_->work_dir() + "/logs/party-1.log");
  EXPECT_TRUE(absl::StrContains(log0, Path("bad.csv") + ":3")) << log0;
  EXPECT_TRUE(absl::StrContains(log0, "validates its data before it starts")) << log0;
  EXPECT_TRUE(absl::StrContains(log1, Path("absent.csv"))) << log1;
  for (const std::string* log : {&log0, &log1}) {
    EXPECT_FALSE(absl::StrContains(*log, "registered with")) << *log;
  }
  EXPECT_FALSE(absl::StrContains(cluster_->ServerLog(), "registered")) << cluster_->ServerLog();
}

// Issue 56, items 2 and 3: a party checks its file against the catalogue
// before it registers. A file of another item-id scheme refuses to start
// (exit 4) with file:line and the fix, naming no "party 0"; a file with some
// items outside the catalogue starts, and its log warns with the count and the
// first file:line.
TEST_F(PartnersTest, APartyChecksItsFileAgainstTheCatalogueBeforeItStarts) {
  {
    std::ofstream cat(Path("items.txt"));
    for (int i = 0; i < 20; ++i) cat << "sku-" << i << "\n";
    std::ofstream other(Path("other-scheme.csv"));
    other << "user,item,rating\n";
    for (int u = 0; u < 10; ++u)
      other << "c" << u << ",ART" << 1000 + u << "," << 1 + u % 5 << "\n";
    std::ofstream some(Path("some-outside.csv"));
    some << "user,item,rating\n";
    for (int u = 0; u < 10; ++u) {
      for (int i = 0; i < 10; ++i) {
        // Every tenth rating (rows 10, 20, ...: lines 11, 21, ...) is of an
        // item the catalogue lacks.
        some << "c" << u << "," << (i == 9 ? "retired-" : "sku-") << i + u % 5 << ","
             << 1 + (u + i) % 5 << "\n";
      }
    }
  }
  cluster::ClusterOptions o = Options("hfl", 2);
  for (int k = 0; k < 2; ++k) {
    cluster::PartyOptions p;
    p.own_file = true;
    p.data_spec = "csv:" + Path(k == 0 ? "other-scheme.csv" : "some-outside.csv");
    p.catalogue = Path("items.txt");
    o.party_overrides[k] = p;
  }
  auto cluster = cluster::LocalCluster::Create(o);
  ASSERT_THAT(cluster, IsOk());
  cluster_ = std::move(*cluster);
  ASSERT_THAT(cluster_->StartServer(), IsOk());
  const absl::Status refused = cluster_->StartParty(0);
  EXPECT_TRUE(absl::StrContains(refused.message(), "exited (code 4)")) << refused;
  const std::string log0 = ReadFile(cluster_->work_dir() + "/logs/party-0.log");
  EXPECT_TRUE(absl::StrContains(log0, "none of its 10 item ids is in the catalogue")) << log0;
  EXPECT_TRUE(absl::StrContains(log0, Path("other-scheme.csv") + ":2")) << log0;
  EXPECT_TRUE(absl::StrContains(log0, "another item-id scheme")) << log0;
  EXPECT_FALSE(absl::StrContains(log0, "party 0")) << log0;
  EXPECT_FALSE(absl::StrContains(log0, "registered with")) << log0;

  ASSERT_THAT(cluster_->StartParty(1), IsOk());
  const std::string log1 = ReadFile(cluster_->work_dir() + "/logs/party-1.log");
  EXPECT_TRUE(absl::StrContains(log1,
                                "10 of its 100 ratings are left out (items outside the "
                                "catalogue " +
                                    Path("items.txt") + "); the first is " +
                                    Path("some-outside.csv") + ":11"))
      << log1;
  EXPECT_TRUE(absl::StrContains(log1, "warn")) << log1;
}

}  // namespace
}  // namespace fedmf::it
