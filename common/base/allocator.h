// Process-wide allocator settings for fedmf's processes.
#ifndef FEDMF_COMMON_BASE_ALLOCATOR_H_
#define FEDMF_COMMON_BASE_ALLOCATOR_H_

#include <algorithm>
#include <cstdio>  // first: a C library header defines __GLIBC__
#include <thread>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace fedmf::base {

// The arenas ConfigureAllocator allows: one per core (at least 2), so that
// threads running at the same time still rarely share one.
inline int AllocatorArenas() {
  return static_cast<int>(std::max(2u, std::thread::hardware_concurrency()));
}

// Blocks below this size come from the arenas, larger ones are mapped on
// their own: glibc's default rule raises its threshold to the size of the
// largest mapped block freed so far, up to this same 32 MB (64-bit), so this
// is where the default ends up after one such block. It has to be set here
// because fixing the trim threshold (below) turns the raising off.
inline constexpr int kMmapThresholdBytes = 32 << 20;

// Free memory an arena keeps at its top before giving it back to the kernel:
// twice the mmap threshold, which is also where glibc's default rule ends up
// (it keeps the trim threshold at twice its raised mmap threshold). Until
// then the default is small (0.5 MB after a freed 269 KB block), so a device
// handing its 269 KB input, encoding and masked vector through malloc had
// the arena trimmed and the next vectors' pages faulted in again
// (lfl_benchmark's in-session iteration, its devices masking one after
// another: 444k page faults in the process, 142k with this). A trim threshold below the blocks a
// process moves does the same to them: 16 MB made the coupling demo's 30 MB rounds 12-15% slower
// (docs/archive/benchmarks-2026.md).
inline constexpr int kTrimThresholdBytes = 2 * kMmapThresholdBytes;

// glibc gives threads up to 8 arenas per core, and a freed block stays in the
// arena of the thread that allocated it. Blocks of a few megabytes stop being
// mapped on their own after the first is freed (the mmap threshold above), so
// each of gRPC's many threads can keep copies of the messages it handled:
// fedmf-server moving the 30 MB coupling model peaked at 0.63-1.02 GB, 0.39 GB
// with 2 arenas, at the same speed (docs/archive/benchmarks-2026.md, coupling
// learning over the daemons). Fixing the mmap threshold low instead (1 MB: 0.26 GB) cost 39%
// more time per round in page faults.
//
// Sets the arena limit and both thresholds. Call at the start of main(),
// before any thread exists; a refusal is reported on stderr under `program`'s
// name and changes nothing else.
inline void ConfigureAllocator(const char* program) {
#if defined(__GLIBC__)
  const struct {
    int param;
    const char* name;
    int value;
  } settings[] = {{M_ARENA_MAX, "M_ARENA_MAX", AllocatorArenas()},
                  {M_MMAP_THRESHOLD, "M_MMAP_THRESHOLD", kMmapThresholdBytes},
                  {M_TRIM_THRESHOLD, "M_TRIM_THRESHOLD", kTrimThresholdBytes}};
  for (const auto& s : settings) {
    if (mallopt(s.param, s.value) != 1) {
      std::fprintf(stderr, "%s: warning: mallopt(%s, %d) refused; glibc's default applies\n",
                   program, s.name, s.value);
    }
  }
#else
  (void)program;
#endif
}

// Gives the kernel back the free memory the arenas keep (malloc_trim(0):
// the top above the trim threshold and every free page inside them). For a
// phase boundary where much was freed and a long phase holds the rest:
// loading 5.3M ratings from a CSV file left up to 26 MB freed in the heap
// (old hash-table arrays, the duplicate check's indices), below
// kTrimThresholdBytes and so resident through the split and the training
// that follow (docs/archive/benchmarks-2026.md). A few milliseconds.
inline void ReturnFreeMemory() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

}  // namespace fedmf::base

#endif  // FEDMF_COMMON_BASE_ALLOCATOR_H_
