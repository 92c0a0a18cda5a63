#!/usr/bin/env bash
# deploy/local-cluster.sh: the compose topology's configs as loopback
# processes. Starts it, checks `fedmf health` SERVING on every daemon and
# valid Prometheus text on the server's metrics port (with curl, as an
# operator would), runs deploy/jobs/hfl.yaml to completion, checks each
# party's ledger, and stops exactly what it started.
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
[ "$(grep -c ': SERVING$' <<< "$health")" -eq 4 ] || fail "not every daemon is SERVING: $health"
# shellcheck disable=SC1091
. "$WORK/env"

metric() {  # NAME [ADDR]: its value in a fresh scrape (default: the server's)
  curl -fsS "http://${2:-$SERVER_METRICS}/metrics" | awk -v n="$1" '$1 == n {print $2}'
}
[ "$(metric fedmf_server_rounds_completed_total)" = 0 ] || fail "rounds before the job"

cli() { "${LC[@]}" cli "$BIN" "$WORK" "$@"; }
cli job submit --server "$SERVER" --spec "$ROOT/deploy/jobs/hfl.yaml"
for _ in $(seq 600); do
  status=$(cli job status --server "$SERVER" --job hfl-demo --json)
  state=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["state"])' "$status")
  [ "$state" = JOB_STATE_FINISHED ] && break
  [ "$state" = JOB_STATE_FAILED ] && fail "job failed: $status"
  sleep 0.5
done
[ "$state" = JOB_STATE_FINISHED ] || fail "job not finished in time: $status"
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
assert rounds == list(range(10)), rounds
assert 0 < led["epsilon_spent"] <= 1.0 + 1e-9 and led["max_epsilon"] == 10, led
# The party's own /metrics agree with its ledger.
assert float(sys.argv[2]) == 10, sys.argv[2]
assert abs(float(sys.argv[3]) - led["epsilon_spent"]) < 1e-9, (sys.argv[3], led)
PY
done
echo PASS
