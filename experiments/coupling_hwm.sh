#!/usr/bin/env bash
# Peak resident memory of the coupling demo's daemons (docs/benchmarks.md,
# coupling learning over the daemons): runs one epoch of
# `fedmf demo --setting coupling --parties 2` and samples every daemon's
# VmHWM once a second while it runs.
#
#   experiments/coupling_hwm.sh BUILD_BIN_DIR ML100K_DIR OUT_PREFIX [VAR=VALUE ...]
#
# VAR=VALUE pairs go into the demo's environment (e.g. MALLOC_ARENA_MAX=2),
# which its daemons inherit. Writes OUT_PREFIX.json (the demo's JSON),
# OUT_PREFIX.err (its progress lines) and OUT_PREFIX.hwm (the samples);
# prints each daemon's peak.
set -euo pipefail
bin=${1:?build bin dir}; ml=${2:?ml-100k dir}; out=${3:?output prefix}; shift 3
env "$@" "$bin/fedmf" demo --setting coupling --parties 2 --data "movielens:$ml/u.data" --seed 1 \
  --epsilon 2.78 --coupling-epochs 1 --sample-rate 0.01 --dim 10 --lr 0.02 --json \
  > "$out.json" 2> "$out.err" &
demo=$!
: > "$out.hwm"
while kill -0 "$demo" 2> /dev/null; do
  for pid in $(pgrep -f "fedmf-server|fedmf-party" || true); do
    name=$(cat "/proc/$pid/comm" 2> /dev/null || true)
    hwm=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status" 2> /dev/null || true)
    if [ -n "$hwm" ]; then echo "$pid $name $hwm" >> "$out.hwm"; fi
  done
  sleep 1
done
wait "$demo"
# VmHWM only grows: the last sample of each process is its peak.
awk '{peak[$1 " " $2] = $3} END {for (p in peak) printf "%s %.0f MB\n", p, peak[p] / 1024}' "$out.hwm"
