#!/usr/bin/env python3
"""waits_raw_test.py HCLOCK - the wait-state pass of `hclock trace --convert` on raw files
written here, whose every timestamp and bound is known (no MPI run).

Two processes (util/record.h's format): rank 0 enters MPI_Recv at 1000 us, rank 1 starts the
send at 1200 us (a Late Sender of 200 us); both enter MPI_Barrier, rank 0 at 2000 us and rank 1
at 2500 us (a Wait at Barrier of 500 us); rank 0 calls MPI_Ssend at 3000 us and rank 1 posts its
MPI_Recv at 3100 us (a Late Receiver of 100 us); an MPI_Bcast whose root 1 enters 50 us after
rank 0 (a Late Broadcast of 50 us). Every call's bounds are +-2 us (REC_F_HW), so each interval
is the waiting time +-4 us and proven, and each is a slice on rank 0's track "wait states" in
trace.pftrace. Then the same files without bounds: the same estimates,
none proven, no upper end. Then a file cut after the send (no trailer, no receive): the pair
and the collectives after it are left, counted.
Prints one line per check; exits 1 if any failed."""
import json
import math
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rawfile  # noqa: E402 - the records written by hand
import tracecheck  # noqa: E402 - load_pftrace

hc = sys.argv[1]
failures = 0
US = 1000
FUNCS = ["MPI_Recv", "MPI_Send", "MPI_Barrier", "MPI_Ssend", "MPI_Bcast"]
R = rawfile.Raw(FUNCS)
call, coll, msg = R.call, R.coll, R.msg
CALL, SEND, RECV, COLL = rawfile.CALL, rawfile.SEND, rawfile.RECV, rawfile.COLL


def check(ok, what):
    global failures
    print(("ok   " if ok else "FAIL ") + what)
    failures += not ok
    return ok


def write(d, hw, cut=False):
    os.makedirs(os.path.join(d, "raw"), exist_ok=True)
    # as the tracer writes them: a send's record before its call's, a receive's after
    r0 = [call("MPI_Recv", 1000 * US, 1300 * US, hw), msg(RECV, "MPI_Recv", 1300 * US, 1),
          coll("MPI_Barrier", 2000 * US, 2510 * US, hw),
          msg(SEND, "MPI_Ssend", 3000 * US, 1), call("MPI_Ssend", 3000 * US, 3110 * US, hw),
          coll("MPI_Bcast", 4000 * US, 4060 * US, hw, root=1)]
    r1 = [msg(SEND, "MPI_Send", 1200 * US, 0), call("MPI_Send", 1200 * US, 1210 * US, hw),
          coll("MPI_Barrier", 2500 * US, 2510 * US, hw),
          call("MPI_Recv", 3100 * US, 3110 * US, hw), msg(RECV, "MPI_Recv", 3110 * US, 0),
          coll("MPI_Bcast", 4050 * US, 4055 * US, hw, root=1)]
    if cut:
        r1 = r1[:2]
    for rank, recs in ((0, r0), (1, r1)):
        with open(os.path.join(d, "raw", "rank.%d" % rank), "wb") as f:
            f.write(R.file(rank, 2, recs, trailer=not (cut and rank == 1)))


def convert(d):
    p = subprocess.run([hc, "trace", "--convert", d], capture_output=True, text=True)
    if not check(p.returncode == 0, "hclock trace --convert exits 0 (%d)" % p.returncode):
        print(p.stderr)
        return None
    for name in ("comm_matrix.svg", "wait_states.svg"):
        try:
            ok = ET.parse(os.path.join(d, name)).getroot().tag.endswith("svg")
        except (OSError, ET.ParseError):
            ok = False
        check(ok, f"--convert wrote {name}, an SVG that parses")
    with open(os.path.join(d, "profile.json")) as f:
        return json.load(f)["wait_states"]


EXPECT = {"late_sender": (0, 1, 200), "wait_barrier": (0, 1, 500),
          "late_receiver": (0, 1, 100), "late_broadcast": (0, 1, 50)}

with tempfile.TemporaryDirectory() as tmp:
    hw = 2000
    wide = rawfile.hw_ns(rawfile.hw_code(hw))  # the half-width as the 8-bit code stores it
    d = os.path.join(tmp, "bounded")
    write(d, hw)
    ws = convert(d)
    if ws:
        pats = {p["pattern"]: p for p in ws["patterns"]}
        for name, (rank, peer, wait_us) in EXPECT.items():
            p = pats.get(name, {})
            inst = [w for w in ws["worst"] if w["pattern"] == name]
            check(p.get("instances") == 1 and p.get("proven") == 1 and
                  p.get("time_ns") == wait_us * US,
                  "%s: 1 instance, proven, %s ns (%s)" % (name, wait_us * US, p))
            if check(len(inst) == 1, "%s among the worst" % name):
                w = inst[0]
                check(w["rank"] == rank and w["peer"] == peer and
                      w["lo_ns"] == wait_us * US - 2 * wide and
                      w["hi_ns"] == wait_us * US + 2 * wide,
                      "%s: rank %d waited for %d, [%d, %d] ns = %d us +- 2 x %d ns" %
                      (name, w["rank"], w["peer"], w["lo_ns"], w["hi_ns"], wait_us, wide))
        others = [p for p in ws["patterns"] if p["pattern"] not in EXPECT and p["instances"]]
        check(not others, "no other instances: %s" % others)
        check(ws["messages"] == 2 and ws["collectives"] == 2 and ws["unpaired_sends"] == 0,
              "2 messages, 2 collectives analysed, none left (%s)" %
              {k: ws[k] for k in ("messages", "collectives", "unpaired_sends")})
        with open(os.path.join(d, "profile.txt")) as f:
            txt = f.read()
        check("# wait states" in txt and "late_sender" in txt, "profile.txt has the table")
        # the timeline: a slice per instance on rank 0's track "wait states"
        probs = tracecheck.load_pftrace(d)[0]
        marks = tracecheck.wait_marks
        check(not probs, "trace.pftrace imports cleanly: %s" % probs[:3])
        titles = [p["title"] for p in ws["patterns"] if p["pattern"] in EXPECT]
        check(marks == {(1, t): 1 for t in titles},
              "trace.pftrace: one slice per instance on rank 0's track 'wait states' (%s)" %
              marks)

    d = os.path.join(tmp, "unbounded")
    write(d, None)
    ws = convert(d)
    if ws:
        pats = {p["pattern"]: p for p in ws["patterns"]}
        check(all(pats[n]["instances"] == 1 and pats[n]["proven"] == 0 and
                  pats[n]["upper_ns"] is None and pats[n]["time_ns"] == w * US
                  for n, (_, _, w) in EXPECT.items()),
              "without bounds: the same estimates, none proven, no upper end")
        check(ws["calls_without_bounds"] == ws["calls"] > 0,
              "every call counted without bounds (%d of %d)" % (ws["calls_without_bounds"],
                                                                ws["calls"]))

    d = os.path.join(tmp, "cut")
    write(d, hw, cut=True)
    ws = convert(d)
    if ws:
        keys = ("messages", "unpaired_sends", "unpaired_receives", "incomplete_collectives")
        check([ws[k] for k in keys] == [1, 1, 0, 2],
              "rank 1 cut after its first send: that message paired, rank 0's Ssend and its "
              "two collectives left: %s" % {k: ws[k] for k in keys})
sys.exit(1 if failures else 0)
