#include "common/base/parallel_for.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace fedmf::base {
namespace {

TEST(ParallelForTest, RunsEveryIndexOnceOnUpToThatManyThreads) {
  for (int threads : {0, 1, 2, 5}) {
    for (size_t n : {size_t{0}, size_t{1}, size_t{3}, size_t{1000}}) {
      std::vector<std::atomic<int>> seen(n);
      std::mutex mu;
      std::set<std::thread::id> ids;
      ParallelFor(n, threads, [&](size_t i) {
        seen[i].fetch_add(1);
        std::lock_guard<std::mutex> lock(mu);
        ids.insert(std::this_thread::get_id());
      });
      for (size_t i = 0; i < n; ++i) EXPECT_EQ(seen[i].load(), 1) << i;
      EXPECT_LE(ids.size(), static_cast<size_t>(std::max(threads, 1)));
      if (threads <= 1 && n > 0) {
        EXPECT_EQ(ids, std::set<std::thread::id>{std::this_thread::get_id()});
      }
    }
  }
}

// Chunks cover [0, n) in order, start at multiples of `align`, hold at
// least min_chunk items unless there is only one, and the first failing
// chunk's error wins whatever the scheduling.
TEST(ParallelChunksTest, CoversTheRangeInAlignedChunksAndReportsTheFirstError) {
  for (size_t n : {size_t{0}, size_t{7}, size_t{100}, size_t{20001}}) {
    for (int threads : {1, 2, 3, 8}) {
      std::mutex mu;
      std::vector<std::pair<size_t, size_t>> chunks;
      ASSERT_TRUE(
          ParallelChunks(n, threads, /*min_chunk=*/16, /*align=*/8, [&](size_t begin, size_t end) {
            std::lock_guard<std::mutex> lock(mu);
            chunks.emplace_back(begin, end);
            return absl::OkStatus();
          }).ok());
      std::sort(chunks.begin(), chunks.end());
      ASSERT_FALSE(chunks.empty());
      EXPECT_LE(chunks.size(), static_cast<size_t>(threads));
      size_t at = 0;
      for (size_t c = 0; c < chunks.size(); ++c) {
        const auto [begin, end] = chunks[c];
        EXPECT_EQ(begin, at);
        EXPECT_EQ(begin % 8, 0u);
        if (c + 1 < chunks.size()) {
          EXPECT_GE(end - begin, 16u);
        }
        at = end;
      }
      EXPECT_EQ(at, n);
      if (n < 32) {
        EXPECT_EQ(chunks.size(), 1u) << "n " << n;  // two chunks would be below min_chunk
      }
    }
  }
  const absl::Status s = ParallelChunks(1000, 4, 10, 1, [](size_t begin, size_t) -> absl::Status {
    if (begin == 0) return absl::OkStatus();
    return absl::InternalError(absl::StrCat("chunk at ", begin));
  });
  EXPECT_EQ(s, absl::InternalError("chunk at 250"));
}

}  // namespace
}  // namespace fedmf::base
