#!/usr/bin/env bash
# deploy/local-cluster.sh: the compose topology's configs as loopback
# processes. Starts it, checks `fedmf health` SERVING on every daemon and
# valid Prometheus text on the server's metrics port (with curl, as an
# operator would), runs deploy/jobs/hfl.yaml to completion, checks each
# party's ledger, runs deploy/jobs/hua-s3.yaml (device host + aggregator) to
# completion, checks the aggregator's report counts, and stops exactly what
# it started.
#   local_cluster_script_test.sh BIN_DIR
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$1
WORK=$(mktemp -d /tmp/fedmf-local-cluster-XXXXXX)
LC=("$ROOT/deploy/local-cluster.sh")
fail() { echo "FAIL: $*" >&2; tail -n 20 "$WORK"/logs/*.log >&2 || true; exit 1; }
trap '"${LC[@]}" stop "$BIN" "$WORK" > /dev/null; rm -rf "$WORK"' EXIT

"${LC[@]}" start "$BIN" "$WORK"
health=$("${LC[@]}" health "$BIN" "$WORK") || fail "health: $health"
echo "$health"
[ "$(grep -c ': SERVING$' <<< "$health")" -eq 5 ] || fail "not every daemon is SERVING: $health"
# shellcheck disable=SC1091
. "$WORK/env"

metric() {  # NAME [ADDR]: its value in a fresh scrape (default: the server's)
  curl -fsS "http://${2:-$SERVER_METRICS}/metrics" | awk -v n="$1" '$1 == n {print $2}'
}
[ "$(metric fedmf_server_rounds_completed_total)" = 0 ] || fail "rounds before the job"

cli() { "${LC[@]}" cli "$BIN" "$WORK" "$@"; }
wait_job() {  # JOB_ID: its final status (JSON) once FINISHED
  local status state
  for _ in $(seq 600); do
    status=$(cli job status --server "$SERVER" --job "$1" --json)
    state=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["state"])' "$status")
    [ "$state" = JOB_STATE_FINISHED ] && { echo "$status"; return 0; }
    [ "$state" = JOB_STATE_FAILED ] && fail "job $1 failed: $status"
    sleep 0.5
  done
  fail "job $1 not finished in time: $status"
}
# The job specs as local-cluster.sh rewrote them (addresses only).
cli job submit --server "$SERVER" --spec "$WORK/jobs/hfl.yaml"
status=$(wait_job hfl-demo)
python3 - "$status" << 'PY' || fail "job result: $status"
import json, sys
st = json.loads(sys.argv[1])
assert st["rounds_completed"] == 10, st
assert sorted(p["name"] for p in st["parties"]) == ["party-a", "party-b", "party-c"], st
for p in st["parties"]:
    assert p["accepted"] and 0 < p["epsilon"] <= 1.0 + 1e-9, p
print("finished:", {p["name"]: round(p["epsilon"], 4) for p in st["parties"]})
PY
[ "$(metric fedmf_server_rounds_completed_total)" = 10 ] || fail "metrics: rounds_completed != 10"
[ "$(metric fedmf_server_round_duration_seconds_count)" = 10 ] || fail "metrics: histogram count"
for p in party-a party-b party-c; do
  var="$(echo "${p^^}" | tr - _)_ADMIN"
  ledger=$(cli ledger --party "${!var}" --party-name "$p" --json)
  party_metrics="127.0.0.1:$(cat "$WORK/$p.metrics_port")"
  python3 - "$ledger" "$(metric fedmf_party_rounds_completed_total "$party_metrics")" \
      "$(metric fedmf_party_epsilon_spent "$party_metrics")" << 'PY' || fail "$p ledger: $ledger"
import json, sys
led = json.loads(sys.argv[1])
rounds = sorted(e["round"] for e in led["entries"] if e["job_id"] == "hfl-demo")
# Rounds 0..9 are the gradient releases; round T + 1 = 11 is the party's
# one DP size release (docs/privacy.md, size-release).
assert rounds == list(range(10)) + [11], rounds
assert 0 < led["epsilon_spent"] <= 1.0 + 1e-9 and led["max_epsilon"] == 10, led
# The party's own /metrics agree with its ledger.
assert float(sys.argv[2]) == 11, sys.argv[2]  # 10 rounds + the size release
assert abs(float(sys.argv[3]) - led["epsilon_spent"]) < 1e-9, (sys.argv[3], led)
PY
  # The text says what its lines are: the columns, and which charge is the
  # size release (issue 56, item 9).
  text=$(cli ledger --party "${!var}" --party-name "$p")
  grep -q '^  (per charge: the job, its round, the sampling rate q' <<< "$text" ||
    fail "$p ledger text explains no columns: $text"
  grep -q '^  hfl-demo  *round   11  q=1 z=.*steps=1 per [a-z]*  (the size release' <<< "$text" ||
    fail "$p ledger text does not name the size release: $text"
done

# ---- Hua S3: the device host's 50 users, masked reports through the aggregator
cli job submit --server "$SERVER" --spec "$WORK/jobs/hua-s3.yaml"
status=$(wait_job hua-s3-demo)
device_pid=$(awk '$1 == "device-host" {print $2}' "$WORK/pids")
kill -0 "$device_pid" || fail "the device host exited after the job"
# The aggregator's own count of what it accepted, from its shutdown line.
"${LC[@]}" stop "$BIN" "$WORK" aggregator > /dev/null
agg_line=$(grep 'shutting down:' "$WORK/logs/aggregator.log") || fail "no aggregator shutdown line"
python3 "$ROOT/tests/containers/check_hua.py" "$ROOT/deploy/jobs/hua-s3.yaml" "$status" "$agg_line" || fail "hua-s3 result: $status"
echo PASS
