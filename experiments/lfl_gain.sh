#!/usr/bin/env bash
# LFL-SGDMF against Stage 1 alone (issue #16; docs/results.md, section lfl).
#
#   experiments/lfl_gain.sh BUILD_BIN_DIR ML100K_DIR OUT_DIR [--large]
#
# ML-100K (943 devices): --algorithm paper | whole at epsilon in
# {0.5, 1, 2, 4, 8, inf}, T = 10, no dropout, seed 1, the analytic
# aggregation (same noise law as the devices' own, drawn once per entry),
# plus whole at epsilon = 1 through the real SecAgg+ state machines.
# --large adds the 70,000-device synthetic set (10,000 items, 7M ratings;
# ~6 min and 3.5 GB per run) at epsilon = 1 for both algorithms.
# Learning rates come from the rule (LflLearningRate), nothing is tuned
# here. Writes OUT_DIR/*.json and prints a markdown table. A run whose
# JSON is already in OUT_DIR is not repeated.
set -euo pipefail
bin=${1:?build bin dir}; ml=${2:?ml-100k dir}; out=${3:?output dir}; large=${4:-}
mkdir -p "$out"
run() {  # name, data, flags...
  local name=$1 data=$2; shift 2
  [ -s "$out/$name.json" ] && return 0
  "$bin/fedmf" train --setting lfl --data "$data" --T 10 --omega 0.3 --dropout 0,0 --seed 1 \
    --quiet --json "$@" > "$out/$name.json.tmp"
  mv "$out/$name.json.tmp" "$out/$name.json"
}
for alg in paper whole; do
  for eps in 0.5 1 2 4 8 inf; do
    run "ml100k-$alg-eps$eps" "movielens:$ml/u.data" --algorithm "$alg" --epsilon "$eps" \
      --aggregation analytic
  done
done
run "ml100k-whole-eps1-secagg+" "movielens:$ml/u.data" --algorithm whole --epsilon 1 \
  --aggregation secagg+
if [ "$large" = "--large" ]; then
  for alg in whole paper; do
    run "syn70k-$alg-eps1" "synthetic:users=70000,items=10000,density=0.01,seed=7" \
      --algorithm "$alg" --epsilon 1 --aggregation analytic
  done
fi
python3 - "$out" <<'PY'
import json, pathlib, sys
rows = sorted(pathlib.Path(sys.argv[1]).glob("*.json"))
print("| run | epsilon (reported) | lr | Stage 1 alone | test MSE | change | kept Stage 1 | seconds |")
print("|---|---|---|---|---|---|---|---|")
for p in rows:
    d = json.loads(p.read_text())
    s1, t = d["stage1_test_mse"], d["test_mse"]
    eps = d["epsilon"]
    print(f"| {p.stem} | {eps if isinstance(eps, str) else round(eps, 4)} | {d['learning_rate']:.4g} | "
          f"{s1:.4f} | {t:.4f} | {100 * (t - s1) / s1:+.1f}% | {d['kept_stage1']}/{d['parties']} | "
          f"{d['seconds']:.1f} |")
PY
