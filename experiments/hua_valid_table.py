#!/usr/bin/env python3
"""Issue #59: test MSE of Hua's valid variant (S2-TP and S3) against epsilon, over seeds,
next to the non-private baseline (Hua's MF without noise) and each user's mean alone.

Usage: experiments/hua_valid_table.py BIN_DIR U_DATA [SEEDS] [EXTRA FLAGS...]
Runs `fedmf train --setting hua-s2-tp|hua-s3 --data movielens:U_DATA --rating-range 1,5
--epsilon E --seed S --json --quiet` for E in {1, 4, 16, inf}; caches each run's JSON in
$HUA_CACHE (default /tmp/hua-valid-cache) and prints a markdown table (mean +- sd).
"""
import json
import os
import statistics
import subprocess
import sys


def run(bin_dir, data, setting, eps, seed, extra):
    cache = os.environ.get("HUA_CACHE", "/tmp/hua-valid-cache")
    os.makedirs(cache, exist_ok=True)
    key = "_".join([setting, eps, str(seed)] + [x.strip("-") for x in extra])
    path = os.path.join(cache, key + ".json")
    if not os.path.exists(path):
        cmd = [os.path.join(bin_dir, "fedmf"), "train", "--setting", setting, "--data",
               "movielens:" + data, "--rating-range", "1,5", "--epsilon", eps, "--seed",
               str(seed), "--json", "--quiet"] + extra
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        with open(path, "w") as f:
            f.write(out.splitlines()[-1])
    with open(path) as f:
        return json.loads(f.read())


def fmt(values):
    if len(values) == 1:
        return "%.4f" % values[0]
    return "%.4f ± %.4f" % (statistics.mean(values), statistics.stdev(values))


def main():
    bin_dir, data = sys.argv[1], sys.argv[2]
    seeds = [int(s) for s in (sys.argv[3] if len(sys.argv) > 3 else "1,2,3").split(",")]
    extra = sys.argv[4:]
    print("| setting | ε (budget) | test MSE | ε spent (busiest user) | ε spent (median user) "
          "| users on their mean | non-private baseline | user mean only |")
    print("|---|---|---|---|---|---|---|---|")
    for setting in ("hua-s2-tp", "hua-s3"):
        for eps in ("1", "4", "16", "inf"):
            runs = [run(bin_dir, data, setting, eps, s, extra) for s in seeds]
            col = lambda k: [float(r[k]) for r in runs]
            print("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
                setting, eps, fmt(col("test_mse")),
                "inf" if eps == "inf" else "%.3f" % max(col("epsilon")),
                "inf" if eps == "inf" else "%.3f" % statistics.mean(col("epsilon_median_user")),
                "%.0f" % statistics.mean(col("users_on_user_mean")),
                fmt(col("baseline_test_mse")), fmt(col("user_mean_test_mse"))))


if __name__ == "__main__":
    main()
