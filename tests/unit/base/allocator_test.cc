#include "common/base/allocator.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

#if defined(__GLIBC__)  // <cstdio> above defines it
#include <malloc.h>
#endif

namespace fedmf::base {
namespace {

#if defined(__GLIBC__)
// The arenas glibc has made so far: malloc_info lists one <heap nr="..."> each.
int ArenaCount() {
  char* text = nullptr;
  size_t size = 0;
  FILE* out = open_memstream(&text, &size);
  if (out == nullptr) return -1;
  malloc_info(0, out);
  std::fclose(out);
  const std::string xml(text, size);
  std::free(text);
  int count = 0;
  for (size_t at = xml.find("<heap nr="); at != std::string::npos;
       at = xml.find("<heap nr=", at + 1)) {
    ++count;
  }
  return count;
}

// Threads that allocate while all of them are alive, as gRPC's do.
void AllocateFromThreads(int threads) {
  std::vector<std::thread> pool;
  std::vector<void*> blocks(static_cast<size_t>(threads), nullptr);
  std::atomic<int> allocated{0};
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      blocks[static_cast<size_t>(t)] = std::malloc(64 << 10);
      ++allocated;
      while (allocated.load() < threads) std::this_thread::yield();  // all alive at once
    });
  }
  for (std::thread& th : pool) th.join();
  for (void* b : blocks) std::free(b);
}

// ctest runs each test in a process of its own, so nothing before this test
// has made arenas; 4x the limit in threads would make more without it.
TEST(AllocatorTest, ThreadsShareAtMostOneArenaPerCore) {
  LimitAllocatorArenas("allocator_test");
  AllocateFromThreads(4 * AllocatorArenas());
  const int arenas = ArenaCount();
  EXPECT_GE(arenas, 1);
  EXPECT_LE(arenas, AllocatorArenas());
}
#endif

TEST(AllocatorTest, AllowsOneArenaPerCoreAndAtLeastTwo) {
  EXPECT_GE(AllocatorArenas(), 2);
  EXPECT_GE(AllocatorArenas(), static_cast<int>(std::thread::hardware_concurrency()));
}

}  // namespace
}  // namespace fedmf::base
