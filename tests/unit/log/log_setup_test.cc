#include "common/log/log_setup.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "nlohmann/json.hpp"
#include "spdlog/sinks/ostream_sink.h"
#include "spdlog/spdlog.h"
#include "tests/testing/status_matchers.h"

using ::fedmf::testing::IsOk;

namespace fedmf::log {
namespace {

class LogSetupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    previous_ = spdlog::default_logger();
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out_);
    spdlog::set_default_logger(std::make_shared<spdlog::logger>("test", sink));
  }
  void TearDown() override {
    spdlog::set_default_logger(previous_);
    spdlog::set_pattern("%+");
  }
  std::ostringstream out_;
  std::shared_ptr<spdlog::logger> previous_;
};

TEST_F(LogSetupTest, JsonLinesAreValidJsonEvenWithQuotesAndNewlines) {
  ASSERT_THAT(ConfigureLogging("json", "party \"a\""), IsOk());
  spdlog::warn("refusing job '{}': {}", "j\"1", "line1\nline2\t\x01");
  spdlog::info("second");
  std::vector<std::string> lines = absl::StrSplit(out_.str(), '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 2u) << out_.str();
  auto j = nlohmann::json::parse(lines[0]);
  EXPECT_EQ(j["level"], "warning");
  EXPECT_EQ(j["daemon"], "party \"a\"");
  EXPECT_EQ(j["msg"], "refusing job 'j\"1': line1\nline2\t\x01");
  EXPECT_TRUE(absl::EndsWith(j["time"].get<std::string>(), "Z"));
  EXPECT_EQ(nlohmann::json::parse(lines[1])["msg"], "second");
}

TEST_F(LogSetupTest, TextNamesTheDaemon) {
  ASSERT_THAT(ConfigureLogging("text", "fedmf-server"), IsOk());
  spdlog::info("hello");
  EXPECT_TRUE(absl::StrContains(out_.str(), "[fedmf-server] [info] hello")) << out_.str();
}

TEST_F(LogSetupTest, UnknownFormatIsAnErrorNamingTheFlag) {
  absl::Status s = ConfigureLogging("xml", "x");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(s.message(), "--log-format")) << s.message();
}

}  // namespace
}  // namespace fedmf::log
