#!/usr/bin/env bash
# issue #16: picks --alternations and --lr for `--algorithm alternate` on the
# parties' own validation split (validation_mse), never on test_mse.
# Usage: experiments/hfl_alternate_sweep.sh BIN_DIR U_DATA EPSILON
# Prints: epsilon alternations lr validation_mse test_mse (test only for the record).
set -euo pipefail
bin=$1; data=$2; eps=$3
for a in 5 10 20; do
  for lr in 0.01 0.02 0.05 0.1 0.2 0.5 1 2 5; do
    "$bin/fedmf" train --setting hfl --parties 10 --data "movielens:$data" --seed 1 --quiet --json \
      --epsilon "$eps" --algorithm alternate --alternations "$a" --lr "$lr" |
      python3 -c "import sys, json; d = json.loads(sys.stdin.readline()); \
print('$eps', '$a', '$lr', round(d['validation_mse'], 4), round(d['test_mse'], 4))"
  done
done
