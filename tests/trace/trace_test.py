#!/usr/bin/env python3
"""trace_test.py CASE HCLOCK MPIRUN_SH MPIEXEC MINI [LIB] - hclock trace (issue 12) on the mini
application (examples/allreduce_mini.c; for "requests", examples/requests_mini.c). CASE:
  basic     2 ranks: traced output equals untraced output, exit 0; trace.json parses, every
            rank has its 4 x ITER MPI_Allreduce slices and the halo messages as flow arrows
            (2 x ITER per rank, every one paired), the summary names 0 dropped events and
            the drift check; traces.otf2 reads back with otf2-print and hclock align (0
            inversions); hclock gantt --raw draws both panels; the exit code of the program
            passes through (3)
  skew      4 ranks as 2 emulated nodes, 100 ppm skew, 1 s offsets: zero inversions on the
            global clock (Open MPI and MPICH, more ranks than cores); the same run with
            --sync none has inversions (the check bites); --event-truth: the true error of
            every timestamp on the other node, its p99.9 under a ten-thousandth of --sync
            none's median (which is about the 1 s offset: that one bites)
  bad       no program, a program that does not exist, an unwritable -o, a bad --sync or
            --emulate: one line each and a non-zero exit (the program not run); a program that calls MPI_Abort or dies of SIGSEGV: a non-zero
            exit, and hclock trace --convert turns what is on disk into a valid trace.json
  requests  2 ranks, MINI being examples/requests_mini.c (persistent sends and receives,
            nonblocking collectives, matched probes, MPI_Request_free, MPI_Cancel): traced
            output equals untraced output; the summary pairs every message (7 x RITER + 2 per
            rank), 0 unpaired (a cancelled receive recorded, a stale request entry would show
            here), 0 inversions; trace.json has the flow arrows and one async begin/end pair
            per nonblocking collective, each from the start call's enter to the leave of the
            Wait/Test call that completed it, with root and bytes; otf2-print finds every
            MpiSend/MpiRecv, the NonBlockingCollectiveRequest/Complete pairs and the blocking
            collectives, and hclock align reads the archive back
  symbols   LIB exports MPI_ functions only
Prints one line per check; exits 1 if any failed."""
import os
import re
import subprocess
import sys
import tempfile

import tracecheck
from tracecheck import check, check_exits, load, load_checked, summary_num

case, hc, run, mpiexec, mini = sys.argv[1:6]
lib = sys.argv[6] if len(sys.argv) > 6 else None
ITER = 60


def launch(np_, args, timeout=120):
    return tracecheck.launch(run, mpiexec, np_, args, timeout)


