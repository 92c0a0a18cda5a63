#!/usr/bin/env bash
# issue #16: picks --hfl-clip and --lr for HFL per-user clipping (with
# --algorithm alternate) on the parties' own validation split
# (validation_mse), never on test_mse.
# Usage: experiments/hfl_clip_sweep.sh BIN_DIR U_DATA EPSILON [CLIPS] [LRS] [EXTRA FLAGS...]
# Prints: epsilon clip lr validation_mse test_mse (test only for the record).
set -euo pipefail
bin=$1; data=$2; eps=$3
clips=${4:-"1 2 5 10 20"}
lrs=${5:-"0.05 0.1 0.2 0.5 1 2 5"}
shift $(( $# < 5 ? $# : 5 ))
for c in $clips; do
  for lr in $lrs; do
    "$bin/fedmf" train --setting hfl --parties 10 --data "movielens:$data" --seed 1 --quiet --json \
      --epsilon "$eps" --algorithm alternate --hfl-clip "$c" --lr "$lr" "$@" |
      python3 -c "import sys, json; d = json.loads(sys.stdin.readline()); \
print('$eps', '$c', '$lr', round(d['validation_mse'], 4), round(d['test_mse'], 4))"
  done
done
