// Status propagation in one line (Debian 12's abseil predates absl's own
// macros; the shape follows fcp/base/monitoring.h and tink's util/status):
//
//   RETURN_IF_ERROR(store.Write(row));              // absl::Status or StatusOr
//   ASSIGN_OR_RETURN(mf::Matrix v, Download(job));  // declares v (or assigns)
//
// Both return the error unchanged (code and message), so callers' messages
// name the field/file as before. `lhs` may not contain a top-level comma;
// name a type alias first (using Pair = std::pair<int, int>;); `expr` may.
#ifndef FEDMF_COMMON_BASE_STATUS_MACROS_H_
#define FEDMF_COMMON_BASE_STATUS_MACROS_H_

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace fedmf::base_internal {

inline const absl::Status& AsStatus(const absl::Status& s) { return s; }
inline absl::Status AsStatus(absl::Status&& s) { return std::move(s); }
template <typename T>
const absl::Status& AsStatus(const absl::StatusOr<T>& s) {
  return s.status();
}
template <typename T>
absl::Status AsStatus(absl::StatusOr<T>&& s) {
  return std::move(s).status();
}

}  // namespace fedmf::base_internal

#define FEDMF_STATUS_CONCAT_INNER_(x, y) x##y
#define FEDMF_STATUS_CONCAT_(x, y) FEDMF_STATUS_CONCAT_INNER_(x, y)

#define RETURN_IF_ERROR(expr)                                                        \
  do {                                                                               \
    if (absl::Status fedmf_status_macro_ = ::fedmf::base_internal::AsStatus((expr)); \
        !fedmf_status_macro_.ok()) {                                                 \
      return fedmf_status_macro_;                                                    \
    }                                                                                \
  } while (false)

// Variadic so that `expr` may hold top-level commas (F<A, B>(x), T{a, b}).
#define ASSIGN_OR_RETURN(lhs, ...) \
  FEDMF_ASSIGN_OR_RETURN_IMPL_(FEDMF_STATUS_CONCAT_(fedmf_statusor_, __LINE__), lhs, (__VA_ARGS__))

#define FEDMF_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, expr)  \
  auto statusor = (expr);                                  \
  if (!statusor.ok()) return std::move(statusor).status(); \
  lhs = *std::move(statusor)

#endif  // FEDMF_COMMON_BASE_STATUS_MACROS_H_
