// `fedmf train --setting cdr` end to end: the keys of the acceptance check,
// the source's epsilon, determinism under --seed and the errors.
#include <filesystem>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/unit/tools/fedmf_runner.h"

namespace fedmf {
namespace {

using ::testing::HasSubstr;

class CdrCliTest : public FedmfCliTest {
 protected:
  void SetUp() override {
    FedmfCliTest::SetUp();
    if (!std::filesystem::exists(u_data_)) GTEST_SKIP() << "needs ../shared/data/ml-100k";
  }
  // Tiny networks and few steps: the test checks the wiring, not the quality.
  std::vector<std::string> Args(const std::string& epsilon) const {
    return {"train",
            "--setting",
            "cdr",
            "--data",
            "movielens:" + u_data_,
            "--epsilon",
            epsilon,
            "--seed",
            "1",
            "--dim",
            "4",
            "--cdr-epochs",
            "2",
            "--cdr-steps",
            "5",
            "--cdr-batch",
            "16",
            "--cdr-latent",
            "4",
            "--cdr-hidden",
            "8",
            "--json"};
  }
  const std::string u_data_ = FEDMF_SHARED_DIR "/data/ml-100k/u.data";
};

void ExpectMetrics(const nlohmann::json& j) {
  for (const char* key : {"hr_at_5", "hr_at_10", "ndcg_at_5", "ndcg_at_10", "mrr"}) {
    ASSERT_TRUE(j.contains(key)) << key << " in " << j.dump();
    EXPECT_GT(j[key].get<double>(), 0) << key;
    EXPECT_LE(j[key].get<double>(), 1) << key;
  }
  EXPECT_LE(j["hr_at_5"].get<double>(), j["hr_at_10"].get<double>());
  EXPECT_LE(j["ndcg_at_10"].get<double>(), j["hr_at_10"].get<double>());
  EXPECT_EQ(j["cases"].get<int>(), 872);
}

TEST_F(CdrCliTest, PrintsTheRankingMetricsTheSourcesEpsilonAndTheComparisons) {
  std::vector<std::string> args = Args("1.2");
  args.push_back("--compare");
  RunResult r = Run(args);
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["setting"], "cdr");
  ExpectMetrics(j);
  ExpectMetrics(j["target_only"]);
  ExpectMetrics(j["non_private"]);
  EXPECT_EQ(j["users"].get<int>(), 872);
  EXPECT_EQ(j["source_items"].get<int>(), 552);
  EXPECT_EQ(j["target_items"].get<int>(), 647);
  EXPECT_LE(j["epsilon"].get<double>(), 1.2 + 1e-9);
  EXPECT_GT(j["epsilon"].get<double>(), 1.19);
  EXPECT_DOUBLE_EQ(j["delta"].get<double>(), 1e-5);
  EXPECT_EQ(j["generator_steps"].get<int>(), 5);
  // z = sigma / (2 sqrt(N)), the accountant's multiplier for sensitivity 2 C sqrt(N).
  EXPECT_NEAR(j["noise_multiplier"].get<double>(), j["noise_sigma"].get<double>() / (2 * 4.0),
              1e-9);

  // The same seed gives the same numbers.
  RunResult again = Run(args);
  ASSERT_EQ(again.exit_code, 0) << Describe(again);
  const auto k = nlohmann::json::parse(again.out);
  for (const char* key : {"hr_at_10", "ndcg_at_10", "mrr"}) {
    EXPECT_EQ(j[key], k[key]) << key;
    EXPECT_EQ(j["target_only"][key], k["target_only"][key]) << key;
  }
}

TEST_F(CdrCliTest, InfiniteEpsilonAddsNoNoise) {
  RunResult r = Run(Args("inf"));
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["epsilon"], "inf");
  EXPECT_EQ(j["noise_sigma"].get<double>(), 0);
}

TEST_F(CdrCliTest, RefusesDataWithoutGenresAndBadOptions) {
  RunResult r = Run({"train", "--setting", "cdr", "--data", "synthetic", "--json"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("needs MovieLens 100K"));
  std::vector<std::string> args = Args("1");
  args.insert(args.end(), {"--cdr-lambda-align", "0,-1"});
  r = Run(args);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("--cdr-lambda-align -1"));
  args = Args("1");
  args.insert(args.end(), {"--repeats", "3"});
  r = Run(args);
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("--repeats, --epsilon-sweep and --save-model are not supported"));
}

}  // namespace
}  // namespace fedmf
