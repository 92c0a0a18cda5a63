// main() of every benchmark: the allocator configured as in fedmf's own
// processes (common/base/allocator.h), so that timings include the same
// malloc behaviour, then Google Benchmark's usual flags and run.
#include "benchmark/benchmark.h"
#include "common/base/allocator.h"

int main(int argc, char** argv) {
  fedmf::base::ConfigureAllocator(argv[0]);  // before any thread exists
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
