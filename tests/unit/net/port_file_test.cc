#include "common/net/port_file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/testing/files.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/temp_dir.h"

using ::fedmf::testing::IsOk;

namespace fedmf::net {
namespace {

namespace fs = std::filesystem;

TEST(PortFileTest, WritesThePortAndLeavesNoTemporaryFile) {
  const ::fedmf::testing::ScopedTempDir dir("fedmf-port-");
  const std::string path = dir.Path("server.port");
  ASSERT_THAT(WritePortFile(path, 40123), IsOk());
  ASSERT_TRUE(WritePortFile(path, 40124).ok());  // a restart replaces it
  EXPECT_EQ(::fedmf::testing::ReadFile(path), "40124\n");
  EXPECT_FALSE(fs::exists(path + ".tmp"));
}

TEST(PortFileTest, AnUnwritablePlaceIsAnErrorNamingIt) {
  const absl::Status s = WritePortFile("/nonexistent-dir/x/server.port", 1);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(s.message().find("/nonexistent-dir/x/server.port"), std::string::npos) << s;
}

}  // namespace
}  // namespace fedmf::net
