#!/usr/bin/env python3
"""check_slow_sync.py HCLOCK MPIRUN_SH MPIEXEC - a sync that takes far longer than its spec
planned says so: `hclock check --sync hca3/10/skampi/5/span=0.1/paper` plans 0.1 s; with every
message rank 1 receives handed over 40 ms late (HCLOCK_FAULT=rank=1,at=stall,ms=40,share=1:
each fit point's 5 ping-pongs, no retakes under paper) it takes seconds, and the JSON has
planned_s 0.1 and slow_sync true, one warning line on stderr gives the duration, the factor
and the check's round trips. Without the fault the same check's slow_sync is exactly whether
its sync took more than 5x its plan and a second more, and the warning line appears only
then (a quiet machine: never). Prints one line per check; exits 1 if any failed."""
import json
import sys

import checkargs

hc, run, mpiexec = sys.argv[1:4]
failures = 0
SPEC = "hca3/10/skampi/5/span=0.1/paper"


def check(ok, what):
    global failures
    print(("ok   " if ok else "FAIL ") + what)
    failures += not ok


def launch(fault):
    p = checkargs.run_fault([run, mpiexec, "2", hc, "check", "--sync", SPEC, "--wait", "0",
                             "--format", "json", "--emulate", "offset=1,skew=100e-6,seed=3"],
                            fault)
    try:
        r = json.loads(p.stdout)["runs"][0]
    except (ValueError, KeyError, IndexError):
        r = None
    warn = [ln for ln in p.stderr.splitlines() if "its spec planned" in ln]
    return p, r, warn


for fault in (None, "rank=1,at=stall,ms=40,share=1"):
    p, r, warn = launch(fault)
    what = "stalled 40 ms at every message" if fault else "no fault"
    if p.returncode or r is None:
        check(False, f"{what}: exit {p.returncode} {p.stderr[-400:]}")
        continue
    slow = r["sync_duration_s"] > max(5 * r["planned_s"], r["planned_s"] + 1)
    check(r["planned_s"] == 0.1 and r["slow_sync"] == slow and (len(warn) == 1) == slow,
          f"{what}: sync {r['sync_duration_s']:.3f} s against a plan of {r['planned_s']} s: "
          f"slow_sync {r['slow_sync']}, warning lines {warn}")
    if fault:
        check(slow and warn and "%.0fx" % (r["sync_duration_s"] / 0.1) in warn[0] and
              "round trips: median" in warn[0],
              f"{what}: the sync was slow and the line says by how much and the round trips")
sys.exit(1 if failures else 0)