tmp = tempfile.mkdtemp(prefix="hclock-trace-test.")
if case == "basic":
    plain = launch(2, [mini, str(ITER), "20"])
    d = os.path.join(tmp, "t")
    traced = launch(2, [hc, "trace", "-o", d, "--emulate", "offset=1,skew=100e-6,seed=3", "--",
                        mini, str(ITER), "20"])
    check_exits(plain, traced)
    check(plain.stdout == traced.stdout and "checksum" in plain.stdout,
          f"traced output equals untraced output ({plain.stdout.strip()!r})")
    ev = load_checked(d)
    for r in (0, 1):
        n = sum(1 for e in ev if e.get("ph") == "X" and e.get("pid") == r and e["name"] == "MPI_Allreduce")
        check(n == 4 * ITER, f"rank {r}: {n} MPI_Allreduce slices (expected {4 * ITER})")
        w = sum(1 for e in ev if e.get("ph") == "X" and e.get("pid") == r and e["name"] == "MPI_Waitall")
        check(w == ITER, f"rank {r}: {w} MPI_Waitall slices (expected {ITER})")
    s = sum(1 for e in ev if e.get("ph") == "s")
    f = sum(1 for e in ev if e.get("ph") == "f")
    check(s == f == 2 * 2 * ITER, f"{s} flow starts, {f} flow ends (expected {4 * ITER} each)")
    bad = [e for e in ev if e.get("ph") == "X" and (e["dur"] < 0 or e["ts"] < 0)]
    check(not bad, f"no slice with a negative time or duration ({len(bad)})")
    err = traced.stderr
    check(summary_num(err, "dropped") == 0 and summary_num(err, "unpaired") == 0 and
          summary_num(err, "inversions") == 0, "summary: 0 dropped, 0 unpaired, 0 inversions")
    check("drift check at MPI_Finalize" in err and "true error" in err, "summary has the drift check")
    if os.path.exists(os.path.join(d, "traces.otf2")):  # built with OTF2 (HCLOCK_ALIGN)
        pr = subprocess.run(["otf2-print", os.path.join(d, "traces.otf2")], capture_output=True,
                            text=True)
        n = pr.stdout.count("MPI_SEND") + pr.stdout.count("MPI_RECV")
        check(pr.returncode == 0 and n == 2 * 2 * 2 * ITER,
              f"otf2-print reads traces.otf2 ({pr.returncode}; {n} MPI_SEND/MPI_RECV records, "
              f"expected {8 * ITER}) {pr.stderr[-300:]}")
        tracecheck.check_align(hc, os.path.join(d, "traces.otf2"), os.path.join(tmp, "aligned"), 2)
    elif "HCLOCK_TRACE_NEED_OTF2" in os.environ:
        check(False, "no traces.otf2 written")
    svg = os.path.join(tmp, "g.svg")
    g = subprocess.run([hc, "gantt", d, "--op", "allreduce", "--raw", "-o", svg],
                       capture_output=True, text=True)
    try:
        import xml.etree.ElementTree as ET
        root = ET.parse(svg).getroot()
        bars = [e for e in root.iter("{http://www.w3.org/2000/svg}rect") if e.get("fill") == "#d62728"]
        ok = g.returncode == 0 and len(bars) >= 2 * 2 * 4
    except Exception as e:  # noqa: BLE001
        ok, bars = False, str(e)
    check(ok, f"hclock gantt --raw writes a well-formed SVG with the allreduce bars of both "
          f"ranks in both panels ({len(bars) if isinstance(bars, list) else bars}) {g.stderr[-200:]}")
    g = subprocess.run([hc, "gantt", d, "-o", svg], capture_output=True, text=True)
    check(g.returncode == 2 and len(g.stderr.strip().splitlines()) == 1,
          f"hclock gantt without --op: one line, exit 2 ({g.returncode}: {g.stderr.strip()})")
    code = launch(2, [hc, "trace", "-o", os.path.join(tmp, "c"), "--", mini, "5", "10", "3"])
    check(code.returncode == 3, f"the program's exit code 3 passes through ({code.returncode})")
elif case == "skew":
    emu = "offset=1,skew=100e-6,noise=20e-9,nodes=2,seed=5"
    res, truth = {}, {}
    for sync in ("default", "none"):
        d = os.path.join(tmp, sync)
        args = [hc, "trace", "-o", d, "--emulate", emu, "--event-truth"] + \
            (["--sync", "none"] if sync == "none" else [])
        p = launch(4, args + ["--", mini, str(ITER), "20"], timeout=240)
        check(p.returncode == 0, f"--sync {sync}: exit {p.returncode} {p.stderr[-600:]}")
        res[sync] = summary_num(p.stderr, "inversions")
        m = re.search(r"true error of (\d+) global readings on the processes off the reference's "
                      r"node \(emulation\): median <= (\d+) ns, p99 <= (\d+) ns, p99.9 <= (\d+) "
                      r"ns, max (\d+) ns", p.stderr)
        check(m is not None and int(m.group(1)) > 0,
              f"--sync {sync} --event-truth: the true error line ({m.group(0) if m else p.stderr[-400:]})")
        truth[sync] = [int(v) for v in m.groups()] if m else None
    if truth["default"] and truth["none"]:
        check(truth["default"][3] * 10000 < truth["none"][1],
              f"true error at the events: p99.9 {truth['default'][3]} ns with the default sync, "
              f"median {truth['none'][1]} ns without (expected under a ten-thousandth)")
    check(res["default"] == 0, f"default sync: {res['default']} inversions (expected 0)")
    check(res["none"] is not None and res["none"] > 0,
          f"--sync none: {res['none']} inversions (expected some: the check bites)")
