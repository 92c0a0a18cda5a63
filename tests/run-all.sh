#!/usr/bin/env bash
# The whole test suite, from a fresh Debian 12 machine: installs what is
# missing, builds (Release) and runs every test (unit + integration on real
# processes), builds the libraries with their unit tests under ASan+UBSan
# (clang) and runs those, and runs every libFuzzer target for 30 s. First it
# checks that the C++ sources follow .clang-format (tests/check-format.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=$(nproc)

deploy/install-deps.sh --tests

echo "== Format (.clang-format) =="
tests/check-format.sh

echo "== Release build =="
# Tests and benchmarks ON explicitly: a tree configured by the README's demo
# line (tests off) is reused, not trusted.
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DFEDMF_BUILD_TESTS=ON -DFEDMF_BUILD_BENCHMARKS=ON > /dev/null
cmake --build build -j"$JOBS"

# One clang tree for both sanitizer jobs: the libraries and unit tests under
# ASan+UBSan, and the libFuzzer targets (which need clang) linked from the
# same objects, so CI compiles the libraries twice (Release + this), not three
# times.
# Line tables only: a sanitizer report names file:line (llvm-symbolizer) and
# needs nothing more; full -g made every object ~45% larger and compiling ~15%
# slower.
echo "== ASan/UBSan + libFuzzer build (clang) =="
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -gline-tables-only -DNDEBUG" \
  -DFEDMF_SANITIZE=ON -DFEDMF_FUZZ=ON \
  -DFEDMF_BUILD_BENCHMARKS=OFF -DFEDMF_BUILD_DAEMONS=OFF > /dev/null
cmake --build build-asan -j"$JOBS"

echo "== Tests under ASan/UBSan (unit) =="
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  LSAN_OPTIONS=suppressions="$PWD/tests/lsan.supp" ctest --test-dir build-asan --output-on-failure -j"$JOBS" -L unit

echo "== Fuzz (libFuzzer + ASan/UBSan, 30 s per target) =="
FUZZ_BUILD_DIR=build-asan tests/fuzz/run.sh 30

echo "== Tests (Release, all) =="
ctest --test-dir build --output-on-failure -j"$JOBS"
