#!/usr/bin/env python3
"""What a per-rating epsilon is worth when the DP steps sample USERS (issue #54).

With user sampling a rating enters a step exactly when its user does, together
with the user's other ratings, which move the release far enough to show
whether she was sampled. Given that, the rating's privacy loss over the job is
that of a Gaussian mechanism with mu = sqrt(K / z^2 + 1 / z_c^2): K ~
Binomial(steps, q) steps that contained it (each a Gaussian at multiplier z,
no amplification) plus the size release (one Gaussian at z_c). This prints the
epsilon at delta of that mixture over K, computed exactly:
  delta(eps) = E_K[ Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) ]
(the Gaussian mechanism's tight delta, Balle & Wang 2018). With rating sampling
the steps are the Poisson-subsampled Gaussian the RDP accountant charges, and
`fedmf privacy epsilon` gives the job's epsilon (docs/privacy.md, section
sampling).

usage: experiments/user_sampling_epsilon.py STEPS Q Z Z_COUNT [DELTA]
e.g. VFL's defaults at a printed epsilon 1 (fedmf train --json: steps,
sample_rate, noise_multiplier, count_noise_multiplier):
  experiments/user_sampling_epsilon.py 1000 0.01 1.5411145933999428 18.113392783455833
"""
import math
import sys


def phi(x):
    return 0.5 * math.erfc(-x / math.sqrt(2))


def gaussian_delta(eps, mu):
    if mu == 0:
        return 0.0
    return phi(-eps / mu + mu / 2) - math.exp(eps) * phi(-eps / mu - mu / 2)


def main():
    steps, q, z, z_count = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
    target = float(sys.argv[5]) if len(sys.argv) > 5 else 1e-5

    def pmf(k):
        return math.exp(math.lgamma(steps + 1) - math.lgamma(k + 1) - math.lgamma(steps - k + 1) +
                        k * math.log(q) + (steps - k) * math.log1p(-q))

    # K beyond mean + 12 sd carries no mass that matters at delta >= 1e-12.
    k_max = min(steps, int(steps * q + 12 * math.sqrt(steps * q * (1 - q)) + 12))
    weights = [(pmf(k), math.sqrt(k / z**2 + (1 / z_count**2 if z_count > 0 else 0)))
               for k in range(k_max + 1)]

    def delta(eps):
        return sum(p * gaussian_delta(eps, mu) for p, mu in weights)

    lo, hi = 0.0, 1.0
    while delta(hi) > target:
        hi *= 2
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if delta(mid) > target else (lo, mid)
    print(f"epsilon at delta = {target:g} with user sampling (K ~ Binomial({steps}, {q})): {hi:.4f}")


if __name__ == "__main__":
    main()
