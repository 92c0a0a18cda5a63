// Fork-join loops over independent items for the pure libraries: each call
// starts its threads and joins them before returning, so a caller that
// passes threads = 1 (or one item) runs everything on its own thread and a
// library stays free of any long-lived pool.
#ifndef FEDMF_COMMON_BASE_PARALLEL_FOR_H_
#define FEDMF_COMMON_BASE_PARALLEL_FOR_H_

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"

namespace fedmf::base {

// Runs fn(i) for every i in [0, n) on up to `threads` threads (the caller's
// included), handing out indices one at a time, so uneven items balance.
// fn must not depend on which thread runs which i.
inline void ParallelFor(size_t n, int threads, absl::FunctionRef<void(size_t)> fn) {
  const size_t workers = std::min(static_cast<size_t>(std::max(threads, 1)), n);
  if (workers <= 1) {
    for (size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  std::atomic<size_t> next{0};
  const auto work = [&] {
    for (size_t i = next.fetch_add(1); i < n; i = next.fetch_add(1)) fn(i);
  };
  std::vector<std::thread> pool;
  pool.reserve(workers - 1);
  for (size_t t = 1; t < workers; ++t) pool.emplace_back(work);
  work();
  for (std::thread& th : pool) th.join();
}

// Splits [0, n) into up to `threads` contiguous chunks of at least
// `min_chunk` items (every chunk boundary a multiple of `align`), runs
// body(begin, end) for each, and returns the first error in chunk order, so
// the answer does not depend on scheduling.
inline absl::Status ParallelChunks(size_t n, int threads, size_t min_chunk, size_t align,
                                   absl::FunctionRef<absl::Status(size_t, size_t)> body) {
  align = std::max<size_t>(align, 1);
  const size_t most = std::max<size_t>(n / std::max<size_t>(min_chunk, 1), 1);
  const size_t workers = std::clamp<size_t>(static_cast<size_t>(std::max(threads, 1)), 1, most);
  if (workers == 1) return body(0, n);
  size_t chunk = (n + workers - 1) / workers;
  chunk = (chunk + align - 1) / align * align;
  const size_t chunks = (n + chunk - 1) / chunk;
  std::vector<absl::Status> status(chunks);
  ParallelFor(chunks, static_cast<int>(chunks), [&](size_t c) {
    const size_t begin = c * chunk;
    status[c] = body(begin, std::min(n, begin + chunk));
  });
  for (absl::Status& s : status) {
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace fedmf::base

#endif  // FEDMF_COMMON_BASE_PARALLEL_FOR_H_
