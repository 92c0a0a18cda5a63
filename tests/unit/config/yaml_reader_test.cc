#include "common/config/yaml_reader.h"

#include <cmath>

#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

using ::fedmf::testing::IsOk;
using ::fedmf::testing::StatusIs;

namespace fedmf::config {
namespace {

TEST(YamlReaderTest, ReadsTypedValuesAndKeepsDefaults) {
  ASSERT_OK_AND_ASSIGN(
      auto m,
      YamlMap::FromString("a: hello\nb: 42\nc: 2.5\nd: true\ne: [x, y]\nf: inf\n", "t.yaml"));
  std::string a;
  int32_t b = 0;
  double c = 0, f = 0, missing = 7;
  bool d = false;
  std::vector<std::string> e;
  ASSERT_THAT(m.GetString("a", &a), IsOk());
  ASSERT_THAT(m.GetInt("b", &b), IsOk());
  ASSERT_THAT(m.GetDouble("c", &c), IsOk());
  ASSERT_THAT(m.GetBool("d", &d), IsOk());
  ASSERT_THAT(m.GetStringList("e", &e), IsOk());
  ASSERT_THAT(m.GetDouble("f", &f), IsOk());
  ASSERT_THAT(m.GetDouble("nope", &missing), IsOk());
  EXPECT_EQ(a, "hello");
  EXPECT_EQ(b, 42);
  EXPECT_EQ(c, 2.5);
  EXPECT_TRUE(d);
  EXPECT_EQ(e, (std::vector<std::string>{"x", "y"}));
  EXPECT_TRUE(std::isinf(f));
  EXPECT_EQ(missing, 7);
  EXPECT_THAT(m.Finish(), IsOk());
}

TEST(YamlReaderTest, UnknownKeyNamesFileLineAndKnownKeys) {
  ASSERT_OK_AND_ASSIGN(auto m, YamlMap::FromString("listen: x\nlistn: y\n", "server.yaml"));
  std::string listen;
  ASSERT_THAT(m.GetString("listen", &listen), IsOk());
  absl::Status s = m.Finish();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("server.yaml:2"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("unknown key 'listn'"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("listen"), std::string::npos) << s.message();
}

TEST(YamlReaderTest, TypeErrorsNameTheKeyAndLine) {
  ASSERT_OK_AND_ASSIGN(auto m, YamlMap::FromString("x: 1\nport: seven\n", "c.yaml"));
  int32_t port = 0;
  absl::Status s = m.GetInt("port", &port);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("c.yaml:2"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("'port'"), std::string::npos) << s.message();
  bool flag = false;
  auto m2 = YamlMap::FromString("flag: maybe\nbig: 99999999999\n", "c.yaml");
  EXPECT_THAT(m2->GetBool("flag", &flag), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(m2->GetInt("big", &port), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(YamlReaderTest, NestedMapsCarryTheirPath) {
  ASSERT_OK_AND_ASSIGN(auto m,
                       YamlMap::FromString("tls:\n  insecure: true\n  bogus: 1\n", "p.yaml"));
  auto tls = m.GetMap("tls");
  ASSERT_THAT(tls, IsOk());
  bool insecure = false;
  ASSERT_THAT(tls->GetBool("insecure", &insecure), IsOk());
  absl::Status s = tls->Finish();
  EXPECT_NE(s.message().find("'tls.bogus'"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("p.yaml:3"), std::string::npos) << s.message();
}

TEST(YamlReaderTest, SyntaxErrorsAndBadRootsAreClear) {
  auto bad = YamlMap::FromString("a: [1, 2\n", "broken.yaml");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("broken.yaml:"), std::string::npos);
  auto list = YamlMap::FromString("- a\n- b\n", "list.yaml");
  EXPECT_THAT(list, StatusIs(absl::StatusCode::kInvalidArgument));
  ASSERT_OK_AND_ASSIGN(auto empty, YamlMap::FromString("", "empty.yaml"));
  EXPECT_THAT(empty.Finish(), IsOk());
  auto missing = YamlMap::FromFile("/nonexistent/x.yaml");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace fedmf::config
