#include "common/net/port_file.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/testing/status_matchers.h"

using ::fedmf::testing::IsOk;

namespace fedmf::net {
namespace {

namespace fs = std::filesystem;

TEST(PortFileTest, WritesThePortAndLeavesNoTemporaryFile) {
  std::string dir = (fs::temp_directory_path() / "fedmf-port-XXXXXX").string();
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  const std::string path = dir + "/server.port";
  ASSERT_THAT(WritePortFile(path, 40123), IsOk());
  ASSERT_TRUE(WritePortFile(path, 40124).ok());  // a restart replaces it
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), "40124\n");
  EXPECT_FALSE(fs::exists(path + ".tmp"));
  fs::remove_all(dir);
}

TEST(PortFileTest, AnUnwritablePlaceIsAnErrorNamingIt) {
  const absl::Status s = WritePortFile("/nonexistent-dir/x/server.port", 1);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(s.message().find("/nonexistent-dir/x/server.port"), std::string::npos) << s;
}

}  // namespace
}  // namespace fedmf::net
