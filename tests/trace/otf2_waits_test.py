#!/usr/bin/env python3
"""otf2_waits_test.py GEN HCLOCK - hclock waits on an OTF2 archive written by otf2_waits_gen
(tests/trace/otf2_waits_gen.c: three processes, every wait state known to the us, times at 10
MHz after a global offset of 1e17 ticks; no MPI run). Checked, exactly:
  - each pattern's instances and waiting time: Late Sender 2 (a blocking receive, and an
    MPI_Irecv completed in MPI_Wait as Score-P writes it) 1100 us, Wait at Barrier 2 700 us,
    Late Broadcast 1 500 us (on a communicator whose rank 0 is world rank 2: its root), Wait at
    N x N 2 900 us (an MPI_Iallreduce completed in MPI_Wait), the others none; nothing proven
    (no bounds); 2 messages, 3 collectives, 16 MPI calls (a user function and a second thread
    not among them);
  - who waited for whom: the broadcast's waiter rank 0 and its peer the root, world rank 2; the
    nonblocking receive's waiter rank 2 in MPI_Wait;
  - the check bites: with the barrier on a communicator the archive does not define
    (otf2_waits_gen --unknown-comm) no Wait at Barrier is found and 3 collectives are counted
    as of unknown size, the rest unchanged.
Exits 1 if any check failed."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

gen, hc = sys.argv[1:3]
failed = 0


def check(ok, what):
    global failed
    print(("ok   " if ok else "FAIL ") + what)
    failed += not ok


def analysed(tmp, name, *gen_args):
    d = os.path.join(tmp, name)
    g = subprocess.run([gen, d] + list(gen_args), capture_output=True, text=True)
    check(g.returncode == 0, f"{name}: otf2_waits_gen {' '.join(gen_args)} ({g.stderr.strip()})")
    p = subprocess.run([hc, "waits", d, "--json"], capture_output=True, text=True)
    try:
        ws = json.loads(p.stdout)
    except ValueError:
        ws = None
    check(p.returncode == 0 and ws is not None, f"{name}: hclock waits {d} --json: exit "
          f"{p.returncode} {p.stderr.strip()[-300:]}")
    return ws


def totals(ws):
    return {p["pattern"]: (p["instances"], p["time_ns"], p["proven"]) for p in ws["patterns"]}


US = 1000
WANT = {"late_sender": (2, 1100 * US, 0), "late_receiver": (0, 0, 0),
        "wait_nxn": (2, 900 * US, 0), "wait_barrier": (2, 700 * US, 0),
        "late_broadcast": (1, 500 * US, 0), "early_reduce": (0, 0, 0), "wrong_order": (0, 0, 0)}

tmp = tempfile.mkdtemp(prefix="hclock-otf2-waits.")
ws = analysed(tmp, "known")
if ws:
    t = totals(ws)
    check(t == WANT, f"known: every pattern's instances, waiting time and proven ones ({t})")
    keys = {"messages": 2, "collectives": 3, "calls": 16, "calls_without_bounds": 16,
            "unpaired_sends": 0, "unpaired_receives": 0, "incomplete_collectives": 0,
            "collectives_of_unknown_size": 0}
    got = {k: ws.get(k) for k in keys}
    check(got == keys, f"known: what was analysed ({got})")
    who = sorted((w["pattern"], w["rank"], w["peer"], w["function"], w["wait_ns"])
                 for w in ws["worst"])
    want = sorted([("late_sender", 0, 1, "MPI_Recv", 500 * US),
                   ("late_sender", 2, 0, "MPI_Wait", 600 * US),
                   ("wait_barrier", 0, 2, "MPI_Barrier", 400 * US),
                   ("wait_barrier", 1, 2, "MPI_Barrier", 300 * US),
                   ("late_broadcast", 0, 2, "MPI_Bcast", 500 * US),
                   ("wait_nxn", 0, 2, "MPI_Wait", 500 * US),
                   ("wait_nxn", 1, 2, "MPI_Wait", 400 * US)])
    check(who == want, f"known: who waited for whom, in which call, how long ({who})")
    at = {(w["pattern"], w["rank"]): w["at_ns"] for w in ws["worst"]}
    check(at.get(("late_broadcast", 0)) == 4000 * US and at.get(("late_sender", 2)) == 2100 * US,
          f"known: the times in ns since the global offset ({at})")
ws = analysed(tmp, "unknown-comm", "--unknown-comm")
if ws:
    t = totals(ws)
    want = dict(WANT, wait_barrier=(0, 0, 0))
    check(t == want and ws["collectives_of_unknown_size"] == 3 and ws["collectives"] == 2,
          f"the check bites: a barrier on a communicator not defined is not analysed ({t}, "
          f"{ws['collectives_of_unknown_size']} of unknown size)")
if failed:
    print(f"files kept in {tmp}")
else:
    shutil.rmtree(tmp, ignore_errors=True)
sys.exit(1 if failed else 0)
