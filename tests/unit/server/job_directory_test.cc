// JobDirectory (server/job_directory.h) over the JobRunner seam: a runner
// that implements only the interface plugs in with nothing else changed —
// submissions go to the runner that takes the setting, jobs are found in
// whichever runner holds them, listed runner by runner, and the default
// cancel of a device runner refuses naming its kind.
#include "server/job_directory.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "server/job_runner.h"
#include "tests/testing/status_matchers.h"

using ::fedmf::testing::IsOk;
using ::fedmf::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

namespace fedmf::server {
namespace {

// A protocol reduced to the seam: jobs held in a map, in submission order.
class MapRunner final : public JobRunner {
 public:
  MapRunner(std::string kind, v1::Setting setting) : kind_(std::move(kind)), setting_(setting) {}
  std::string_view kind() const override { return kind_; }
  bool Takes(v1::Setting setting) const override { return setting == setting_; }
  absl::Status Start() override { return absl::OkStatus(); }
  void Stop() override {}
  absl::StatusOr<std::string> SubmitJob(const v1::JobSpec& spec, const std::string&) override {
    v1::JobStatus st;
    *st.mutable_spec() = spec;
    st.set_state(v1::JOB_STATE_WAITING);
    st.add_rounds()->set_round(0);
    ids_.push_back(spec.job_id());
    jobs_[spec.job_id()] = st;
    return spec.job_id();
  }
  absl::StatusOr<v1::JobStatus> GetJob(const std::string& job_id) override {
    auto it = jobs_.find(job_id);
    if (it == jobs_.end()) return absl::NotFoundError(absl::StrCat("no ", kind_, " job"));
    return it->second;
  }
  absl::StatusOr<std::vector<std::string>> JobIds() override { return ids_; }
  v1::ListPartiesResponse ListParties() override {
    v1::ListPartiesResponse out;
    out.add_parties()->set_name(kind_ + "-participant");
    return out;
  }

 private:
  std::string kind_;
  v1::Setting setting_;
  std::vector<std::string> ids_;
  std::map<std::string, v1::JobStatus> jobs_;
};

v1::JobSpec JobSpecOf(const std::string& id, v1::Setting setting) {
  v1::JobSpec spec;
  spec.set_job_id(id);
  spec.set_setting(setting);
  return spec;
}

TEST(JobDirectoryTest, RoutesFindsAndListsJobsAcrossRunners) {
  MapRunner silo("cross-silo", v1::SETTING_HFL), devices("lfl", v1::SETTING_LFL);
  const JobDirectory jobs({&silo, &devices});
  EXPECT_EQ(jobs.RunnerFor(v1::SETTING_LFL), &devices);
  EXPECT_EQ(jobs.RunnerFor(v1::SETTING_HFL), &silo);
  // A setting no runner claims goes to the first, which refuses it itself.
  EXPECT_EQ(jobs.RunnerFor(v1::SETTING_HUA_S3), &silo);

  ASSERT_THAT(devices.SubmitJob(JobSpecOf("d1", v1::SETTING_LFL), ""), IsOk());
  ASSERT_THAT(silo.SubmitJob(JobSpecOf("s1", v1::SETTING_HFL), ""), IsOk());
  ASSERT_THAT(silo.SubmitJob(JobSpecOf("s2", v1::SETTING_HFL), ""), IsOk());

  auto found = jobs.RunnerOf("d1");
  ASSERT_THAT(found, IsOk());
  EXPECT_EQ(*found, &devices);
  auto one = jobs.Get("s2");
  ASSERT_THAT(one, IsOk());
  EXPECT_EQ(one->rounds_size(), 1);  // Get keeps the history
  EXPECT_EQ(one->rounds_completed(), 1);
  EXPECT_THAT(jobs.Get("nope"), StatusIs(absl::StatusCode::kNotFound, HasSubstr("no job 'nope'")));

  auto list = jobs.List();
  ASSERT_THAT(list, IsOk());
  std::vector<std::string> ids;
  for (const v1::JobStatus& st : *list) {
    ids.push_back(st.spec().job_id());
    EXPECT_EQ(st.rounds_size(), 0) << "the list carries no per-round history";
    EXPECT_EQ(st.rounds_completed(), 1);
  }
  EXPECT_THAT(ids, ElementsAre("s1", "s2", "d1"));  // runner by runner, in their order

  const v1::ListPartiesResponse parties = jobs.ListParties();
  ASSERT_EQ(parties.parties_size(), 2);
  EXPECT_EQ(parties.parties(0).name(), "cross-silo-participant");
  EXPECT_EQ(parties.parties(1).name(), "lfl-participant");

  // The default cancel: device jobs end at their own deadlines.
  EXPECT_THAT(devices.CancelJob("d1", "op", true),
              StatusIs(absl::StatusCode::kUnimplemented, HasSubstr("device job (lfl)")));
  EXPECT_FALSE(devices.WatchesJobs());
}

}  // namespace
}  // namespace fedmf::server
