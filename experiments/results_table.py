#!/usr/bin/env python3
"""Runs the FMF results grid with `fedmf train` and prints a Markdown table.

setting x epsilon x granularity on MovieLens 100K (T=100, T'=10, p=20,
eta=0.01, delta=1e-5, seed fixed), plus the non-private references. Every
federated row runs the FMF paper's algorithm (--algorithm paper): the grid
reproduces the paper's methods; fedmf's defaults are in docs/results.md,
section stats.

usage: experiments/results_table.py BUILD_BIN_DIR ML100K_U_DATA [SEED]
"""
import json
import subprocess
import sys

BIN, DATA = sys.argv[1], sys.argv[2]
SEED = sys.argv[3] if len(sys.argv) > 3 else "1"
EPSILONS = ["0.5", "1", "2", "4", "8"]


def train(*args):
    cmd = [f"{BIN}/fedmf", "train", "--data", f"movielens:{DATA}", "--seed", SEED,
           "--algorithm", "paper", "--json", "--quiet", *args]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def fmt(r):
    return f"{r['test_mse']:.4f}"


rows = [
    ("VFL-SGDMF (s=5, random items)", ["--setting", "vfl", "--parties", "5"]),
    ("local-only DP-SGD (VFL split, s=5)", ["--setting", "local", "--split", "vertical", "--parties", "5"]),
    ("HFL-SGDMF (s=10)", ["--setting", "hfl", "--parties", "10"]),
    ("HFL-synSGD (s=10)", ["--setting", "hfl-synsgd", "--parties", "10"]),
]

print("| setting | granularity | " + " | ".join(f"ε={e}" for e in EPSILONS) + " |")
print("|---|---|" + "---|" * len(EPSILONS))
global_eps = {}  # VFL per user: the federation-wide per-user epsilon of each cell
for gran in ["rating", "user"]:
    for name, args in rows:
        if gran == "rating" and "hfl" in " ".join(args):
            continue  # refused: no valid per-rating sensitivity (docs/privacy.md, section hfl)
        cells = []
        for eps in EPSILONS:
            r = train(*args, "--epsilon", eps, "--granularity", gran)
            assert r["epsilon"] <= float(eps) + 1e-9, r
            if "epsilon_per_user_global" in r and args[1] == "vfl":
                global_eps[eps] = r["epsilon_per_user_global"]
            cells.append(fmt(r))
        theta = "" if gran == "rating" else f" (θ={5 if 'vertical' in args or 'vfl' in args else 10})"
        print(f"| {name} | {gran}{theta} | " + " | ".join(cells) + " |", flush=True)

if global_eps:
    print()
    print("VFL-SGDMF per user (s=5): the per-party ε above; per user across all 5 parties (RDP curves "
          "composed, `epsilon_per_user_global`): " +
          ", ".join(f"ε={e} → {global_eps[e]:.3f}" for e in EPSILONS if e in global_eps) + ".")

central = train("--setting", "central", "--epsilon", "inf")
local_h = train("--setting", "local", "--split", "horizontal", "--parties", "10")
print()
print(f"Non-private references: central MF {fmt(central)}; "
      f"local-only non-private (HFL split, s=10) {fmt(local_h)}.")
