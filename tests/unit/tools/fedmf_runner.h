// Test helper: runs the built `fedmf` binary (FEDMF_BIN_DIR/fedmf) as a
// subprocess in a fresh temporary directory, stdout and stderr kept apart.
#ifndef FEDMF_TESTS_UNIT_TOOLS_FEDMF_RUNNER_H_
#define FEDMF_TESTS_UNIT_TOOLS_FEDMF_RUNNER_H_

#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "tests/testing/files.h"
#include "tests/testing/temp_dir.h"

namespace fedmf {

struct RunResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline std::string Quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\'') {
      q += "'\\''";
    } else {
      q += c;
    }
  }
  return q + "'";
}

class FedmfCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(std::filesystem::exists(FEDMF_BIN_DIR "/fedmf"))
        << FEDMF_BIN_DIR "/fedmf is missing: build the `fedmf` target";
  }

  // Runs `fedmf args...`; stdout through the pipe, stderr through a file so
  // the two stay separate.
  RunResult Run(const std::vector<std::string>& args) {
    std::vector<std::string> quoted = {Quote(FEDMF_BIN_DIR "/fedmf")};
    for (const auto& a : args) quoted.push_back(Quote(a));
    const std::string err_path = dir_ + "/stderr.txt";
    const std::string cmd =
        absl::StrCat(absl::StrJoin(quoted, " "), " 2>", Quote(err_path), " </dev/null");
    RunResult r;
    FILE* p = popen(cmd.c_str(), "r");
    if (p == nullptr) {
      ADD_FAILURE() << "popen failed: " << cmd;
      return r;
    }
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), p)) > 0) r.out.append(buf, n);
    const int status = pclose(p);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.err = ::fedmf::testing::ReadFile(err_path);
    std::filesystem::remove(err_path);
    return r;
  }

  std::string Path(const std::string& sub) const { return dir_ + "/" + sub; }

  const ::fedmf::testing::ScopedTempDir tmp_{"fedmf_cli_"};
  const std::string dir_ = tmp_.path();
};

inline std::string Describe(const RunResult& r) {
  return absl::StrCat("exit ", r.exit_code, "\nstdout:\n", r.out, "\nstderr:\n", r.err);
}

}  // namespace fedmf

#endif  // FEDMF_TESTS_UNIT_TOOLS_FEDMF_RUNNER_H_
