#!/usr/bin/env bash
# The whole test suite, from a fresh Debian 12 machine: installs what is
# missing, builds (Release) and runs every test (unit + integration on real
# processes), and builds the libraries with their unit tests under
# ASan+UBSan and runs those too.
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=$(nproc)

deploy/install-deps.sh

echo "== Release build =="
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build build -j"$JOBS"

echo "== ASan/UBSan build =="
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFEDMF_SANITIZE=ON \
  -DFEDMF_BUILD_BENCHMARKS=OFF -DFEDMF_BUILD_DAEMONS=OFF > /dev/null
cmake --build build-asan -j"$JOBS"

echo "== Tests under ASan/UBSan (unit) =="
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  LSAN_OPTIONS=suppressions="$PWD/tests/lsan.supp" ctest --test-dir build-asan --output-on-failure -j"$JOBS" -L unit

echo "== Fuzz (libFuzzer + ASan/UBSan, 30 s per target) =="
tests/fuzz/run.sh 30

echo "== Tests (Release, all) =="
ctest --test-dir build --output-on-failure -j"$JOBS"
