#include <bit>
#include <cstdint>
#include <string>
#include <vector>

#include "common/store/sqlite.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

using ::fedmf::testing::IsOk;

namespace fedmf {
namespace {

// Released matrices are float32-exact (mf::RoundedToFloat32), so they are
// stored in half the bytes; anything else keeps its float64 bits.
TEST(StoreBlobTest, FloatExactMatricesTakeFourBytesAValueAndReadBackToTheBit) {
  const std::vector<double> exact = {0.125, -0.0, 0.0, 3.0, -0x1.8p-100, 1e30f};
  const std::string small = store::MatrixValuesToBlob(exact.data(), exact.size());
  EXPECT_EQ(small.size(), exact.size() * 4);
  auto back = store::BlobToMatrixValues(small, static_cast<int64_t>(exact.size()), 1);
  ASSERT_THAT(back, IsOk());
  ASSERT_EQ(back->size(), exact.size());
  for (size_t i = 0; i < exact.size(); ++i) {
    EXPECT_EQ(std::bit_cast<uint64_t>((*back)[i]), std::bit_cast<uint64_t>(exact[i])) << i;
  }
  const std::vector<double> wide = {0.125, 0.1, -0.0};  // 0.1 is no float
  const std::string big = store::MatrixValuesToBlob(wide.data(), wide.size());
  EXPECT_EQ(big.size(), wide.size() * 8);
  back = store::BlobToMatrixValues(big, 1, static_cast<int64_t>(wide.size()));
  ASSERT_THAT(back, IsOk());
  for (size_t i = 0; i < wide.size(); ++i) {
    EXPECT_EQ(std::bit_cast<uint64_t>((*back)[i]), std::bit_cast<uint64_t>(wide[i])) << i;
  }
  // A blob of neither size is damage, named with the sizes.
  auto damaged = store::BlobToMatrixValues(big.substr(0, 20), static_cast<int64_t>(wide.size()), 1);
  EXPECT_EQ(damaged.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(damaged.status().message().find("has 20 bytes (expected 12 or 24)"), std::string::npos)
      << damaged.status();
  // A damaged shape claiming 2^62 values is refused before anything is
  // allocated (n * 4 and n * 8 wrap to 0, which an empty blob must not match),
  // and so are negative and beyond-int32 shapes, named.
  EXPECT_EQ(store::BlobToMatrixValues("", int64_t{1} << 31, int64_t{1} << 31).status().code(),
            absl::StatusCode::kDataLoss);
  EXPECT_EQ(store::BlobToMatrixValues("", INT32_MAX, INT32_MAX).status().code(),
            absl::StatusCode::kDataLoss);
  auto negative = store::BlobToMatrixValues("", -1, 3);
  EXPECT_EQ(negative.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(negative.status().message().find("shape -1 x 3"), std::string::npos)
      << negative.status();
}

}  // namespace
}  // namespace fedmf
