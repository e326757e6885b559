#!/usr/bin/env python3
"""check_cont_stall.py - the continuous clock through stalls (tests/mpi/test_cont_stall.c).

    check_cont_stall.py PROG MPIRUN MPIEXEC --np N --spec SPEC --stall ITEMS [--seeds 1,2,3]
        [--seconds S] [--shrink F] [--expect fail]

Per seed: under emulated clocks of known truth (100 ppm skew, 1 us jitter, 0.2 ppm wander, a
3.8 ppm frequency step 3 s after the epoch; 4 ranks as 2 emulated nodes), HCLOCK_FAULT=
rank=all,at=stall,ITEMS,seed=SEED (e.g. ms=10-100,share=0.2,on=child: a fifth of the
exchanges' pongs taken 10-100 ms late on the child's side) while PROG reads the continuous
clock about every millisecond on every rank for S seconds. Asserted on every rank: bounds at
every read, the truth inside them at every read, and no step of the true error between two
consecutive reads above the larger of the bound's half-widths at the two reads (news
narrows the bound and corrects the estimate within the bound it had) plus what a slew may move
the clock between them (500 ppm, the default: a read delayed by a busy machine sees a
correction slewed in meanwhile, not a jump; "between them" is the longest the two samples can
lie apart, timed before the first and after the second, since a busy machine can preempt a
read between its sample and a timestamp taken beside it); and some stall was made
(else the case proves nothing). --shrink F narrows every bound to F of its width about its
middle; with --expect fail every seed must then show the truth outside or a step above the
half-width (the check bites). A failure prints the seed and the command that reproduces it.

The frequency step must come after the one-shot sync, whose bounds assume constant rates (a
rate change inside the sync can leave no bounds, or a line whose bound misses the truth). On a
busy machine that sync can take 5-20 s instead of 0.3 s; a seed that failed with its sync ended
after the step (sync_s) runs again with the step at 1.5 x that time + 1 s, its reads going on
until AFTER_S past the step, up to 2 times; a seed whose premise never held is said and not
counted. The next seeds start with the step where the last rerun put it (the machine that
slowed one seed's sync slows the next's: their first launch would be spent on a foregone
rerun).
"""
import math
import argparse, os, re, subprocess, sys

ap = argparse.ArgumentParser()
ap.add_argument("prog")
ap.add_argument("mpirun")
ap.add_argument("mpiexec")
ap.add_argument("--np", type=int, required=True)
ap.add_argument("--spec", required=True)
ap.add_argument("--stall", required=True)
ap.add_argument("--seeds", default="1,2,3")
ap.add_argument("--seconds", type=float, default=5)
ap.add_argument("--shrink", type=float, default=1)
ap.add_argument("--expect", choices=["pass", "fail"], default="pass")
a = ap.parse_args()

KEYS = ("rank node probes nobound outside max_err_ns max_step_ns step_half_ns step_dt_ms "
        "worst_ratio worst_step_ns worst_half_ns worst_dt_ms over "
        "min_half_ns max_half_ns stale exchanges timeouts stalls_child stalls_parent "
        "sync_s").split()
STEP_S = 3
AFTER_S = 3  # a moved step: reads until this long after it (the first launch reads 2.3 s past)


failed = 0


