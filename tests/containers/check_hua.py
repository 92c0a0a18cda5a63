#!/usr/bin/env python3
"""Checks a finished Hua S3 job (deploy/jobs/hua-s3.yaml) for the container
and local-cluster tests: the numbers, not just "it ran".

  check_hua.py SPEC_YAML STATUS_JSON AGGREGATOR_SHUTDOWN_LINE

STATUS_JSON is `fedmf job status --json`; the last argument is the
aggregator's log line "shutting down: N reports accepted, R rejected, S sums
forwarded" (text or JSON log format).
"""
import json
import math
import re
import sys


def spec_values(path):
    """The flat `key: value` lines of the job spec (enough for the keys used here)."""
    values = {}
    for line in open(path):
        m = re.match(r"^(\w+):\s*([^#]*?)\s*(#.*)?$", line)
        if m:
            values[m.group(1)] = m.group(2)
    return values


def main():
    spec = spec_values(sys.argv[1])
    st = json.loads(sys.argv[2])
    users = int(spec["expected_users"])
    iterations = int(spec["rounds"])
    span = float(spec["rating_max"]) - float(spec["rating_min"])
    assert st["state"] == "JOB_STATE_FINISHED", st
    assert st["job_id"] == spec["job_id"], st
    h = st["hua"]
    assert h["registered_users"] == users, h
    its = h["iterations"]
    # Every iteration completed, in order; with join = leave = 0 and K >= users
    # each plans every registered user and updates items.
    assert [r["iteration"] for r in its] == list(range(1, iterations + 1)), its
    for r in its:
        assert r["users"] == min(users, int(spec["max_online"])), r
        assert r["dropped_users"] == 0 and r["passes"] == 1, r
        assert 0 < r["items_updated"] <= int(spec["num_items"]), r
    # The hosts' test error over the published V: finite and within the
    # rating span (predictions are clamped to the range).
    assert h["test_count"] > 0, h
    for key, bound in (("test_mae", span), ("test_mse", span * span)):
        v = h[key]
        assert v is not None and math.isfinite(v) and 0 < v <= bound, (key, v)
    # The aggregator saw the users' masked reports: one per planned user and
    # round (iteration rounds, plus at most one per user in each INIT round),
    # none rejected, and at least one forwarded sum per updated item.
    m = re.search(r"(\d+) reports accepted, (\d+) rejected, (\d+) sums forwarded", sys.argv[3])
    assert m, sys.argv[3]
    accepted, rejected, forwarded = map(int, m.groups())
    planned = sum(r["users"] for r in its)
    assert rejected == 0, sys.argv[3]
    assert planned <= accepted <= planned + h["init_rounds"] * users, (accepted, planned, h)
    assert forwarded >= sum(r["items_updated"] for r in its), (forwarded, its)
    # The valid variant: every user's epsilon as the server counts it, none
    # above the job's (docs/privacy.md, section hua); the paper's mechanism
    # has none (inf).
    if spec.get("paper_noise", "false") != "true":
        budget = float(spec["epsilon"])
        assert len(h["users"]) == users, h["users"]
        assert all(0 < u["epsilon"] <= budget + 1e-9 for u in h["users"]), h["users"]
        assert h["epsilon"] == max(u["epsilon"] for u in h["users"]), h
        # join = leave = 0 and K >= users: everybody released in every iteration.
        assert all(u["releases"] == iterations for u in h["users"]), h["users"]
    print("hua-s3 finished: %d users, %d iterations, test MAE %.4f MSE %.4f over %d ratings; "
          "largest user epsilon %s; aggregator: %d reports, %d sums"
          % (users, len(its), h["test_mae"], h["test_mse"], h["test_count"], h.get("epsilon"),
             accepted, forwarded))


if __name__ == "__main__":
    main()
