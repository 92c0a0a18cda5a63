// Temporary files and directories for the loader tests.
#ifndef FEDMF_TESTS_UNIT_DATA_TEST_FILES_H_
#define FEDMF_TESTS_UNIT_DATA_TEST_FILES_H_

#include <string>

namespace fedmf::data::testing {

// A fresh empty directory under the test temp dir, unique per test and call.
std::string MakeTempDir();
// Writes `contents` (bytes as given, so CRLF/BOM tests are exact) to
// `dir/name` and returns the path.
std::string WriteFile(const std::string& dir, const std::string& name, const std::string& contents);
// WriteFile into a fresh MakeTempDir().
std::string WriteTempFile(const std::string& name, const std::string& contents);

}  // namespace fedmf::data::testing

#endif  // FEDMF_TESTS_UNIT_DATA_TEST_FILES_H_