def run_once(seed, step):
    """One launch, judged and printed; returns when its sync ended (s after the epoch) if it
    failed with the frequency step inside the sync (to run again), else None"""
    global failed
    emu = (f"offset=1,skew=100e-6,noise=20e-9,jitter=1e-6,wander=2e-7@20,fstep=3.8e-6@{step},"
           f"seed={seed}" + (",nodes=2" if a.np > 2 else ""))
    fault = f"rank=all,at=stall,{a.stall},seed={seed}"
    cmd = [a.mpirun, a.mpiexec, str(a.np), a.prog, a.spec, emu, f"{a.seconds:g}", f"{a.shrink:g}"]
    if step > STEP_S:
        cmd.append(f"{step + AFTER_S:g}")
    show = f"HCLOCK_FAULT={fault} " + " ".join(f"'{c}'" if "(" in c else c for c in cmd)
    p = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, HCLOCK_FAULT=fault))
    ranks = []
    for line in p.stdout.splitlines():
        m = re.match(r"test_cont_stall: (.*)", line)
        if m:
            f = m.group(1).split()
            ranks.append({k: float(v) for k, v in zip(f[0::2], f[1::2])})
    if p.returncode or len(ranks) != a.np or any(set(KEYS) - set(r) for r in ranks):
        print(f"FAIL seed={seed}: exit {p.returncode}, {len(ranks)} of {a.np} ranks reported: "
              f"{show}\n{p.stdout[-1500:]}{p.stderr[-1500:]}")
        failed += 1
        return None
    problems = []
    for r in ranks:
        tag = f"rank {r['rank']:.0f}"
        if r["nobound"]:
            problems.append(f"{tag}: no bounds at {r['nobound']:.0f} of {r['probes']:.0f} reads")
        if r["outside"]:
            problems.append(f"{tag}: the truth outside the bounds at {r['outside']:.0f} of "
                            f"{r['probes']:.0f} reads")
        if r["over"]:
            problems.append(f"{tag}: {r['over']:.0f} steps of the error above the half-width "
                            f"(the worst {r['worst_step_ns']:.0f} ns over at most "
                            f"{r['worst_dt_ms']:.1f} ms, {r['worst_ratio']:.2f} x the larger "
                            f"half-width of its reads, {r['worst_half_ns']:.0f} ns, plus the "
                            f"slew's 500 ppm between)")
    stalls = sum(r["stalls_child"] + r["stalls_parent"] for r in ranks)
    learners = [r for r in ranks if r["exchanges"] + r["timeouts"] > 0]
    line = (f"seed={seed} np={a.np}: {stalls:.0f} stalls; "
            + "; ".join(f"rank {r['rank']:.0f}: {r['exchanges']:.0f} exchanges "
                        f"({r['timeouts']:.0f} cut), max error {r['max_err_ns']:.0f} ns, "
                        f"largest step {r['max_step_ns']:.0f} ns over {r['step_dt_ms']:.1f} ms "
                        f"(half-width there {r['step_half_ns']:.0f} ns), step/allowance at most "
                        f"{r['worst_ratio']:.2f}, half-width {r['min_half_ns']:.0f}-"
                        f"{r['max_half_ns']:.0f} ns" for r in learners))
    if a.expect == "fail":
        if problems:
            print(f"ok   (must fail, did) {line}\n  " + "\n  ".join(problems[:3]))
        else:
            print(f"FAIL seed={seed}: bounds shrunk to {a.shrink:g} and still nothing found: "
                  f"{line}\n  {show}")
            failed += 1
        return None
    if not stalls:
        problems.append("no stall was made: the case proves nothing")
    sync_s = max(r["sync_s"] for r in ranks)
    if problems and sync_s > step and stalls:
        print(f"     {line}\n  " + "\n  ".join(problems))
        return sync_s
    if problems:
        print(f"FAIL {line}\n  " + "\n  ".join(problems) + f"\n  {show}")
        failed += 1
    else:
        print(f"ok   {line}")
    return None


start = STEP_S
for seed in a.seeds.split(","):
    step = start
    for attempt in range(3):
        sync_s = run_once(seed, step)
        if sync_s is None:
            break
        if attempt == 2:
            print(f"skip seed={seed}: the sync ended after the frequency step in 3 runs (a busy "
                  f"machine): not counted")
            break
        new = math.ceil(1.5 * sync_s) + 1
        print(f"again seed={seed}: the one-shot sync ended {sync_s:.1f} s after the epoch, after "
              f"the frequency step at {step} s (its bounds assume constant rates); again with "
              f"the step at {new} s")
        step = start = new
sys.exit(1 if failed else 0)