elif case == "bad":
    p = launch(2, [hc, "trace"])
    lines = [l for l in p.stderr.splitlines() if l.startswith("hclock trace")]
    check(p.returncode != 0 and len(lines) == 1 and "no program" in lines[0],
          f"no program: exit {p.returncode}, {lines}")
    p = launch(2, [hc, "trace", "-o", os.path.join(tmp, "x"), "--", "/nonexistent/prog"])
    lines = [l for l in p.stderr.splitlines() if l.startswith("hclock trace")]
    check(p.returncode != 0 and len(lines) == 1 and "cannot run" in lines[0],
          f"missing program: exit {p.returncode}, {lines}")
    for opt, val in (("--sync", "hca9/1"), ("--emulate", "skew=lots"), ("--event-truth", None)):
        p = launch(2, [hc, "trace", "-o", os.path.join(tmp, "y"), opt] + ([val] if val else []) +
                   ["--", mini, "2"])
        lines = [l for l in p.stderr.splitlines() if l.startswith("hclock trace")]
        check(p.returncode == 2 and len(lines) == 1 and opt in lines[0] and "checksum" not in p.stdout,
              f"bad {opt}: exit {p.returncode}, the program not run, {lines}")
    blocker = os.path.join(tmp, "file")
    open(blocker, "w").close()
    p = launch(2, [hc, "trace", "-o", os.path.join(blocker, "sub"), "--", mini, "2"])
    lines = [l for l in p.stderr.splitlines() if l.startswith("hclock trace")]
    check(p.returncode != 0 and len(lines) == 1 and "cannot write" in lines[0],
          f"unwritable -o: exit {p.returncode}, {lines}")
    for code, what in (("-1", "MPI_Abort"), ("-11", "SIGSEGV")):
        d = os.path.join(tmp, "die" + code)
        p = launch(2, [hc, "trace", "-o", d, "--buffer", "64", "--", mini, "400", "20", code])
        check(p.returncode != 0, f"{what}: non-zero exit ({p.returncode})")
        c = subprocess.run([hc, "trace", "--convert", d], capture_output=True, text=True)
        ok = c.returncode == 0
        try:
            ev = load(d)
            n = sum(1 for e in ev if e.get("ph") == "X")
        except Exception as e:  # noqa: BLE001
            ok, n = False, str(e)
        check(ok and isinstance(n, int) and n > 0,
              f"{what}: --convert writes a valid trace.json from what was on disk ({n} slices; "
              f"{c.stderr.strip()[-300:]})")
