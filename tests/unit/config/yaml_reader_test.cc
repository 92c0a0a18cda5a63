#include "common/config/yaml_reader.h"

#include <cmath>

#include "gtest/gtest.h"

namespace fedmf::config {
namespace {

TEST(YamlReaderTest, ReadsTypedValuesAndKeepsDefaults) {
  auto m = YamlMap::FromString("a: hello\nb: 42\nc: 2.5\nd: true\ne: [x, y]\nf: inf\n", "t.yaml");
  ASSERT_TRUE(m.ok()) << m.status();
  std::string a;
  int32_t b = 0;
  double c = 0, f = 0, missing = 7;
  bool d = false;
  std::vector<std::string> e;
  ASSERT_TRUE(m->GetString("a", &a).ok());
  ASSERT_TRUE(m->GetInt("b", &b).ok());
  ASSERT_TRUE(m->GetDouble("c", &c).ok());
  ASSERT_TRUE(m->GetBool("d", &d).ok());
  ASSERT_TRUE(m->GetStringList("e", &e).ok());
  ASSERT_TRUE(m->GetDouble("f", &f).ok());
  ASSERT_TRUE(m->GetDouble("nope", &missing).ok());
  EXPECT_EQ(a, "hello");
  EXPECT_EQ(b, 42);
  EXPECT_EQ(c, 2.5);
  EXPECT_TRUE(d);
  EXPECT_EQ(e, (std::vector<std::string>{"x", "y"}));
  EXPECT_TRUE(std::isinf(f));
  EXPECT_EQ(missing, 7);
  EXPECT_TRUE(m->Finish().ok());
}

TEST(YamlReaderTest, UnknownKeyNamesFileLineAndKnownKeys) {
  auto m = YamlMap::FromString("listen: x\nlistn: y\n", "server.yaml");
  ASSERT_TRUE(m.ok());
  std::string listen;
  ASSERT_TRUE(m->GetString("listen", &listen).ok());
  absl::Status s = m->Finish();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("server.yaml:2"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("unknown key 'listn'"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("listen"), std::string::npos) << s.message();
}

TEST(YamlReaderTest, TypeErrorsNameTheKeyAndLine) {
  auto m = YamlMap::FromString("x: 1\nport: seven\n", "c.yaml");
  ASSERT_TRUE(m.ok());
  int32_t port = 0;
  absl::Status s = m->GetInt("port", &port);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("c.yaml:2"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("'port'"), std::string::npos) << s.message();
  bool flag = false;
  auto m2 = YamlMap::FromString("flag: maybe\nbig: 99999999999\n", "c.yaml");
  EXPECT_FALSE(m2->GetBool("flag", &flag).ok());
  EXPECT_FALSE(m2->GetInt("big", &port).ok());
}

TEST(YamlReaderTest, NestedMapsCarryTheirPath) {
  auto m = YamlMap::FromString("tls:\n  insecure: true\n  bogus: 1\n", "p.yaml");
  ASSERT_TRUE(m.ok());
  auto tls = m->GetMap("tls");
  ASSERT_TRUE(tls.ok());
  bool insecure = false;
  ASSERT_TRUE(tls->GetBool("insecure", &insecure).ok());
  absl::Status s = tls->Finish();
  EXPECT_NE(s.message().find("'tls.bogus'"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("p.yaml:3"), std::string::npos) << s.message();
}

TEST(YamlReaderTest, SyntaxErrorsAndBadRootsAreClear) {
  auto bad = YamlMap::FromString("a: [1, 2\n", "broken.yaml");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("broken.yaml:"), std::string::npos);
  auto list = YamlMap::FromString("- a\n- b\n", "list.yaml");
  EXPECT_FALSE(list.ok());
  auto empty = YamlMap::FromString("", "empty.yaml");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->Finish().ok());
  auto missing = YamlMap::FromFile("/nonexistent/x.yaml");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace fedmf::config
