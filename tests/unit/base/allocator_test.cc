#include "common/base/allocator.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

#if defined(__GLIBC__)  // <cstdio> above defines it
#include <malloc.h>
#include <sys/resource.h>
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
  ConfigureAllocator("allocator_test");
  AllocateFromThreads(4 * AllocatorArenas());
  const int arenas = ArenaCount();
  EXPECT_GE(arenas, 1);
  EXPECT_LE(arenas, AllocatorArenas());
}
#endif

// glibc's malloc, not a sanitizer's (gcc defines __SANITIZE_ADDRESS__,
// clang answers __has_feature).
#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__)
#if defined(__has_feature)
#if !__has_feature(address_sanitizer)
#define FEDMF_TEST_GLIBC_MALLOC 1
#endif
#else
#define FEDMF_TEST_GLIBC_MALLOC 1
#endif
#endif

#if defined(FEDMF_TEST_GLIBC_MALLOC)
long MinorFaults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

// Three 1 MB buffers alive at once, written, freed, fifty times (a device's
// input, encoding and masked vector): with glibc's default trim threshold
// (2 MB after a 1 MB block) every cycle gives the pages back and faults them
// in again, 50 x 768 faults; configured, only the first cycle faults.
TEST(AllocatorTest, FreedVectorsKeepTheirPages) {
  ConfigureAllocator("allocator_test");
  constexpr size_t kBytes = 1 << 20;
  constexpr int kCycles = 50;
  const long before = MinorFaults();
  for (int c = 0; c < kCycles; ++c) {
    void* blocks[3];
    for (void*& b : blocks) {
      b = std::malloc(kBytes);
      ASSERT_NE(b, nullptr);
      std::memset(b, c, kBytes);
    }
    for (void* b : blocks) std::free(b);
  }
  const long faults = MinorFaults() - before;
  const long pages_per_cycle = 3 * kBytes / 4096;
  EXPECT_LT(faults, 5 * pages_per_cycle) << faults << " minor faults in " << kCycles << " cycles";
}
#endif

TEST(AllocatorTest, AllowsOneArenaPerCoreAndAtLeastTwo) {
  EXPECT_GE(AllocatorArenas(), 2);
  EXPECT_GE(AllocatorArenas(), static_cast<int>(std::thread::hardware_concurrency()));
}

}  // namespace
}  // namespace fedmf::base
