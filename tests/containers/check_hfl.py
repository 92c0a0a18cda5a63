#!/usr/bin/env python3
"""Checks a finished HFL job (deploy/jobs/hfl.yaml) for the container tests
(compose and Kubernetes): the numbers, not just "it ran".

  check_hfl.py status SPEC_YAML STATUS_JSON        `fedmf job status --json`
  check_hfl.py ledger SPEC_YAML PARTY LEDGER_JSON  `fedmf ledger --json` of PARTY

status: FINISHED after all T rounds, every roster party accepted, with this
job's epsilon in (0, the job's target] and no test MSE (the shipped
configs keep report_metrics off).
ledger: the job charged PARTY once per round (0 .. T-1) and once for the DP
size release (round T + 1), nothing twice, and the ledger's whole spend is in
(0, the job's target] (the parties' ledgers start empty in these tests),
within its budget.
"""
import json
import re
import sys


def spec(path):
    """job_id, rounds, epsilon, roster: flat `key: value` lines (any python3, no yaml module)."""
    s = {}
    for line in open(path):
        m = re.match(r"^(\w+):\s*([^#]*?)\s*(#.*)?$", line)
        if m:
            s[m.group(1)] = m.group(2)
    roster = [p.strip() for p in s["roster"].strip("[]").split(",")]
    return s["job_id"], int(s["rounds"]), float(s["epsilon"]), sorted(roster)


def check_status(spec_path, status):
    job, rounds, epsilon, roster = spec(spec_path)
    st = json.loads(status)
    assert st["state"] == "JOB_STATE_FINISHED", st["state"]
    assert st["rounds_completed"] == rounds, (st["rounds_completed"], rounds)
    names = sorted(p["name"] for p in st["parties"])
    assert names == roster, (names, roster)
    for p in st["parties"]:
        assert p["accepted"], p
        assert 0 < p["epsilon"] <= epsilon + 1e-9, p
        # The shipped configs keep report_metrics off: no noise-free test MSE
        # leaves a party, and the server shows it as unknown (-1).
        assert p["test_mse"] == -1, p
    print("%s finished: %d rounds," % (job, rounds),
          {p["name"]: round(p["epsilon"], 4) for p in st["parties"]})


def check_ledger(spec_path, party, ledger):
    job, rounds, epsilon, _ = spec(spec_path)
    led = json.loads(ledger)
    charged = sorted(e["round"] for e in led["entries"] if e["job_id"] == job)
    assert charged == list(range(rounds)) + [rounds + 1], charged
    assert 0 < led["epsilon_spent"] <= epsilon + 1e-9 <= led["max_epsilon"], led
    print("%s ledger: %d charges for %s, epsilon %.4f of %g" %
          (party, len(charged), job, led["epsilon_spent"], led["max_epsilon"]))


def main():
    try:
        if len(sys.argv) == 4 and sys.argv[1] == "status":
            check_status(sys.argv[2], sys.argv[3])
        elif len(sys.argv) == 5 and sys.argv[1] == "ledger":
            check_ledger(sys.argv[2], sys.argv[3], sys.argv[4])
        else:
            sys.exit(__doc__)
    except AssertionError as e:
        sys.exit("check_hfl %s: %s" % (sys.argv[1], e))


if __name__ == "__main__":
    main()
