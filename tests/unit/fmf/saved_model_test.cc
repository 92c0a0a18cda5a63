// Saved party models (common/fmf/saved_model.h): what --save-model writes is
// what recommend --model reads, the offline top-N is the party's own, and a
// damaged or foreign directory is an error naming the file and field.
#include "common/fmf/saved_model.h"

#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/data/partition.h"
#include "common/data/synthetic.h"
#include "common/fmf/admitted_job.h"
#include "common/fmf/party_session.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/temp_dir.h"

namespace fedmf::fmf {
namespace {

using ::fedmf::testing::IsOk;
using ::fedmf::testing::StatusIs;
using ::testing::HasSubstr;

class SavedModelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = tmp_.path();
    data::SyntheticOptions o;
    o.num_users = 40;
    o.num_items = 25;
    o.density = 0.3;
    ASSERT_OK_AND_ASSIGN(auto d, data::GenerateSynthetic(o));
    dataset_ = d;
    ASSERT_OK_AND_ASSIGN(auto f, data::PartitionHfl(dataset_, 2, {0.1, 3}));
    fed_ = f;
    config_.setting = Setting::kHfl;
    config_.split = SplitKind::kHorizontal;
    config_.rounds = 2;
    config_.local_iters = 2;
    config_.dim = 3;
    config_.epsilon = std::numeric_limits<double>::infinity();
    config_.pretrain_epochs = 3;
    ASSERT_OK_AND_ASSIGN(
        auto admitted, AdmittedJob::Admit(config_, {fed_.parties[0].range, 5, "party-0"}, nullptr));
    auto session = PartySession::Create(std::move(admitted), fed_.parties[0], fed_.num_users,
                                        fed_.num_items, nullptr);
    ASSERT_THAT(session, IsOk());
    session_ = std::move(*session);
    random::Csprng rng = random::Csprng::FromSeed(6);
    ASSERT_THAT(session_->Pretrain(InitialSharedMatrix(config_, fed_.num_items, rng)), IsOk());
  }

  SavedModel Model() {
    auto p = PartyModelFrom("party-0", fed_.parties[0], session_->user_embeddings(),
                            session_->item_embeddings(), session_->rating_offset(),
                            dataset_.user_ids, dataset_.item_ids);
    EXPECT_THAT(p, IsOk());
    return SavedModel{"hfl", "job-1", {*p}};
  }

  ::fedmf::testing::ScopedTempDir tmp_{"fedmf-model-"};
  std::string dir_;
  data::Dataset dataset_;
  data::Federation fed_;
  JobConfig config_;
  std::unique_ptr<PartySession> session_;
};

TEST_F(SavedModelTest, RoundTripKeepsEveryByteAndRecommendsAsTheParty) {
  const SavedModel model = Model();
  ASSERT_THAT(WriteSavedModel(dir_, model), IsOk());
  ASSERT_OK_AND_ASSIGN(auto read, ReadSavedModel(dir_));
  ASSERT_EQ(read.parties.size(), 1u);
  const SavedPartyModel& p = read.parties[0];
  EXPECT_EQ(read.setting, "hfl");
  EXPECT_EQ(read.job, "job-1");
  EXPECT_EQ(p.user_ids, model.parties[0].user_ids);
  EXPECT_EQ(p.item_ids, model.parties[0].item_ids);
  EXPECT_EQ(p.u, model.parties[0].u);  // bit for bit
  EXPECT_EQ(p.v, model.parties[0].v);
  EXPECT_EQ(p.rated, model.parties[0].rated);
  EXPECT_EQ(p.rated.size(), fed_.parties[0].train.size() + fed_.parties[0].test.size());
  // Offline top-N = the live session's, rated items left out, with and
  // without include_rated.
  for (bool include_rated : {false, true}) {
    for (int32_t local : {0, 3, 7}) {
      const int32_t global = fed_.parties[0].global_users[local];
      ASSERT_OK_AND_ASSIGN(auto live, session_->Recommend(global, 6, include_rated));
      ASSERT_OK_AND_ASSIGN(auto offline,
                           RecommendFromModel(p, dataset_.user_ids[global], 6, include_rated));
      ASSERT_EQ(offline.size(), live.size());
      for (size_t i = 0; i < live.size(); ++i) {
        EXPECT_EQ((offline)[i].first, dataset_.item_ids[(live)[i].first]);
        EXPECT_EQ((offline)[i].second, (live)[i].second);
      }
      if (!include_rated) {
        for (const data::Rating& r : fed_.parties[0].train) {
          if (r.user != local) continue;
          for (const auto& [item, score] : offline) {
            EXPECT_NE(item, dataset_.item_ids[fed_.parties[0].global_items[r.item]]);
          }
        }
      }
    }
  }
  EXPECT_THAT(RecommendFromModel(p, "nobody", 3, false),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("user 'nobody'")));
}

