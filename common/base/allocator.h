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

// The arenas LimitAllocatorArenas allows: one per core (at least 2), so that
// threads running at the same time still rarely share one.
inline int AllocatorArenas() {
  return static_cast<int>(std::max(2u, std::thread::hardware_concurrency()));
}

// glibc gives threads up to 8 arenas per core, and a freed block stays in the
// arena of the thread that allocated it. Blocks of a few megabytes stop being
// mapped on their own after the first is freed (glibc then raises its mmap
// threshold to that size, up to 32 MB), so each of gRPC's many threads can
// keep copies of the messages it handled: fedmf-server moving the 30 MB
// coupling model peaked at 0.63-1.02 GB, 0.39 GB with 2 arenas, at the same
// speed (docs/benchmarks.md, coupling learning over the daemons). Fixing the
// mmap threshold instead (1 MB: 0.26 GB) cost 39% more time per round in
// page faults. Call at the start of main(), before any thread exists; a
// refusal is reported on stderr under `program`'s name and changes nothing else.
inline void LimitAllocatorArenas(const char* program) {
#if defined(__GLIBC__)
  if (mallopt(M_ARENA_MAX, AllocatorArenas()) != 1) {
    std::fprintf(stderr, "%s: warning: mallopt(M_ARENA_MAX, %d) refused; glibc's default applies\n",
                 program, AllocatorArenas());
  }
#else
  (void)program;
#endif
}

}  // namespace fedmf::base

#endif  // FEDMF_COMMON_BASE_ALLOCATOR_H_
