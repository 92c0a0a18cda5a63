#include "tests/unit/data/test_files.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <vector>

#include "gtest/gtest.h"

namespace fedmf::data::testing {
namespace {

// The directories MakeTempDir made, removed when the test process exits (one
// process per test under ctest): the loader tests left ~1000 behind per run.
std::mutex made_mu;
std::vector<std::filesystem::path>* made = nullptr;

void RemoveMade() {
  std::lock_guard<std::mutex> lock(made_mu);
  for (const auto& dir : *made) {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
}

void Remember(const std::filesystem::path& dir) {
  std::lock_guard<std::mutex> lock(made_mu);
  if (made == nullptr) {
    made = new std::vector<std::filesystem::path>();
    std::atexit(RemoveMade);
  }
  made->push_back(dir);
}

}  // namespace

std::string MakeTempDir() {
  static std::atomic<int> counter{0};
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = "fedmf_data_" + std::to_string(::getpid()) + "_" +
                     (info != nullptr ? std::string(info->name()) : "x") + "_" +
                     std::to_string(counter++);
  std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  Remember(dir);
  return dir.string();
}

std::string WriteFile(const std::string& dir, const std::string& name,
                      const std::string& contents) {
  std::filesystem::path path = std::filesystem::path(dir) / name;
  std::ofstream out(path, std::ios::binary);
  out << contents;
  out.close();
  EXPECT_TRUE(out.good()) << "cannot write " << path;
  return path.string();
}

std::string WriteTempFile(const std::string& name, const std::string& contents) {
  return WriteFile(MakeTempDir(), name, contents);
}

}  // namespace fedmf::data::testing
