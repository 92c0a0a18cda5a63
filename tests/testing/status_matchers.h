// GoogleTest matchers for absl::Status and absl::StatusOr<T> (as in
// fcp/testing and tink's test_matchers):
//
//   EXPECT_THAT(LoadTlsFiles(dir, "x"), IsOk());
//   EXPECT_THAT(Parse(spec), StatusIs(absl::StatusCode::kInvalidArgument,
//                                     HasSubstr("lfl.secagg_design_dropout")));
//
// A failure prints the status, so `<< s.status()` is not needed. A
// grpc::Status matches too (its code and message as an absl::Status).
#ifndef FEDMF_TESTS_TESTING_STATUS_MATCHERS_H_
#define FEDMF_TESTS_TESTING_STATUS_MATCHERS_H_

#include <ostream>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"

namespace fedmf::testing {
namespace internal {

inline const absl::Status& GetStatus(const absl::Status& s) { return s; }
template <typename T>
const absl::Status& GetStatus(const absl::StatusOr<T>& s) {
  return s.status();
}
// grpc::Status, without including gRPC here: its codes are absl's.
template <typename S, typename = decltype(std::declval<const S&>().error_message())>
absl::Status GetStatus(const S& s) {
  return absl::Status(static_cast<absl::StatusCode>(s.error_code()), s.error_message());
}

}  // namespace internal

MATCHER(IsOk, negation ? "is an error" : "is OK") {
  const absl::Status& s = internal::GetStatus(arg);
  if (!s.ok()) *result_listener << "status: " << s;
  return s.ok();
}

MATCHER_P2(StatusIs, code, message_matcher,
           std::string("has code ") + absl::StatusCodeToString(code) + " and a message that " +
               ::testing::DescribeMatcher<std::string>(message_matcher, negation)) {
  const absl::Status& s = internal::GetStatus(arg);
  *result_listener << "status: " << s;
  return s.code() == code &&
         ::testing::ExplainMatchResult(message_matcher, std::string(s.message()), result_listener);
}

MATCHER_P(StatusIs, code, std::string("has code ") + absl::StatusCodeToString(code)) {
  const absl::Status& s = internal::GetStatus(arg);
  *result_listener << "status: " << s;
  return s.code() == code;
}

}  // namespace fedmf::testing

// ASSERT_OK_AND_ASSIGN(T x, StatusOrExpr): fails the test (printing the
// status) unless the expression is OK, else declares x from its value.
#ifndef ASSERT_OK_AND_ASSIGN
#define FEDMF_TESTING_CONCAT_INNER(a, b) a##b
#define FEDMF_TESTING_CONCAT(a, b) FEDMF_TESTING_CONCAT_INNER(a, b)
#define ASSERT_OK_AND_ASSIGN(lhs, expr) \
  FEDMF_TESTING_ASSIGN_IMPL(FEDMF_TESTING_CONCAT(status_or_, __LINE__), lhs, expr)
#define FEDMF_TESTING_ASSIGN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                              \
  ASSERT_TRUE(tmp.ok()) << tmp.status();          \
  lhs = std::move(tmp).value()
#endif

#endif  // FEDMF_TESTS_TESTING_STATUS_MATCHERS_H_
