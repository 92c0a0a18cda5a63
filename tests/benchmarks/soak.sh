#!/usr/bin/env bash
# Soak run: N consecutive HFL jobs against one fedmf-server (no restart), on
# the deploy/local-cluster.sh topology; prints the server's resident memory
# and open file descriptors after each job, so leaks show as a trend.
#   tests/benchmarks/soak.sh BIN_DIR [JOBS=50] [ROUNDS=10]
# Output: one line per job "job N rss_kb FDS seconds", then first/last/max.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$(cd "$1" && pwd)
JOBS=${2:-50}
ROUNDS=${3:-10}
WORK=$(mktemp -d /tmp/fedmf-soak-XXXXXX)
LC="$ROOT/deploy/local-cluster.sh"
trap '"$LC" stop "$BIN" "$WORK" > /dev/null; rm -rf "$WORK"' EXIT
"$LC" start "$BIN" "$WORK" > /dev/null
# shellcheck disable=SC1091
. "$WORK/env"
SERVER_PID=$(head -1 "$WORK/pids")
echo "# job rss_kb fds seconds"
for n in $(seq "$JOBS"); do
  # epsilon 0.1 per job: 50 jobs compose (RDP) to well under the parties' budget of 10.
  sed -e "s/^job_id: .*/job_id: soak-$n/" -e "s/^rounds: .*/rounds: $ROUNDS/" -e "s/^epsilon: .*/epsilon: 0.1/" \
    "$ROOT/deploy/jobs/hfl.yaml" > "$WORK/job.yaml"
  start=$(date +%s.%N)
  "$LC" cli "$BIN" "$WORK" job submit --server "$SERVER" --spec "$WORK/job.yaml" > /dev/null
  while :; do
    state=$("$LC" cli "$BIN" "$WORK" job status --server "$SERVER" --job "soak-$n" --json |
            python3 -c 'import json,sys; print(json.load(sys.stdin)["state"])')
    [ "$state" = JOB_STATE_FINISHED ] && break
    [ "$state" = JOB_STATE_FAILED ] && { echo "job soak-$n failed" >&2; exit 1; }
    sleep 0.2
  done
  rss=$(awk '/^VmRSS/{print $2}' "/proc/$SERVER_PID/status")
  fds=$(ls "/proc/$SERVER_PID/fd" | wc -l)
  echo "job $n $rss $fds $(echo "$(date +%s.%N) - $start" | bc)"
done
