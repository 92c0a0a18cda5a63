// Internal: read a whole file into memory once (the parsers then work on
// string_views into it instead of streaming row by row).
#ifndef FEDMF_COMMON_DATA_INTERNAL_FILE_IO_H_
#define FEDMF_COMMON_DATA_INTERNAL_FILE_IO_H_

#include <string>

#include "absl/status/statusor.h"

namespace fedmf::data::internal {

// NotFound if the path does not exist, InvalidArgument if it is a directory,
// Unavailable/Internal for other I/O errors; messages name the path.
absl::StatusOr<std::string> ReadWholeFile(const std::string& path);

}  // namespace fedmf::data::internal

#endif  // FEDMF_COMMON_DATA_INTERNAL_FILE_IO_H_
