#!/usr/bin/env python3
"""How much a per-rating DP release can tell one VFL party about its users (issue #16).

VFL: the items are split among the parties (here item id mod PARTIES), every
party holds the same users. Party 0 estimates each user's mean rating from the
ratings on its own items, and may add what the other parties release: every
user's sum of centred ratings over their items, each rating clipped to [-C, C],
plus N(0, (z C)^2) per user once for all of them (as if they summed their shares
of the noise through secure aggregation; each party adding its own would
multiply the noise variance by their number) -- one Gaussian release of the
whole budget, with z for epsilon = 1, delta = 1e-5 (`fedmf privacy noise --sample-rate 1 --steps 1
--delta 1e-5 --epsilon 1`); one rating moves one user's sum by at most C.
Optimistic for the release on purpose: the counts are taken as known, clipping
bias is ignored and the two estimates are combined by inverse variance. Prints
the error variance of party 0's user means, averaged over its own ratings (what
its MSE averages over): its own data alone, the release alone (median), both.

(Per user, the same release carries little: a user's sum is a function of that
user alone, so a user-level bound has to cover the whole sum, and the noise is
then z times the largest sum it covers.)

Usage: dp_user_mean_bound.py RATINGS_FILE Z RESIDUAL_VARIANCE CENTRE [PARTIES]
  RATINGS_FILE       whitespace-separated "user item rating" lines
  RESIDUAL_VARIANCE  the rating noise around user and item biases
  CENTRE             the public centre subtracted before clipping
  PARTIES            number of VFL parties (default 5)
"""
import collections
import sys

from dp_item_mean_bound import print_combination  # same combination, same printout


def main(path, z, res, centre, parties=5):
    own, others = collections.Counter(), collections.Counter()
    rows = []
    for line in open(path):
        u, i, r = line.split()[:3]
        u, i = int(u), int(i)
        rows.append((u, i))
        if i % parties == 0:
            own[u] += 1
        else:
            others[u] += 1
    for clip in (1, 2, 4):
        print_combination("user-mean", clip, z, res,
                          ((own[u], others[u]) for u, i in rows if i % parties == 0))


if __name__ == "__main__":
    if len(sys.argv) not in (5, 6):
        sys.exit(__doc__)
    main(sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]),
         int(sys.argv[5]) if len(sys.argv) == 6 else 5)
