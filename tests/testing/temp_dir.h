// A temporary directory for a test, removed with everything in it when the
// object goes out of scope:
//
//   fedmf::testing::ScopedTempDir dir("fedmf-pki-");
//   ASSERT_THAT(pki::InitCa(dir.Path("ca"), ...), IsOk());
//
// Created under std::filesystem::temp_directory_path() (TMPDIR, else /tmp),
// named <prefix> and six random characters (mkdtemp), mode 0700.
#ifndef FEDMF_TESTS_TESTING_TEMP_DIR_H_
#define FEDMF_TESTS_TESTING_TEMP_DIR_H_

#include <stdlib.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>

namespace fedmf::testing {

class ScopedTempDir {
 public:
  // A test cannot go on without its directory: when the system refuses one
  // this says where and why, and aborts the test binary.
  explicit ScopedTempDir(std::string_view prefix = "fedmf-test-") {
    std::error_code ec;
    std::filesystem::path base = std::filesystem::temp_directory_path(ec);
    if (ec) base = "/tmp";
    std::string pattern = (base / (std::string(prefix) + "XXXXXX")).string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      std::fprintf(stderr, "ScopedTempDir: cannot create %s: %s (set TMPDIR to a writable place)\n",
                   pattern.c_str(), std::strerror(errno));
      std::abort();
    }
    path_ = std::move(pattern);
  }
  ~ScopedTempDir() {
    std::error_code ec;  // best effort: a test may have made parts unremovable
    std::filesystem::remove_all(path_, ec);
  }
  ScopedTempDir(const ScopedTempDir&) = delete;
  ScopedTempDir& operator=(const ScopedTempDir&) = delete;

  // The directory, without a trailing slash.
  const std::string& path() const { return path_; }
  // `relative` inside it (not created).
  std::string Path(std::string_view relative) const { return path_ + "/" + std::string(relative); }

 private:
  std::string path_;
};

}  // namespace fedmf::testing

#endif  // FEDMF_TESTS_TESTING_TEMP_DIR_H_
