#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan + UBSan + libFuzzer, in
# build-fuzz/) and runs each for SECONDS (default 30) from its seed corpus
# (tests/fuzz/corpus/<target>/; new inputs go to a scratch copy, the repo is
# not touched). A crash, sanitizer report, leak or timeout fails the run and
# leaves the reproducer in build-fuzz/artifacts/. Targets run FUZZ_JOBS
# (default: nproc) at a time.
#   tests/fuzz/run.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/../.."
SECONDS_EACH=${1:-30}
JOBS=${FUZZ_JOBS:-$(nproc)}
command -v clang++ > /dev/null || { echo "fuzz: clang++ is missing (apt-get install clang)" >&2; exit 1; }
# FUZZ_BUILD_DIR: an existing clang tree configured with -DFEDMF_FUZZ=ON (CI
# reuses its sanitizer build); otherwise build-fuzz/ is configured here.
B=${FUZZ_BUILD_DIR:-build-fuzz}
if [ -z "${FUZZ_BUILD_DIR:-}" ]; then
  cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
    -DFEDMF_FUZZ=ON -DFEDMF_BUILD_DAEMONS=OFF -DFEDMF_BUILD_TESTS=OFF -DFEDMF_BUILD_BENCHMARKS=OFF \
    > /dev/null
fi
grep -q "^FEDMF_FUZZ:BOOL=ON" "$B/CMakeCache.txt" ||
  { echo "fuzz: $B is not configured with -DFEDMF_FUZZ=ON" >&2; exit 1; }
TARGETS=(fuzz_ratings fuzz_exposition fuzz_party_config fuzz_server_config fuzz_matrix_chunks
  fuzz_secagg_messages fuzz_hua_reports)
cmake --build "$B" -j"$(nproc)" --target "${TARGETS[@]}"
mkdir -p "$B"/artifacts
# One target: SECONDS_EACH from a scratch copy of its seed corpus; the exit
# status says whether it found anything.
run_one() {
  local t=$1 corpus="$B"/corpus/$1 log="$B"/artifacts/$1.log rc=0
  rm -rf "$corpus" && mkdir -p "$corpus"
  cp tests/fuzz/corpus/"${t#fuzz_}"/* "$corpus"/
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    "$B"/bin/"$t" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 \
      -print_final_stats=1 -artifact_prefix="$B"/artifacts/"$t"- "$corpus" > "$log" 2>&1 ||
    rc=$?
  echo "== $t: ${SECONDS_EACH}s, exit $rc"
  grep -E "DONE|stat::number_of_executed_units|stat::peak_rss_mb" "$log" || true
  if [ $rc -ne 0 ]; then
    tail -40 "$log" >&2
    echo "fuzz: $t FAILED (exit $rc; reproducer in $B/artifacts/)" >&2
  fi
  return $rc
}
# As many targets at once as there are cores (each fuzzer is one process);
# each leaves its exit status in artifacts/<target>.rc.
for t in "${TARGETS[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n || true; done
  rm -f "$B"/artifacts/"$t".rc
  { rc=0; run_one "$t" || rc=$?; echo $rc > "$B"/artifacts/"$t".rc; } &
done
wait
failed=()
for t in "${TARGETS[@]}"; do
  [ "$(cat "$B"/artifacts/"$t".rc 2> /dev/null)" = 0 ] || failed+=("$t")
done
[ ${#failed[@]} -eq 0 ] || { echo "fuzz: findings in ${failed[*]} (see above)" >&2; exit 1; }
echo "fuzz: all ${#TARGETS[@]} targets ran ${SECONDS_EACH}s without findings"
