#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan + UBSan + libFuzzer, in
# build-fuzz/) and runs each for SECONDS (default 30) from its seed corpus
# (tests/fuzz/corpus/<target>/; new inputs go to a scratch copy, the repo is
# not touched). A crash, sanitizer report, leak or timeout fails the run and
# leaves the reproducer in build-fuzz/artifacts/.
#   tests/fuzz/run.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/../.."
SECONDS_EACH=${1:-30}
command -v clang++ > /dev/null || { echo "fuzz: clang++ is missing (apt-get install clang)" >&2; exit 1; }
cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
  -DFEDMF_FUZZ=ON -DFEDMF_BUILD_DAEMONS=OFF -DFEDMF_BUILD_TESTS=OFF -DFEDMF_BUILD_BENCHMARKS=OFF \
  > /dev/null
TARGETS=(fuzz_ratings fuzz_exposition fuzz_party_config fuzz_server_config fuzz_matrix_chunks
  fuzz_secagg_messages fuzz_hua_reports)
cmake --build build-fuzz -j"$(nproc)" --target "${TARGETS[@]}"
mkdir -p build-fuzz/artifacts
for t in "${TARGETS[@]}"; do
  corpus=build-fuzz/corpus/$t
  rm -rf "$corpus" && mkdir -p "$corpus"
  cp tests/fuzz/corpus/"${t#fuzz_}"/* "$corpus"/
  echo "== $t: ${SECONDS_EACH}s"
  log=build-fuzz/artifacts/$t.log
  rc=0
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    build-fuzz/bin/"$t" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 \
      -print_final_stats=1 -artifact_prefix=build-fuzz/artifacts/"$t"- "$corpus" > "$log" 2>&1 ||
    rc=$?
  grep -E "DONE|stat::number_of_executed_units|stat::peak_rss_mb" "$log" || true
  if [ $rc -ne 0 ]; then
    tail -40 "$log" >&2
    echo "fuzz: $t FAILED (exit $rc; reproducer in build-fuzz/artifacts/)" >&2
    exit 1
  fi
done
echo "fuzz: all targets ran ${SECONDS_EACH}s without findings"