elif case == "requests":
    RITER = 20
    plain = launch(2, [mini, str(RITER)])
    d = os.path.join(tmp, "r")
    traced = launch(2, [hc, "trace", "-o", d, "--emulate", "offset=1,skew=100e-6,seed=3", "--",
                        mini, str(RITER)])
    check_exits(plain, traced)
    check(plain.stdout == traced.stdout and "0 wrong values" in plain.stdout and
          "4 receives cancelled" in plain.stdout,
          f"traced output equals untraced output ({plain.stdout.strip()!r})")
    nmsg = 2 * (7 * RITER + 2)
    err = traced.stderr
    check(summary_num(err, "messages paired") == nmsg and summary_num(err, "unpaired") == 0 and
          summary_num(err, "inversions") == 0 and summary_num(err, "dropped") == 0,
          f"summary: {summary_num(err, 'messages paired')} messages paired (expected {nmsg}), "
          f"{summary_num(err, 'unpaired')} unpaired, {summary_num(err, 'inversions')} inversions, "
          f"{summary_num(err, 'dropped')} dropped")
    ev = load_checked(d)
    s = sum(1 for e in ev if e.get("ph") == "s")
    f = sum(1 for e in ev if e.get("ph") == "f")
    check(s == f == nmsg, f"{s} flow starts, {f} flow ends (expected {nmsg} each)")
    # nonblocking collectives: name -> (per rank, root, bytes)
    once = ["MPI_Igather", "MPI_Igatherv", "MPI_Iscatter", "MPI_Iscatterv", "MPI_Iallgather",
            "MPI_Iallgatherv", "MPI_Ialltoall", "MPI_Ialltoallv", "MPI_Ireduce",
            "MPI_Ireduce_scatter", "MPI_Ireduce_scatter_block", "MPI_Iscan", "MPI_Iexscan"]
    want = {n: (1, None, None) for n in once}
    want.update({"MPI_Iallreduce": (RITER, -1, 8), "MPI_Ibcast": (RITER, 0, 16),
                 "MPI_Ibarrier": (RITER, -1, 0), "MPI_Ireduce": (1, 1, 4),
                 "MPI_Iscatterv": (1, 1, 4), "MPI_Ialltoallv": (1, -1, 8)})
    for r in (0, 1):
        mine = [e for e in ev if e.get("pid") == r]
        begins = {e["id"]: e for e in mine if e.get("ph") == "b" and e.get("cat") == "nbc"}
        ends = {e["id"]: e for e in mine if e.get("ph") == "e" and e.get("cat") == "nbc"}
        wrong = []
        for n, (cnt, root, nb) in want.items():
            b = [e for e in begins.values() if e["name"] == n]
            if len(b) != cnt or any(root is not None and (e["args"]["root"], e["args"]["bytes"])
                                    != (root, nb) for e in b):
                wrong.append(f"{n}: {len(b)} {[e['args'] for e in b[:1]]}")
        check(not wrong and len(begins) == len(ends) == 3 * RITER + len(once),
              f"rank {r}: {len(begins)} nonblocking collectives begun, {len(ends)} ended "
              f"(expected {3 * RITER + len(once)}), counts, roots and bytes as called {wrong}")
        # each spans from its start call's enter to the leave of a Wait/Test call
        xs = [e for e in mine if e.get("ph") == "X"]
        starts = {(e["name"], round(e["ts"], 3)) for e in xs}
        leaves = {round(e["ts"] + e["dur"], 3) for e in xs
                  if e["name"].startswith(("MPI_Wait", "MPI_Test"))}
        off = [i for i, b in begins.items()
               if (b["name"], round(b["ts"], 3)) not in starts or i not in ends or
               not any(abs(ends[i]["ts"] - t) < 0.0015 for t in leaves) or
               ends[i]["ts"] < b["ts"]]
        check(not off, f"rank {r}: every nonblocking collective begins at its call's enter and "
              f"ends at a Wait/Test call's leave ({len(off)} do not)")
        # (expected slices, bytes of a collective's record)
        for n, (k, nb) in (("MPI_Mrecv", (RITER, None)), ("MPI_Imrecv", (RITER, None)),
                           ("MPI_Alltoallv", (1, 8)), ("MPI_Reduce_scatter", (1, 4))):
            got = [e for e in xs if e["name"] == n]
            check(len(got) == k and (nb is None or got[0].get("args", {}).get("bytes") == nb),
                  f"rank {r}: {len(got)} {n} slices (expected {k}"
                  f"{'' if nb is None else f', {nb} bytes'})")
    otf2 = os.path.join(d, "traces.otf2")
    if os.path.exists(otf2):
        pr = subprocess.run(["otf2-print", otf2], capture_output=True, text=True)
        cnt = {}
        for line in pr.stdout.splitlines():
            w = line.split(None, 1)
            if w:
                cnt[w[0]] = cnt.get(w[0], 0) + 1
        nnb, ncoll = 2 * (3 * RITER + len(once)), 2 * (RITER + 6)
        got = (cnt.get("MPI_SEND"), cnt.get("MPI_RECV"), cnt.get("NON_BLOCKING_COLLECTIVE_REQUEST"),
               cnt.get("NON_BLOCKING_COLLECTIVE_COMPLETE"), cnt.get("MPI_COLLECTIVE_BEGIN"),
               cnt.get("MPI_COLLECTIVE_END"))
        check(pr.returncode == 0 and got == (nmsg, nmsg, nnb, nnb, ncoll, ncoll),
              f"otf2-print reads traces.otf2 ({pr.returncode}): MpiSend, MpiRecv, nonblocking "
              f"collective requests, completions, blocking collective begins, ends {got} "
              f"(expected {(nmsg, nmsg, nnb, nnb, ncoll, ncoll)}) {pr.stderr[-300:]}")
        tracecheck.check_align(hc, otf2, os.path.join(tmp, "aligned"), 2)
    elif "HCLOCK_TRACE_NEED_OTF2" in os.environ:
        check(False, "no traces.otf2 written")
elif case == "symbols":
    out = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True).stdout
    syms = [l.split()[-1] for l in out.splitlines() if l.strip()]
    stray = [s for s in syms if not s.startswith("MPI_")]
    check(len(syms) > 100 and not stray, f"{len(syms)} exported symbols, not MPI_: {stray[:10]}")
else:
    sys.exit(f"trace_test.py: unknown case {case}")
sys.exit(1 if tracecheck.failed else 0)