// Issue 56, item 10: the ranking rule travels with the model, and orders
// recommend --model: with a popularity weight, the most rated item the user
// has not rated comes first whatever its prediction.
TEST_F(SavedModelTest, TheRankingRuleTravelsWithTheModelAndOrdersRecommendations) {
  SavedModel model = Model();
  model.parties[0].ranking = {20, 100, 3.1};
  ASSERT_THAT(WriteSavedModel(dir_, model), IsOk());
  ASSERT_OK_AND_ASSIGN(auto read, ReadSavedModel(dir_));
  const SavedPartyModel& p = read.parties[0];
  EXPECT_EQ(p.ranking, model.parties[0].ranking);
  std::vector<int32_t> support(p.item_ids.size(), 0);
  for (const auto& [u, i] : p.rated) ++support[i];
  const int32_t user = 0;
  int32_t best = -1;
  for (int32_t j = 0; j < static_cast<int32_t>(support.size()); ++j) {
    bool rated = false;
    for (const auto& [u, i] : p.rated) rated |= u == user && i == j;
    if (!rated && (best < 0 || support[j] > support[best])) best = j;
  }
  ASSERT_OK_AND_ASSIGN(auto top, RecommendFromModel(p, p.user_ids[user], 1, false));
  ASSERT_EQ(top.size(), 1u);
  EXPECT_EQ((top)[0].first, p.item_ids[best]);
  // A rule that is not one is a damaged file.
  std::string text;
  {
    std::ifstream in(dir_ + "/model.json");
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  const std::string from = "\"popularity_weight\": 100.0";
  ASSERT_NE(text.find(from), std::string::npos) << text;
  text.replace(text.find(from), from.size(), "\"popularity_weight\": -1.0");
  std::ofstream(dir_ + "/model.json", std::ios::trunc) << text;
  EXPECT_THAT(ReadSavedModel(dir_), StatusIs(absl::StatusCode::kDataLoss, HasSubstr("ranking")));
}

TEST_F(SavedModelTest, DamagedOrForeignDirectoriesAreClearErrors) {
  EXPECT_THAT(ReadSavedModel(dir_), StatusIs(absl::StatusCode::kNotFound, HasSubstr("model.json")));
  ASSERT_THAT(WriteSavedModel(dir_, Model()), IsOk());
  const std::string meta = dir_ + "/model.json";
  std::string text;
  {
    std::ifstream in(meta);
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  auto rewrite = [&](const std::string& from, const std::string& to) {
    std::string t = text;
    t.replace(t.find(from), from.size(), to);
    std::ofstream(meta, std::ios::trunc) << t;
  };
  rewrite("\"version\": 1", "\"version\": 7");
  EXPECT_THAT(ReadSavedModel(dir_),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("field 'version' must be 1")));
  rewrite("\"fedmf-model\"", "\"other\"");
  EXPECT_THAT(ReadSavedModel(dir_),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("field 'format'")));
  rewrite("\"dim\": 3", "\"dim\": 4");
  EXPECT_THAT(ReadSavedModel(dir_),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("party-0.u.f64")));
  std::ofstream(meta, std::ios::trunc) << text;
  ASSERT_THAT(ReadSavedModel(dir_), IsOk());
  // A truncated id list.
  std::ofstream(dir_ + "/party-0.users.txt", std::ios::trunc) << "1\n2\n";
  EXPECT_THAT(ReadSavedModel(dir_),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("party-0.users.txt: 2 ids")));
}

TEST_F(SavedModelTest, ShapesAreCheckedBeforeAnythingIsWritten) {
  SavedModel model = Model();
  model.parties[0].item_ids.pop_back();
  EXPECT_THAT(WriteSavedModel(dir_ + "/bad", model),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("party 'party-0': U is")));
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/bad"));
  model = Model();
  model.parties[0].name = "../escape";
  EXPECT_THAT(WriteSavedModel(dir_, model),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("party name '../escape'")));
}

}  // namespace
}  // namespace fedmf::fmf
