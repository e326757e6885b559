#!/usr/bin/env python3
"""check_drift.py HCLOCK MPIRUN MPIEXEC - hclock drift under emulated clocks with known truth.

1. --sync none, linear clocks (100 ppm skew, 3 ranks, 3 s): every rank's fitted slope is the
   negative of the slope of its true error (the measured offset is rank 0 minus the rank) within
   0.5 ppm plus what the probes' round trips allow (each probe the line rests on is off by at
   most half its round trip: on a busy machine they are slow), and the residual stays within a
   few round trips (linear drift seen as linear);
2. the same with a 20 ppm frequency step at 1.5 s: the residual must exceed 2 us (the
   non-linearity is seen: the check bites);
3. a hull-learned sync: every probe carries bounds, the truth inside them;
4. the SVG is well-formed XML with one polyline per rank and panel; bad input: one line, exit 2.
"""
import json, subprocess, sys, tempfile, os
import xml.etree.ElementTree as ET

hc, mpirun, mpiexec = sys.argv[1:4]
failed = 0


def drift(np, extra, emu):
    cmd = [mpirun, mpiexec, str(np), hc, "drift", "--duration", "3", "--interval", "0.25",
           "--pingpongs", "10", "--format", "json", "--emulate", emu] + extra
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode:
        print(f"FAIL exit {p.returncode}: {' '.join(cmd)}\n{p.stderr[-2000:]}")
        return None, cmd
    return json.loads(p.stdout), cmd


def slope(ts, ys):
    n = len(ts)
    mt, my = sum(ts) / n, sum(ys) / n
    return sum((t - mt) * (y - my) for t, y in zip(ts, ys)) / sum((t - mt) ** 2 for t in ts)


def allowed_slope(ts, rtts, noise_ns=20, late_ns=0.0):
    """The most a least-squares slope through the probes hclock drift fits (those whose round
    trip is not a stall against the fastest: numerics/stall.h, 3x + 2 us) can be tilted by
    probe errors of half their round trips plus 8 noise sigmas: sum |t - mean| e / sum (t -
    mean)^2, dimensionless. late_ns: how far the truth may have moved between a probe's exchange
    (t_s) and the truth's read after the measurement (a busy machine makes measurements long)."""
    f = min(rtts)
    kept = [(t, r) for t, r in zip(ts, rtts) if f <= 0 or r <= 3 * f + 2000]
    if len(kept) < 2:
        kept = list(zip(ts, rtts))
    mt = sum(t for t, _ in kept) / len(kept)
    den = sum((t - mt) ** 2 for t, _ in kept)
    return sum(abs(t - mt) * (r / 2 + 8 * noise_ns + late_ns) for t, r in kept) / den * 1e-9


for seed in (1, 2):
    emu = f"offset=1,skew=100e-6,noise=20e-9,seed={seed}"
    doc, cmd = drift(3, ["--sync", "none"], emu)
    if doc is None:
        failed += 1
        continue
    for r in doc["ranks"][1:]:
        ts = [s["t_s"] for s in r["samples"]]
        true_slope = slope(ts, [s["true_error_ns"] for s in r["samples"]]) * 1e-9
        rtt = max(s["rtt_ns"] for s in r["samples"])
        # the truth is read after the measurement, t_s is its exchange's: up to the probes'
        # lateness against their due times apart (milliseconds quiet, 50 ms busy), at the
        # true rate
        late = max(0.0, max(t - i * doc["interval_s"] for i, t in enumerate(ts)))
        allow = 0.5e-6 + allowed_slope(ts, [s["rtt_ns"] for s in r["samples"]],
                                       late_ns=abs(true_slope) * late * 1e9)
        ok = abs(r["slope"] + true_slope) < allow and r["residual_max_ns"] < 4 * rtt + 500
        print(f"{'ok  ' if ok else 'FAIL'} seed={seed} rank={r['rank']} slope={r['slope'] * 1e6:.3f} ppm "
              f"true={-true_slope * 1e6:.3f} ppm (allowed {allow * 1e6:.3f}) "
              f"residual_max={r['residual_max_ns']:.0f} ns (rtt max {rtt:.0f} ns)")
        failed += not ok
    doc, cmd = drift(2, ["--sync", "none"], emu + ",fstep=20e-6@1.5")
    if doc is None:
        failed += 1
    else:
        res = doc["ranks"][1]["residual_max_ns"]
        ok = res > 2000
        print(f"{'ok  ' if ok else 'FAIL'} seed={seed} frequency step: residual_max={res:.0f} ns "
              f"(must exceed 2000)")
        failed += not ok

doc, cmd = drift(2, ["--sync", "hca3/20/hull/10/span=0.2"], "offset=1,skew=100e-6,noise=20e-9,seed=3")
if doc is None:
    failed += 1
else:
    s = doc["ranks"][1]["samples"]
    inside = [x["bound_lo_ns"] is not None and x["bound_lo_ns"] <= -x["true_error_ns"] <= x["bound_hi_ns"]
              for x in s]
    ok = all(inside)
    print(f"{'ok  ' if ok else 'FAIL'} hull sync: truth inside the bounds at {sum(inside)}/{len(s)} probes")
    failed += not ok

with tempfile.TemporaryDirectory() as d:
    svg = os.path.join(d, "drift.svg")
    doc, cmd = drift(3, ["--sync", "none", "--plot", svg], "offset=1,skew=100e-6,seed=4")
    try:
        root = ET.parse(svg).getroot()
        lines = [e for e in root.iter() if e.tag.endswith("polyline")]
        ok = len(lines) == 4
        print(f"{'ok  ' if ok else 'FAIL'} svg: {len(lines)} polylines (2 ranks x 2 panels)")
    except Exception as e:
        ok = False
        print(f"FAIL svg: {e}")
    failed += not ok
    for args, what in ((["--interval", "0"], "--interval"), (["--duration", "x"], "--duration"),
                       (["--plot", os.path.join(d, "no", "such", "dir.svg"), "--duration", "0.01",
                         "--sync", "none"], "cannot write")):
        p = subprocess.run([mpirun, mpiexec, "2", hc, "drift"] + args, capture_output=True, text=True)
        lines = [l for l in p.stderr.splitlines() if l.startswith("hclock drift:")]
        ok = p.returncode != 0 and len(lines) == 1 and what in lines[0]
        print(f"{'ok  ' if ok else 'FAIL'} bad input {args}: exit {p.returncode}, {lines}")
        failed += not ok
sys.exit(1 if failed else 0)
