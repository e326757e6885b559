#!/usr/bin/env python3
"""Run `hclock check --sync 'auto(BUDGET)' --wait 0` under emulated clocks and hold the sync's
time (check's JSON: auto.run_s, bursts and HCA3, the slowest rank's) against its budget
(docs/check.md, "Sync specs chosen by a time budget").

Every pair's burst is capped at BUDGET / 4 / rounds (at least 8 groups of 16 ping-pongs); each
of HCA3's rounds stops taking fit points when its share of the budget is spent. What may go
beyond, derived from what the run reported: the bursts' time beyond their quarter (the 8
groups a burst needs) and one group at the slowest the bursts saw, two fit points per round at
the slowest the run saw (from its planned start: a stall of the machine's other jobs, a late
wake-up; the round's first point, which its time counts from, and the one that overruns it),
four round trips at the tail (floor + 0.99 quantile) for the reductions, the steps between the
bursts and HCA3 as the run measured them (auto.agree_s: the reductions that agree on the choice,
where a stall of the machine's other jobs is no fault of the budget's: once 21.9 ms of 20 ms
went by a margin without it), and 5% of the budget for what the run does not time apart (the
fits, the messages around the points: measured over TCP, 0.8 ms of 20 ms with no stall seen).
So the sync's time must be at most BUDGET plus that margin.
Where a whole burst of 48 groups at the floor round trip could not fit in the quarter
(768 x floor > BUDGET / 4: a small budget over TCP), the burst must have been cut (fewer than
48 groups), which the uncapped burst was not. It must bite: the sync's time must exceed
--bite-share (1/2) of the budget in some seed (the budget is spent, so a bound of half of it
fails).
"""
import json, math, sys

import checkargs

ap = checkargs.parser("offset=1,skew=100e-6,noise=20e-9", "0")
ap.add_argument("--budget", type=float, required=True)
ap.add_argument("--bite-share", type=float, default=0.5)
a = ap.parse_args()
a.sync = f"auto({a.budget:g}s)"
rounds = math.ceil(math.log2(a.np))
failed, nfail, durations = 0, [0], []
for seed, cmd, p in checkargs.checks(a, nfail):
    run = json.loads(p.stdout)["runs"][0]
    au = run.get("auto")
    if not au:
        print(f"FAIL seed={seed}: no auto report ({' '.join(cmd)})")
        failed += 1
        continue
    t = au["run_s"]
    durations.append(t)
    tail_s = (au["floor_ns"] + au["tail_ns"]) * 1e-9
    margin = (max(0.0, au["burst_s"] - a.budget / 4) + au["slowest_group_s"] +
              2 * rounds * au["slowest_point_s"] + 4 * tail_s + au["agree_s"] +
              0.05 * a.budget)
    line = (f"seed={seed} {au['spec']}: sync {t:.4f} s for a budget of {a.budget:g} s (bursts "
            f"{au['burst_s']:.4f} s, {au['groups']} groups, slowest group "
            f"{au['slowest_group_s'] * 1e3:.2f} ms, agreeing {au['agree_s'] * 1e3:.2f} ms, "
            f"slowest fit point "
            f"{au['slowest_point_s'] * 1e3:.2f} ms, floor {au['floor_ns']:.0f} ns, tail "
            f"{au['tail_ns']:.0f} ns; margin {margin:.4f} s; check's sync_duration_s "
            f"{run['sync_duration_s']:.4f})")
    if t > a.budget + margin:
        print(f"FAIL {line}: beyond budget + margin\n  reproduce: {' '.join(cmd)}")
        failed += 1
        continue
    must_cut = 48 * 16 * au["floor_ns"] * 1e-9 > a.budget / 4 / rounds
    if must_cut and au["groups"] >= 48:
        print(f"FAIL {line}: 768 ping-pongs at the floor take more than the bursts' quarter, "
              f"yet the burst was not cut\n  reproduce: {' '.join(cmd)}")
        failed += 1
        continue
    print(f"ok   {line}{'; the burst had to be cut, and was' if must_cut else ''}")
if durations:
    bites = sum(t > a.bite_share * a.budget for t in durations)
    print(f"{'ok  ' if bites else 'FAIL'} the check bites: {bites} of {len(durations)} seeds "
          f"took more than {a.bite_share} of the budget")
    failed += not bites
sys.exit(1 if failed + nfail[0] else 0)
