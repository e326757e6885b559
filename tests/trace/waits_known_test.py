#!/usr/bin/env python3
"""waits_known_test.py HCLOCK RUN MPIEXEC WAITS_MINI [FC F90] - the wait-state analysis's known
answers: examples/waits_mini.c (and its Fortran twin examples/waits_mini.f90, built here with
the MPI's Fortran wrapper FC) make every pattern wait D = 40 ms on purpose, 2 rounds, on 4 ranks
as 2 emulated nodes (1 s offsets, 100 ppm skews), traced with --event-truth: the tracer writes
the truth of every timestamp beside the raw files, and the analysis computes every instance's
true waiting time from it the same way it computes the interval from the bounds. Checked, for
seeds 1-3 (C) and 1 (Fortran):
  - every instance's true waiting time lies inside its reported interval (truth.outside 0,
    over every process's truth: truth.processes 4);
  - each pattern has at least half its injected instances (waits_mini's count), each with the
    truth; proven ones are exactly those whose lower end is above 0 (the worst list);
  - the injected waits: each pattern's true total is at least half of its late parts times
    D (a waiting process preempted for D/2 in every one would be needed to miss it), and lies
    inside the totals' [proven, upper] (how much is proven depends on the clock's bounds: a
    process starved beside busy ones may have none for a while; printed);
  - Perfetto: one mark on the "wait states" tracks per instance of 1 us or more (as many as
    the profile's `marked`, the injected ones among them);
  - the check bites: rank 1's timestamps moved past their bounds (HCLOCK_FAULT at=shift)
    give instances whose truth lies outside their interval.
Exits 1 if any check failed (files kept), 77 when the program is not there."""
import json
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tracecheck  # noqa: E402
from tracecheck import check  # noqa: E402

hc, run, mpiexec, mini = sys.argv[1:5]
fc, f90 = (sys.argv[5], sys.argv[6]) if len(sys.argv) > 6 else (None, None)
D_MS, ROUNDS, NP = 40, 2, 4
EMU = "offset=1,skew=100e-6,ranks-per-node=2,seed={}"


def profile(d):
    try:
        with open(os.path.join(d, "profile.json")) as f:
            return json.load(f).get("wait_states")
    except (OSError, ValueError):
        return None


def known(d, what):
    ws = profile(d)
    check(ws is not None and "truth" in ws, f"{what}: profile.json has wait_states with truth")
    if not ws or "truth" not in ws:
        return
    t = ws["truth"]
    check(t["processes"] == NP and t["unreadable"] == 0 and t["instances"] > 0 and
          t["outside"] == 0,
          f"{what}: every instance's true waiting time inside its interval: {t['instances']} "
          f"instances with the truth of {t['processes']} processes, {t['outside']} outside "
          f"{t['first_outside'][:3]}")
    tracecheck.waits_injected(ws, D_MS, ROUNDS, what)
    bad = [w for w in ws["worst"] if w["proven"] != (w["lo_ns"] > 0) or
           not (w["lo_ns"] <= w.get("true_hi_ns", -1) and
                (w["hi_ns"] is None or w.get("true_lo_ns", 1 << 62) <= w["hi_ns"]))]
    check(ws["worst"] and not bad, f"{what}: the worst instances proven exactly when lo > 0, "
          f"each with its truth inside ({bad[:2]})")
    # the plots: every pair that sent (0->1, 1->0, 2->0, 3->2) a cell of the matrix, and the
    # waiting per process drawn
    svgs = {}
    for name in ("comm_matrix.svg", "wait_states.svg"):
        try:
            svgs[name] = ET.parse(os.path.join(d, name)).getroot()
        except (OSError, ET.ParseError) as e:
            check(False, f"{what}: {name} parses ({e})")
    if "comm_matrix.svg" in svgs:
        titles = [t.text or "" for t in svgs["comm_matrix.svg"].iter("{http://www.w3.org/2000/svg}title")]
        pairs = {(int(a), int(b)) for a, b in
                 (re.match(r"\D*(\d+)\D+(\d+)", t).groups() for t in titles
                  if re.match(r"\D*\d+\D+\d+.*message", t))}
        check({(1, 0), (0, 1), (2, 0), (3, 2)} <= pairs,
              f"{what}: comm_matrix.svg has a cell for each pair that sent ({sorted(pairs)})")
    if os.path.exists(os.path.join(d, "trace.pftrace")):
        tracecheck.load_pftrace(d)
        marks = sum(tracecheck.wait_marks.values())
        total = sum(p["instances"] for p in ws["patterns"])
        inj = sum(tracecheck.WAITS_MINI_INJECTED.values()) * ROUNDS
        check(marks == ws["marked"] and inj <= marks <= total,
              f"{what}: {marks} marks on the wait-state tracks, as many as the profile says "
              f"({ws['marked']}: the instances of 1 us or more, of {total}), the {inj} "
              f"injected among them")


def traced(prog, d, seed, what, env=None):
    p = tracecheck.launch(run, mpiexec, NP, [hc, "trace", "-o", d, "--emulate", EMU.format(seed),
                                             "--event-truth", "--"] + prog, 180, env=env)
    check(p.returncode == 0 and "waits_mini: " in p.stdout,
          f"{what}: traced run, exit {p.returncode} {p.stdout.strip()[-200:]}"
          + ("" if p.returncode == 0 else p.stderr[-400:]))
    return p


if not os.access(mini, os.X_OK):
    print(f"skip: {mini} not built")
    sys.exit(77)
tmp = tempfile.mkdtemp(prefix="hclock-waits-known.")
prog = [mini, str(D_MS), str(ROUNDS)]
for seed in (1, 2, 3):
    d = os.path.join(tmp, f"c{seed}")
    traced(prog, d, seed, f"C seed {seed}")
    known(d, f"C seed {seed}")

# the check bites: rank 1's timestamps past their bounds
d = os.path.join(tmp, "shift")
traced(prog, d, 1, "shifted", {"HCLOCK_FAULT": "rank=1,at=shift"})
ws = profile(d)
t = (ws or {}).get("truth", {})
check(t.get("outside", 0) > 0, f"the check bites: rank 1's timestamps moved past their bounds, "
      f"{t.get('outside')} of {t.get('instances')} instances with their truth outside")

if fc and f90:
    exe = os.path.join(tmp, "waits_mini_f")
    cc = subprocess.run([fc, "-O1", "-o", exe, f90], capture_output=True, text=True)
    check(cc.returncode == 0, f"{fc} builds {f90} ({cc.stderr.strip()[-300:]})")
    if cc.returncode == 0:
        d = os.path.join(tmp, "f1")
        traced([exe, str(D_MS), str(ROUNDS)], d, 1, "Fortran seed 1")
        known(d, "Fortran seed 1")
tracecheck.finish(tmp)
