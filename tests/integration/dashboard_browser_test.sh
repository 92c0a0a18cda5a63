#!/usr/bin/env bash
# Issue #17: fedmf-server's dashboard in a real browser. Runs `fedmf demo
# --dashboard` (real daemons, mTLS), loads the finished job's page and the
# index in Debian's headless chromium, and checks the rendered DOM against
# the demo's own --json history: one polyline per party on the epsilon and
# MSE plots holding exactly the per-round values, the round table, the
# parties' epsilon and the job's state.
# Usage: dashboard_browser_test.sh BIN_DIR
set -euo pipefail
BIN=$1
CHROMIUM=$(command -v chromium || true)
if [ -z "$CHROMIUM" ]; then
  echo "FAIL: chromium not found; install the test packages: deploy/install-deps.sh --tests" >&2
  exit 1
fi
WORK=$(mktemp -d "${TMPDIR:-/tmp}/fedmf-dashboard-XXXXXX")
DEMO_PID=""
cleanup() {
  if [ -n "$DEMO_PID" ] && kill -0 "$DEMO_PID" 2>/dev/null; then kill -TERM "$DEMO_PID"; wait "$DEMO_PID" || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT
cd "$WORK"

"$BIN/fedmf" demo --setting hfl --parties 3 --T 6 --seed 5 --dashboard --json \
  > demo.json 2> demo.err &
DEMO_PID=$!
# Bounded poll: the demo says where the page is once the job has ended.
for _ in $(seq 1 600); do
  grep -q "serving until Ctrl-C" demo.err && break
  if ! kill -0 "$DEMO_PID" 2>/dev/null; then
    echo "FAIL: fedmf demo exited before serving:" >&2; cat demo.err >&2; exit 1
  fi
  sleep 0.2
done
URL=$(grep -o 'http://127.0.0.1:[0-9]*/jobs/[^ ]*' demo.err | head -1)
[ -n "$URL" ] || { echo "FAIL: no job page URL in the demo's output:" >&2; cat demo.err >&2; exit 1; }
INDEX=${URL%/jobs/*}/

browse() {  # URL OUT: the DOM after chromium rendered it
  timeout 90 "$CHROMIUM" --headless --no-sandbox --disable-gpu --no-first-run \
    --user-data-dir="$WORK/profile" --dump-dom "$1" > "$2" 2> "$2.log" || {
      echo "FAIL: chromium could not load $1:" >&2; tail -20 "$2.log" >&2; exit 1; }
}
browse "$URL" job.html
browse "$INDEX" index.html

python3 - job.html index.html demo.json <<'PY'
import json, sys
from html.parser import HTMLParser

class Dom(HTMLParser):
    """Collects what the checks need: polylines per chart, table rows, spans."""
    def __init__(self):
        super().__init__()
        self.svg = None; self.polylines = {}; self.ids = {}; self.cur_id = None
        self.table = None; self.rows = {}; self.row = None; self.cell = None
        self.cls = None; self.cells_by_class = {}
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "svg" and "chart" in a.get("class", ""): self.svg = a.get("id")
        if tag == "polyline" and self.svg:
            self.polylines.setdefault(self.svg, {})[a["data-series"]] = a["data-values"]
        if tag == "table": self.table = a.get("id"); self.rows.setdefault(self.table, [])
        if tag == "tr" and self.table: self.row = dict(a, cells=[]); self.rows[self.table].append(self.row)
        if tag == "td" and self.row is not None: self.cell = ""; self.cls = a.get("class")
        if tag == "span" and a.get("id"): self.cur_id = a["id"]; self.ids[self.cur_id] = ""
    def handle_endtag(self, tag):
        if tag == "svg": self.svg = None
        if tag == "table": self.table = None
        if tag == "td" and self.cell is not None:
            self.row["cells"].append(self.cell.strip())
            if self.cls: self.cells_by_class.setdefault(self.cls, []).append(self.cell.strip())
            self.cell = None
        if tag == "span": self.cur_id = None
    def handle_data(self, d):
        if self.cell is not None: self.cell += d
        if self.cur_id: self.ids[self.cur_id] += d

def parse(path):
    d = Dom(); d.feed(open(path).read()); return d

job, index = parse(sys.argv[1]), parse(sys.argv[2])
demo = json.load(open(sys.argv[3]))
history = demo["history"]
fails = []
def check(cond, what):
    if not cond: fails.append(what)

check(job.ids.get("state") == "finished", f"state {job.ids.get('state')!r}")
check(job.ids.get("rounds-done") == "6", f"rounds done {job.ids.get('rounds-done')!r}")
check(len(history) == 6, f"demo history has {len(history)} rounds")
parties = [p["party"] for p in demo["per_party"]]
for chart, key in (("epsilon", "epsilon"), ("mse", "test_mse")):
    lines = job.polylines.get(chart, {})
    check(sorted(lines) == sorted(parties), f"{chart}: series {sorted(lines)} != parties {parties}")
    for party in parties:
        want = [(r["round"] + 1, rep[key]) for r in history for rep in r["reports"]
                if rep["party"] == party and rep[key] is not None]
        got = [tuple(float(v) for v in pt.split(":")) for pt in lines.get(party, "").split()]
        check(len(got) == len(want) == 6, f"{chart} {party}: {len(got)} points, want {len(want)} (6)")
        for (gx, gy), (wx, wy) in zip(got, want):
            check(gx == wx and abs(gy - wy) <= 1e-5 * max(1.0, abs(wy)),
                  f"{chart} {party} round {wx}: plotted {gy}, history {wy}")
# epsilon rises to the job's target and never falls
for party in parties:
    ys = [float(pt.split(":")[1]) for pt in job.polylines.get("epsilon", {}).get(party, "").split()]
    check(ys == sorted(ys) and ys and abs(ys[-1] - demo["epsilon"]) < 1e-4,
          f"epsilon of {party} not rising to {demo['epsilon']}: {ys}")
check(len(job.polylines.get("seconds", {}).get("round time", "").split()) == 6, "round-time series")
round_rows = [r for r in job.rows.get("rounds", []) if r["cells"]]
check([r["cells"][0] for r in round_rows] == [str(i) for i in range(1, 7)],
      f"round table rows {[r['cells'][:1] for r in round_rows]}")
check(all(r["cells"][2] == ", ".join(parties) for r in round_rows), "contributors column")
want_eps = [f"{p['epsilon']:.4f}" for p in demo["per_party"]]
check(job.cells_by_class.get("job-epsilon") == want_eps,
      f"job epsilon cells {job.cells_by_class.get('job-epsilon')} != {want_eps}")
job_rows = [r for r in index.rows.get("jobs", []) if r.get("data-job") == "demo-hfl"]
check(len(job_rows) == 1 and job_rows[0]["cells"][2] == "finished" and job_rows[0]["cells"][3] == "6/6",
      f"index row {job_rows}")
live = [r["cells"] for r in index.rows.get("parties", []) if r["cells"]]
check(sorted(c[0] for c in live) == sorted(parties) and all(c[1] == "connected" for c in live),
      f"index parties {live}")
if fails:
    print("FAIL:\n  " + "\n  ".join(fails)); sys.exit(1)
print(f"dashboard OK: {len(parties)} parties x 6 rounds plotted as in the history")
PY

kill -INT "$DEMO_PID"
wait "$DEMO_PID"
DEMO_PID=""
grep -q "stopping the federation" demo.err || { echo "FAIL: demo did not stop on SIGINT" >&2; exit 1; }
echo PASS
