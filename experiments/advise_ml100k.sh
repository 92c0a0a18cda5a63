#!/usr/bin/env bash
# Reproduces the Price-of-Privacy findings of Pejó et al. (PoPETs 2019) on
# MovieLens 100K with `fedmf advise` (docs/results.md, section advise).
#
#   experiments/advise_ml100k.sh BUILD_BIN_DIR ML100K_DIR OUT_DIR [SETTING]
#
# Splits u.data into two players by user (HFL: odd / even user ids) or by
# item (VFL: odd / even item ids), measures the trade-off grid once
# (joint mode), replays the game for a sweep of weight ratios C/B
# (the paper's Table 5) and the Collaboration-as-a-Service case (player 1
# unconcerned, the paper's Table 4), and measures the same grid with the
# self-division and proxy modes for comparison. Writes OUT_DIR/*.json and
# prints markdown tables.
set -euo pipefail
bin=${1:?build bin dir}; ml=${2:?ml-100k dir}; out=${3:?output dir}; setting=${4:-hfl}
mkdir -p "$out"
col=1; [ "$setting" = vfl ] && col=2
awk -v c=$col -F'\t' '$c % 2 == 1' "$ml/u.data" > "$out/player1.data"
awk -v c=$col -F'\t' '$c % 2 == 0' "$ml/u.data" > "$out/player2.data"
common=(--setting "$setting" --party-data "movielens:$out/player1.data"
        --party-data "movielens:$out/player2.data" --rating-min 1 --epsilons 8,4,2,1,0.5
        --seed 1 --repeats "${REPEATS:-1}" --quiet --json)
# REPEATS=1 (the documented tables: seed 1's grid); REPEATS=3 is `fedmf
# advise`'s default (the mean of seeds 1..3 and each gain's 95% interval).
for mode in joint self-division proxy; do
  /usr/bin/time -f "$mode: %e s" "$bin/fedmf" advise "${common[@]}" --mode "$mode" \
    --plot "$out/$setting-$mode.svg" > "$out/$setting-$mode.json"
done
python3 - "$bin" "$out" "$setting" <<'PY'
import json, subprocess, sys
bin_dir, out, setting = sys.argv[1:]
def advise(grid, weights):
    r = subprocess.run([f"{bin_dir}/fedmf", "advise", "--grid-from", grid, "--weights", weights,
                        "--json", "--quiet"], check=True, capture_output=True, text=True)
    return json.loads(r.stdout)
def ne(j):
    return "(" + ", ".join(str(x) for x in j["recommendation"]["epsilon"]) + ")"
def pop(j):
    p = j["price_of_privacy"]
    return "n/a" if p is None else f"{p:.3f}"
for mode in ["joint", "self-division", "proxy"]:
    g = json.load(open(f"{out}/{setting}-{mode}.json"))["grid"]
    print(f"\n{setting} {mode}: alone RMSE {g['alone_rmse'][0]:.4f} / {g['alone_rmse'][1]:.4f}; "
          f"together, no noise: {g['rmse_player1'][0][0]:.4f} / {g['rmse_player2'][0][0]:.4f}")
    print("player 1 RMSE (rows: eps1, cols: eps2 = " + ", ".join(map(str, g["epsilon"])) + ")")
    for label, row in zip(g["epsilon"], g["rmse_player1"]):
        print(f"| {label} | " + " | ".join(f"{x:.4f}" for x in row) + " |")
grid = f"{out}/{setting}-joint.json"
ratios = [0, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0]
print(f"\n{setting} joint, both concerned: recommended (eps1, eps2) and PoP; rows C1/B1, cols C2/B2")
print("| C1/B1 \\ C2/B2 | " + " | ".join(map(str, ratios)) + " |")
for c1 in ratios:
    cells = []
    for c2 in ratios:
        j = advise(grid, f"1,{c1},1,{c2}")
        cells.append(f"{ne(j)} {pop(j)}")
    print(f"| {c1} | " + " | ".join(cells) + " |")
PY
