// Reading a whole file in a test: its bytes, or an empty string when it cannot
// be read (the test's own assertions then say what was missing).
#ifndef FEDMF_TESTS_TESTING_FILES_H_
#define FEDMF_TESTS_TESTING_FILES_H_

#include <fstream>
#include <sstream>
#include <string>

namespace fedmf::testing {

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace fedmf::testing

#endif  // FEDMF_TESTS_TESTING_FILES_H_
