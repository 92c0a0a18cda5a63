#!/usr/bin/env bash
# Reproduces the trend of "Differentially private collaborative coupling
# learning" (paper 000, Figures 3-4) on MovieLens 100K with
# `fedmf train --setting coupling` (docs/results.md, section coupling).
#
#   experiments/coupling_ml100k.sh BUILD_BIN_DIR ML100K_DIR OUT_DIR [JOBS]
#
# Rows: non-private; the paper's sigma in {0.05, 0.1, 0.2} (C = 1/6, so
# z = 6 sigma); and the epsilons the paper claims (5.92, 2.78, 1.35), each
# held by our accountant. Every row picks its learning rate from {0.02, 0.05, 0.1, 0.2}
# on the validation ratings carved from training (never the test set), then
# reports that run's test RMSE/MAE. Writes OUT_DIR/*.json, prints a markdown
# table with each row's epsilon after these epochs and after 300. A run
# whose JSON is already in OUT_DIR is not repeated (delete it to redo).
set -euo pipefail
bin=${1:?build bin dir}; ml=${2:?ml-100k dir}; out=${3:?output dir}; jobs=${4:-2}
epochs=${EPOCHS:-20}
mkdir -p "$out"
common=(--setting coupling --data "movielens:$ml/u.data" --rating-range 1,5 --parties 1
        --dim 10 --sample-rate 0.01 --coupling-epochs "$epochs" --seed 1 --quiet --json)
rows=("nonprivate:--epsilon inf" "sigma0.05:--coupling-sigma 0.05" "sigma0.1:--coupling-sigma 0.1"
      "sigma0.2:--coupling-sigma 0.2" "eps5.92:--epsilon 5.92" "eps2.78:--epsilon 2.78"
      "eps1.35:--epsilon 1.35")
for row in "${rows[@]}"; do
  name=${row%%:*}; flags=${row#*:}
  for lr in 0.02 0.05 0.1 0.2; do
    [ -s "$out/$name-lr$lr.json" ] && continue
    echo "$bin/fedmf train ${common[*]} $flags --lr $lr > $out/$name-lr$lr.json.tmp && mv $out/$name-lr$lr.json.tmp $out/$name-lr$lr.json"
  done
done | xargs -P "$jobs" -I{} sh -c '{}'
python3 - "$bin" "$out" "$epochs" "${rows[@]}" <<'PY'
import json, subprocess, sys
bin_dir, out, epochs, rows = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
paper = {"sigma0.05": "0.73 / 0.54, ε 5.92", "sigma0.1": "0.85 / 0.61, ε 2.78",
         "sigma0.2": "1.00 / 0.71, ε 1.35", "nonprivate": "0.66 / 0.48"}
def eps300(j):
    if j["noise_multiplier"] == 0: return "∞"
    r = subprocess.run([f"{bin_dir}/fedmf", "privacy", "epsilon", "--sample-rate",
                        str(j["sample_rate"]), "--noise-multiplier", repr(j["noise_multiplier"]),
                        "--steps", str(300 * j["steps"] // epochs), "--delta", str(j["delta"]),
                        "--json"], check=True, capture_output=True, text=True)
    return f'{json.loads(r.stdout)["epsilon"]:.2f}'
print(f"| row | σ (= z·C) | z | lr (validation) | validation RMSE | test RMSE | test MAE | ε after {epochs} epochs | ε after 300 epochs | paper (ML-10M RMSE / MAE, ε at 300) | seconds |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for row in rows:
    name = row.split(":")[0]
    runs = [json.load(open(f"{out}/{name}-lr{lr}.json")) for lr in ("0.02", "0.05", "0.1", "0.2")]
    j = min(runs, key=lambda r: r["validation_rmse"])
    eps = "∞" if j["epsilon"] == "inf" else f'{j["epsilon"]:.2f}'
    print(f'| {name} | {j["sigma"]:.4f} | {j["noise_multiplier"]:.3f} | {j["learning_rate"]} | '
          f'{j["validation_rmse"]:.4f} | {j["test_rmse"]:.4f} | {j["test_mae"]:.4f} | {eps} | '
          f'{eps300(j)} | {paper.get(name, "—")} | {j["seconds"]:.0f} |')
PY
