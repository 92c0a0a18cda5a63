#include "common/net/device_grants.h"

#include <cstdint>
#include <initializer_list>
#include <string>
#include <tuple>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

using ::fedmf::testing::IsOk;
using ::fedmf::testing::StatusIs;

namespace fedmf::net {
namespace {

using ::testing::HasSubstr;

google::protobuf::RepeatedPtrField<v1::DeviceGrant> Grants(
    std::initializer_list<std::tuple<std::string, uint64_t, uint32_t>> list) {
  google::protobuf::RepeatedPtrField<v1::DeviceGrant> out;
  for (const auto& [host, first, count] : list) {
    v1::DeviceGrant* g = out.Add();
    g->set_host(host);
    g->set_first_device(first);
    g->set_count(count);
  }
  return out;
}

TEST(DeviceGrantsTest, DisjointRangesInAnyOrderCountEveryDevice) {
  auto n = ValidateDeviceGrants(Grants({{"b", 100, 50}, {"a", 0, 100}, {"c", 150, 1}}),
                                "lfl.grants", uint64_t{1} << 31);
  ASSERT_THAT(n, IsOk());
  EXPECT_EQ(*n, 151u);
}

TEST(DeviceGrantsTest, ADeviceInTwoGrantsIsRejectedWithItsId) {
  auto n = ValidateDeviceGrants(Grants({{"a", 0, 100}, {"b", 99, 10}}), "hua.grants", 1u << 31);
  ASSERT_THAT(n, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(n.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(n.status().message(), HasSubstr("field 'hua.grants'"));
  EXPECT_THAT(n.status().message(), HasSubstr("device 99 is granted twice"));
  // The same host twice over one range is no better.
  EXPECT_THAT(ValidateDeviceGrants(Grants({{"a", 5, 1}, {"a", 5, 1}}), "g", 100),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(DeviceGrantsTest, EmptyHostZeroCountAndOutOfRangeNameTheField) {
  auto none = ValidateDeviceGrants(Grants({}), "hua.grants", 100);
  ASSERT_THAT(none, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(none.status().message(), HasSubstr("at least one device host"));

  auto host = ValidateDeviceGrants(Grants({{"", 0, 1}}), "lfl.grants", 100);
  ASSERT_THAT(host, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(host.status().message(), HasSubstr("field 'lfl.grants.host': required"));

  auto count = ValidateDeviceGrants(Grants({{"a", 0, 0}}), "lfl.grants", 100);
  ASSERT_THAT(count, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(count.status().message(), HasSubstr("field 'lfl.grants.count'"));

  // The limit is exclusive for the end of the range: [90, 100) fits 100, [90, 101) does not.
  EXPECT_THAT(ValidateDeviceGrants(Grants({{"a", 90, 10}}), "g", 100), IsOk());
  auto over = ValidateDeviceGrants(Grants({{"a", 90, 11}}), "g", 100);
  ASSERT_THAT(over, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(over.status().message(), HasSubstr("field 'g.first_device'"));
  // A first_device near 2^64 must not wrap around past the check.
  EXPECT_THAT(ValidateDeviceGrants(Grants({{"a", UINT64_MAX - 1, 4}}), "g", 100),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace fedmf::net
