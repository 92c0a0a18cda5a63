#!/usr/bin/env bash
# issue #53: chooses a knob of --algorithm stats on the parties' own
# validation ratings (validation_mse), never on test_mse: runs the job once
# per value at each epsilon and seed and prints the validation MSE (the test
# MSE only for the record).
# Usage: experiments/stats_sweep.sh BIN_DIR DATA_SPEC FLAG "VALUES" "EPSILONS" "SEEDS" [EXTRA FLAGS...]
#   e.g. experiments/stats_sweep.sh build/bin movielens:$ML100K/u.data \
#        --stats-releases "1 2 3 5" "16 64" "1 2" --setting hfl --parties 10
# Prints: flag value epsilon seed validation_mse test_mse
set -euo pipefail
bin=$1; data=$2; flag=$3; values=$4; epsilons=$5; seeds=$6
shift 6
for v in $values; do
  for e in $epsilons; do
    for s in $seeds; do
      "$bin/fedmf" train --algorithm stats --data "$data" --seed "$s" --quiet --json \
        --epsilon "$e" "$flag" "$v" "$@" |
        python3 -c "import sys, json; d = json.loads(sys.stdin.readline()); \
print('$flag', '$v', '$e', '$s', round(d['validation_mse'], 4), round(d['test_mse'], 4))"
    done
  done
done
