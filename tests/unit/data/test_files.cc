#include "tests/unit/data/test_files.h"

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>

#include "gtest/gtest.h"

namespace fedmf::data::testing {

std::string MakeTempDir() {
  static std::atomic<int> counter{0};
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = "fedmf_data_" + std::to_string(::getpid()) + "_" +
                     (info != nullptr ? std::string(info->name()) : "x") + "_" +
                     std::to_string(counter++);
  std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
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
