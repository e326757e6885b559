#!/usr/bin/env python3
"""Run `hclock check --sync 'auto(BUDGET)' --wait 0` on 2 emulated ranks with a stall injected
into auto's burst (HCLOCK_FAULT=rank=0,at=burst,k=K: from the reference's K-th group on, each
ping-pong of the burst waits 1 ms on rank 0, so every round trip its client measures is 1 ms
longer) and hold the choice against it (docs/check.md, "Sync specs chosen by a time budget").

usage: check_auto_stall.py HCLOCK MPIRUN MPIEXEC BUDGET

- A late stall (k=LATE_K=40; a quiet burst makes about 43 groups: 39 clean, then the fault's):
  its groups are retaken or left out, so the plan rests on clean groups only: at least 8 kept,
  their tail (0.99 quantile minus floor) below the 1 ms the stall adds, a choice of more than
  PLAN_MIN_NFIT (4) points, no warning, and at least one group counted as made through a stall
  (JSON `groups_stalled`).
- An early stall (k=EARLY_K=3): fewer than 8 clean groups within the time: the sync warns that
  its choice rests on stalled round trips (one line, naming the pair), and still ends.
- Without the detection the late stall's groups would be planned on: their round trips put the
  tail at 1 ms or more (checked on the early stall's run, which plans on them).

Beside other jobs on the cores the bursts meet stalls of their own, and slow groups: a
late-stall run whose burst made fewer groups than the fault's first (JSON `groups_made`; about
43 on a quiet machine) never met the fault, and what it kept is the machine's (its warning,
or a tail of scheduler slices in groups no slower than the rest): said, not counted (a judge
that called clean groups stalled on a quiet machine makes more groups, and still fails). An
early-stall run without a warning whose bursts' floor is above 0.3 ms (every round trip waited
for a core) cannot tell the fault's 1 ms from it: said, not counted.
"""
import json, os, subprocess, sys

hclock, mpirun, mpiexec, budget = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
EMU = "offset=1,skew=100e-6,noise=20e-9,seed=3"
failed = 0
LATE_K, EARLY_K = 40, 3  # the fault's first group: late (a quiet burst makes ~43), early


def run(k):
    cmd = [mpirun, mpiexec, "2", hclock, "check", "--sync", f"auto({budget}s)", "--wait", "0",
           "--emulate", EMU, "--format", "json"]
    env = dict(os.environ, HCLOCK_FAULT=f"rank=0,at=burst,k={k}", HCLOCK_TEST_TIMEOUT="60")
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    print(f"$ HCLOCK_FAULT={env['HCLOCK_FAULT']} {' '.join(cmd)} -> exit {p.returncode}")
    try:
        au = json.loads(p.stdout)["runs"][0]["auto"]
    except (ValueError, KeyError, IndexError):
        au = None
    warn = [l for l in p.stderr.splitlines() if "met stalls" in l]
    return p, au, warn


def check(cond, what):
    global failed
    print(("ok   " if cond else "FAIL ") + what)
    failed += not cond
    return cond


p, au, warn = run(LATE_K)
# (the evidence of a busy machine is the bursts' pace, which the stall judge does not decide:
# fewer groups made in the budget than the fault's first, about 43 on a quiet machine)
# (or, without a warning, a floor of the bursts above 0.3 ms: every round trip a slice)
if p.returncode == 0 and au and (au["groups_made"] < LATE_K or
                                 (not warn and au["floor_ns"] > 0.3e6)):
    print(f"skip late stall: the burst made {au['groups_made']} groups (the fault's first is "
          f"number {LATE_K}), its floor {au['floor_ns']:.0f} ns, tail {au['tail_ns']:.0f} ns: a busy "
          f"machine's; warned: {warn}; not counted")
elif check(p.returncode == 0 and au, "late stall: check exits 0 with an auto report"):
    check(au["groups"] >= 8 and au["tail_ns"] < 1e6 and au["nfit"] > 4 and not warn and
          au["groups_stalled"] >= 1,
          f"late stall: {au['groups']} groups kept, {au['groups_stalled']} of "
          f"{au['groups_made']} made through a stall, tail {au['tail_ns']:.0f} ns, "
          f"{au['spec']} (predicted {au['predicted_error_ns']:.0f} ns), warnings {warn}")
p, au, warn = run(EARLY_K)
if p.returncode == 0 and au and not warn and au["floor_ns"] > 0.3e6:
    # the stall judge (3 x the floor + 2 us) cannot tell 1 ms more from a floor this high
    print(f"skip early stall: no warning, the bursts' floor {au['floor_ns']:.0f} ns (a busy "
          f"machine's every round trip waited for a core) hides the fault's 1 ms; not counted")
elif check(p.returncode == 0 and au, "early stall: check exits 0 with an auto report"):
    check(len(warn) == 1 and "rank 1 with rank 0" in warn[0] and au["tail_ns"] >= 1e6,
          f"early stall: warned {warn}; planned on the stall: tail {au['tail_ns']:.0f} ns, "
          f"{au['spec']}")
sys.exit(1 if failed else 0)
