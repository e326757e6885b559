#!/usr/bin/env python3
"""fault_tools.py HCLOCK MPIRUN_SH MPIEXEC - the MPI tools under injected faults and
mismatched launches: one rank fails (HCLOCK_FAULT) in each position at each point,
or the ranks get different options (an MPMD launch, a per-rank environment variable). Every
rank must exit, all with the same code (non-zero where the fault fires), the tool must print
exactly one line, and nothing may hang (mpirun.sh's timeout)."""
import os
import re
import subprocess
import sys

hclock, mpirun, mpiexec = sys.argv[1:4]
here = os.path.dirname(os.path.abspath(__file__))
wrap = ["sh", os.path.join(here, "rank_exit.sh")]
NP = 3
EMU = "offset=1e-3,skew=1e-4,nodes=3,seed=2"
SYNC = "h2(hca3/3/skampi/2,prop)"
TOOLS = {
    "check": ["check", "--sync", SYNC, "--wait", "0", "--emulate", EMU, "--pingpongs", "3"],
    "bench": ["bench", "--sync", SYNC, "--emulate", EMU, "--op", "allreduce", "--sizes", "8",
              "--scheme", "roundtime", "--time-slice", "0.05"],
    "imbalance": ["imbalance", "--sync", SYNC, "--emulate", EMU, "--reps", "20"],
}
failures = 0


def run(args, env_timeout=90):
    env = dict(os.environ, HCLOCK_TEST_TIMEOUT=str(env_timeout))
    p = subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                       env=env)
    return p.returncode, p.stderr


def judge(what, rc, err, must_fail, expect_code=None):
    global failures
    codes = {}
    for m in re.finditer(r"^rank-exit (\S+) (\d+)$", err, re.M):
        codes[m.group(1)] = int(m.group(2))
    # the one error line (a warning of the sync's, e.g. about a busy machine, may come before a
    # later failure)
    lines = [l for l in err.splitlines() if l.startswith("hclock") and ": warning: " not in l]
    problems = []
    if rc >= 124:
        problems.append(f"launcher exit {rc} (timeout: a rank hung)")
    if len(codes) != NP:
        problems.append(f"{len(codes)} of {NP} ranks reported an exit code")
    if len(set(codes.values())) > 1:
        problems.append(f"ranks exited with different codes {codes}")
    code = next(iter(codes.values()), None)
    if must_fail and not code:
        problems.append("exit code 0 although the fault fired or the launch was mismatched")
    if expect_code is not None and code != expect_code:
        problems.append(f"exit code {code}, expected {expect_code}")
    if code and len(lines) != 1:
        problems.append(f"{len(lines)} hclock lines: {lines}")
    if problems:
        failures += 1
        print(f"FAIL: {what}: " + "; ".join(problems))
        print("  " + "\n  ".join(err.splitlines()[:8]))
    else:
        print(f"ok: {what}: every rank exit {code}" + (f": {lines[0]}" if lines else ""))


for tool, args in TOOLS.items():
    points = [("alloc", 1), ("exchange", 1), ("fit", 1), ("agree", 1)]
    if tool != "check":
        points = [("exchange", 1), ("agree", 1)]
    for at, k in points:
        for victim in range(NP):
            fault = f"rank={victim},at={at},k={k}"
            rc, err = run([mpirun, mpiexec, str(NP)] + wrap + [fault, ""] + [hclock] + args)
            # the reference (rank 0) never fits a model and is never a measured process
            must = not (at == "fit" and victim == 0)
            judge(f"{tool} HCLOCK_FAULT={fault}", rc, err, must)
    # MPMD: rank 0 with other options than ranks 1 and 2
    other = [a if a != SYNC else "h2(jk/3/skampi/2,prop)" for a in args]
    rc, err = run([mpirun, mpiexec, "1"] + wrap + ["", "", hclock] + args +
                  [":", "-n", str(NP - 1)] + wrap + ["", "", hclock] + other)
    judge(f"{tool} MPMD with different --sync", rc, err, True, 2)
    # a per-rank environment variable
    rc, err = run([mpirun, mpiexec, str(NP)] + wrap + ["", "1:HCLOCK_EMULATE=skew=1e-6"] +
                  [hclock] + [a for a in args if a not in ("--emulate", EMU)])
    judge(f"{tool} HCLOCK_EMULATE on rank 1 only", rc, err, True, 2)

print(f"fault_tools: {failures} failed")
sys.exit(1 if failures else 0)
