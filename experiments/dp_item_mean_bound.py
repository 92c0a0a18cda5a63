#!/usr/bin/env python3
"""How much a user-level DP release can tell one HFL party about the items (issue #16).

Party 0 of 10 (users split by id mod 10) estimates each item's mean rating from
its own raters, and may add what the other nine parties release: every item's
sum of centred ratings, each user's whole vector clipped to L2 norm C, plus
N(0, (z C)^2) per item once for the nine (as distributed noise summed through
secure aggregation would give; each party adding its own would multiply the
noise variance by 9) -- one Gaussian release of the whole budget (z for
epsilon = 1, delta = 1e-5: `fedmf privacy noise --sample-rate 1 --steps 1
--delta 1e-5 --epsilon 1`). Optimistic for the release on purpose: the others'
counts are taken as known, clipping bias is ignored and the two estimates are
combined by inverse variance. Prints the error variance of party 0's item means,
averaged over its own ratings (what its MSE averages over): its own data alone,
the release alone (median), and both.

Usage: dp_item_mean_bound.py RATINGS_FILE Z RESIDUAL_VARIANCE CENTRE
  RATINGS_FILE       whitespace-separated "user item rating" lines
  RESIDUAL_VARIANCE  the rating noise around user and item biases
  CENTRE             the public centre subtracted before clipping
"""
import collections
import math
import sys


def print_combination(what, clip, z, res, counts):
    """Prints the error variance of a mean estimated from `own` ratings alone,
    from a release of `others` (weighted) ratings with N(0, (z clip)^2) noise
    alone (median), and from both by inverse variance, averaged over `counts`:
    one (own, others) pair per rating of party 0."""
    n = local = combined = 0
    released = []
    for own, others in counts:
        v_local = res / max(own, 1)
        c = max(others, 1e-9)
        v_release = (z * clip) ** 2 / c ** 2 + res / c
        n += 1
        local += v_local
        combined += 1 / (1 / v_local + 1 / v_release)
        released.append(v_release)
    released.sort()
    print(f"C={clip:2d}: {what} error variance: own data {local / n:.4f}, release (median) "
          f"{released[len(released) // 2]:.4f}, both {combined / n:.4f} "
          f"(reduction {(local - combined) / n:.4f})")


def main(path, z, res, centre, parties=10):
    by_user = collections.defaultdict(list)
    for line in open(path):
        u, i, r = line.split()[:3]
        by_user[int(u)].append((int(i), float(r) - centre))
    for clip in (2, 4, 8, 16):
        scale = {u: min(1.0, clip / math.sqrt(sum(x * x for _, x in v))) for u, v in by_user.items()}
        own, others = collections.Counter(), collections.Counter()
        for u, v in by_user.items():
            for i, _ in v:
                if u % parties == 0:
                    own[i] += 1
                else:
                    others[i] += scale[u]
        print_combination("item-mean", clip, z, res,
                          ((own[i], others[i]) for u, v in by_user.items() if u % parties == 0
                           for i, _ in v))


if __name__ == "__main__":
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    main(sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]))
