#!/usr/bin/env python3
"""reorder_test.py HCLOCK - `hclock trace --convert DIR --repair-order` (src/trace/reorder.c over
align's repair) on raw files written here, every time and bound known (no MPI run).
reorder_test.py --mpi HCLOCK RUN MPIEXEC MINI - the same on traced runs (below).

Two processes (util/record.h's format, tests/trace/rawfile.py), times in ns after the origin:
  rank 0  sends to 1 at 100000 (MPI_Send 100000-101000), an MPI_Ibarrier 150000-150100
          completed by MPI_Wait 160000-161000, receives from 1 (MPI_Recv 200000-210000),
          MPI_Barrier 300000-301000;
  rank 1  MPI_Recv 90000-99500 receives rank 0's message 500 ns before its send, then an
          MPI_Ibarrier 99600-99650 (completed by MPI_Wait 105000-106000), sends to 0 with
          MPI_Send 99700-99900, MPI_Barrier 300000-301000.
Every bound +-2 us (REC_F_HW; the send records carry their latest time, the receives their
earliest). The least repair within the bounds moves rank 1's receive to 100000 and the three
events after it that would precede it (the Ibarrier's enter and leave, the Send's enter and
leave) to 100000, nothing else: 5 events, by 500, 400, 350, 300 and 100 ns. Checked: the
raw records patched exactly so (the receive's, the send's and the nonblocking collective's
start with them; the local times untouched, rank 0's file byte-identical), the half-width
codes of each moved call still holding the original absolute bounds, DIR/moved.csv listing
exactly the 5, the summary and profile.json, the outputs (trace.json, trace.pftrace)
written anew without an inversion; a second --repair-order moving nothing; --min-latency;
the same files without bounds (moves not checked, counted); bounds of +-100 ns, which cannot
hold the move: exit 1, one line naming the pair, the raw files byte-identical; a receive tied
through its thread to its own send (a pairing no order allows); a file that is not a raw
trace.

With --mpi: MINI (examples/allreduce_mini, 2000 iterations: 16,000 messages) traced on 4
ranks as 2 emulated nodes (2 a node, 1 s offsets, 100 ppm skew) whose node 0 delays its
clock messages by 20 us after their timestamps (delay=20e-6,jitter-node=0: a path slower one
way, which no round trip shows), synchronized by the default's one-shot alone (SYNC: the
continuous clock keeps its old bound when an exchange knows nothing more, and shows no
inversion here): the estimate of node 1's clock runs 10 us early inside its bounds, and
hundreds of its receives show before their sends (seeds 3 and 5: 296-839 and 191-594 in six
runs). A jitter of up to 100 us instead left the sign and size of the error to chance once
the syncs retook their slow exchanges: 0 inversions in both seeds of one run, a few in
others. Each run's raw files kept, then `--convert --repair-order`: exit 0, 0 inversions left, the count of receives that were before their send equal to the first
summary's inversions, DIR/moved.csv as many rows as the summary says, every moved event
within the upper bound its original records give (its own, or a later event's of its thread,
computed here; an event recorded past it, a reading while the clock slewed in a correction,
may only move back towards it), only the times and half-widths of records changed, forward, the half-widths
still holding the original bounds. A receive on the reference's node has bounds of ~1 ns and
cannot move: an inversion into it fails naming the pair and "the repair never moves an event
back", accepted only so (as in mpi_trace_align_otf2) and only if another seed moved events.
Then the launcher's own --repair-order on one run: exit 0 (or that failure), 0 inversions,
the summary's line, moved.csv as many rows.
Prints one line per check; exits 1 if any failed."""
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rawfile  # noqa: E402
import tracecheck  # noqa: E402
from rawfile import RECV, SEND, T0  # noqa: E402
from tracecheck import check  # noqa: E402

MPI = sys.argv[1] == "--mpi"
hc = sys.argv[2 if MPI else 1]
FUNCS = ["MPI_Recv", "MPI_Send", "MPI_Barrier", "MPI_Ibarrier", "MPI_Wait"]
R = rawfile.Raw(FUNCS, local=True)
SYNC = "h2(hca3/100/hull/20/span=0.3,prop)"  # the one-shot (--mpi): its error shows
# the moves the least repair makes: (rank, thread, record, time) -> (recorded, repaired) ns
EXPECT = {(1, 0, 0, "leave"): (99500, 100000), (1, 0, 2, "enter"): (99600, 100000),
          (1, 0, 2, "leave"): (99650, 100000), (1, 0, 4, "enter"): (99700, 100000),
          (1, 0, 4, "leave"): (99900, 100000)}


def write(d, hw, cycle=False):
    """the two processes' raw files in d; hw: every bound's half-width, ns (None: none);
    cycle: rank 1 sends its message before it receives rank 0's, and rank 0 receives it
    before it sends (each receive waits, through its thread, for its own send)"""
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(os.path.join(d, "raw"))
    late = None if hw is None else hw  # the send's latest, the receive's earliest
    r0 = [R.msg(SEND, "MPI_Send", 100000, 1, bound=late and 100000 + late),
          R.call("MPI_Send", 100000, 101000, hw),
          R.call("MPI_Ibarrier", 150000, 150100, hw), R.call("MPI_Wait", 160000, 161000, hw),
          R.nbcoll("MPI_Ibarrier", 150000, 161000),
          R.call("MPI_Recv", 200000, 210000, hw),
          R.msg(RECV, "MPI_Recv", 210000, 1, bound=late and 210000 - late),
          R.coll("MPI_Barrier", 300000, 301000, hw)]
    r1 = [R.call("MPI_Recv", 90000, 99500, hw),
          R.msg(RECV, "MPI_Recv", 99500, 0, bound=late and 99500 - late),
          R.call("MPI_Ibarrier", 99600, 99650, hw),
          R.msg(SEND, "MPI_Send", 99700, 0, bound=late and 99700 + late),
          R.call("MPI_Send", 99700, 99900, hw),
          R.call("MPI_Wait", 105000, 106000, hw), R.nbcoll("MPI_Ibarrier", 99600, 106000),
          R.coll("MPI_Barrier", 300000, 301000, hw)]
    if cycle:  # rank 0 receives first (at 90000-99000), then sends; rank 1 as before
        r0 = [R.call("MPI_Recv", 90000, 99000, hw), R.msg(RECV, "MPI_Recv", 99000, 1),
              R.msg(SEND, "MPI_Send", 100000, 1), R.call("MPI_Send", 100000, 101000, hw)]
        r1 = [R.call("MPI_Recv", 90000, 99500, hw), R.msg(RECV, "MPI_Recv", 99500, 0),
              R.msg(SEND, "MPI_Send", 99700, 0), R.call("MPI_Send", 99700, 99900, hw)]
    for rank, recs in ((0, r0), (1, r1)):
        with open(os.path.join(d, "raw", f"rank.{rank}"), "wb") as f:
            f.write(R.file(rank, 2, recs))


def raw(d):
    return [open(os.path.join(d, "raw", f"rank.{r}"), "rb").read() for r in (0, 1)]


def repair(d, *extra):
    return subprocess.run([hc, "trace", "--convert", d, "--repair-order", *extra],
                          capture_output=True, text=True)


def moved_rows(d):
    with open(os.path.join(d, "moved.csv")) as f:
        return list(csv.DictReader(f))


def moves(rows):
    return {(int(m["rank"]), int(m["thread"]), int(m["record"]), m["time"]):
            (int(m["corrected_ns"]) - T0, int(m["repaired_ns"]) - T0, int(m["shift_ns"]))
            for m in rows}


def hw_interval(rec, leave):
    """the absolute bounds a record's half-width codes give at its enter or leave, ns after
    T0 (None: no codes; an end None: that half-width not known)"""
    if not rec["flags"] & rawfile.F_HW:
        return None
    c = rawfile.hw_codes(rec["tag"])
    t = (rec["t2_g"] if leave else rec["t_g"]) - T0
    below, above = rawfile.hw_ns(c[2 * leave]), rawfile.hw_ns(c[2 * leave + 1])
    return None if below is None else t - below, None if above is None else t + above


def holds(old, new):
    """the bounds new (hw_interval) contain old: each known end of old at or beyond"""
    return old is None or (new is not None and
                           (old[0] is None or (new[0] is not None and new[0] <= old[0])) and
                           (old[1] is None or (new[1] is not None and new[1] >= old[1])))


def check_records(before, after):
    """rank 1's records patched exactly where the repair moved them, rank 0's untouched"""
    check(before[0] == after[0], "rank 0's raw file is byte-identical (nothing of it moved)")
    b, a = rawfile.records(before[1]), rawfile.records(after[1])
    want = [dict(r) for r in b]
    for (rank, _, i, time), (_, to) in EXPECT.items():
        want[i]["t2_g" if time == "leave" else "t_g"] = T0 + to
    want[1]["t_g"] = want[3]["t_g"] = want[6]["t_g"] = T0 + 100000  # receive, send, start
    strip = [{k: v for k, v in r.items() if k != "tag"} for r in want]
    check(len(a) == len(b) and [{k: v for k, v in r.items() if k != "tag"} for r in a] == strip,
          "rank 1's records: the receive's, the send's, the Ibarrier's start and the moved "
          "calls' times patched to 100000 ns, every other field (local times included) "
          "unchanged")
    check(len(after[1]) == len(before[1]) and after[1][:rawfile.HEADER] == before[1][:rawfile.HEADER],
          "rank 1's file keeps its size and header")
    # each moved call's half-widths: the original absolute bounds inside the new ones, and
    # no wider than the codes' rounding (one step, at most ~9 %) makes them
    bad = []
    for i, (rb, ra) in enumerate(zip(b, a)):
        for leave in (0, 1):
            ib, ia = hw_interval(rb, leave), hw_interval(ra, leave)
            if ib is None:
                continue
            (lo_b, hi_b), (lo_a, hi_a) = ib, ia
            t = (ra["t2_g"] if leave else ra["t_g"]) - T0
            if not (holds(ib, ia) and t - lo_a == rawfile.hw_ns(rawfile.hw_code(t - lo_b)) and
                    hi_a - t == rawfile.hw_ns(rawfile.hw_code(hi_b - t))):
                bad.append((i, leave, ib, ia))
    check(not bad, "every record's half-width codes still hold its original absolute bounds, "
          f"widened by the codes' rounding only ({bad[:3]})")


def check_outputs(d, err, moved, max_ns, inverted, messages, unbounded=0):
    """the summary, profile.json and the outputs written anew from the repaired records"""
    line = [x for x in err.splitlines() if "repaired order" in x]
    want = (f"hclock trace: repaired order: {moved} events moved (either way), at most {max_ns} "
            f"ns; {inverted} receives were before their send")
    check(len(line) == 1 and line[0].startswith(want) and
          (f"{unbounded} of the moved events had no upper bound" in line[0]) == (unbounded > 0),
          f"the summary's line: {line}")
    check(tracecheck.summary_num(err, "inversions") == 0,
          f"the summary's pairing: 0 inversions ({tracecheck.summary_num(err, 'inversions')})")
    with open(os.path.join(d, "profile.json")) as f:
        rep = json.load(f).get("repair")
    check(rep == {"moved": moved, "moved_max_ns": max_ns, "messages": messages,
                  "unbounded_moved": unbounded}, f"profile.json's repair: {rep}")
    with open(os.path.join(d, "profile.txt")) as f:
        check("# repaired order: %d events moved (either way)" % moved in f.read(),
              "profile.txt has the repair's line")
    ev = tracecheck.load_checked(d)  # trace.json, and trace.pftrace against it
    flows = {}
    for e in ev:
        if e.get("cat") == "p2p" and e.get("ph") in ("s", "f"):
            flows.setdefault(e["id"], {})[e["ph"]] = float(e["ts"])
    back = [f for f in flows.values() if len(f) == 2 and f["f"] < f["s"]]
    check(len(flows) == 2 and not back,
          f"trace.json: 2 message flows, none received before its send ({back})")
    recv1 = [e for e in ev if e.get("ph") == "X" and e["name"] == "MPI_Recv" and e["pid"] == 1]
    return recv1


def unit(tmp):
    """the hand-made files"""
    d = os.path.join(tmp, "bounded")
    write(d, 2000)
    before = raw(d)
    p = repair(d)
    check(p.returncode == 0, f"--convert --repair-order exits 0 ({p.returncode}" +
          (")" if p.returncode == 0 else f": {p.stderr[-300:]})"))
    after = raw(d)
    check_records(before, after)
    rows = moved_rows(d)
    got = moves(rows)
    want = {k: (a, b, b - a) for k, (a, b) in EXPECT.items()}
    check(got == want and len(rows) == len(want),
          f"moved.csv lists exactly the 5 moved enters and leaves ({sorted(got.items())})")
    recv1 = check_outputs(d, p.stderr, 5, 500, 1, 2)
    check(len(recv1) == 1 and abs(float(recv1[0]["dur"]) - 10.0) < 1e-6,
          f"trace.json: rank 1's MPI_Recv (90000-99500 ns) now lasts to 100000 ns ({recv1})")

    # once repaired, a second repair moves nothing and writes nothing
    p = repair(d)
    check(p.returncode == 0 and raw(d) == after and moved_rows(d) == [] and
          "repaired order: 0 events moved (either way), at most 0 ns; 0 receives" in p.stderr,
          "a second --repair-order moves nothing, the raw files unchanged" +
          ("" if p.returncode == 0 else f" ({p.stderr[-200:]})"))

    # --min-latency 1us: the receive at 101000, the events after it as far as they would precede
    d = os.path.join(tmp, "latency")
    write(d, 2000)
    p = repair(d, "--min-latency", "1us")
    got = moves(moved_rows(d)) if p.returncode == 0 else {}
    check(p.returncode == 0 and got.get((1, 0, 0, "leave")) == (99500, 101000, 1500) and
          len(got) == 5 and all(v[1] == 101000 for v in got.values()),
          f"--min-latency 1us: the receive 1 us after its send, the 4 events after it with it "
          f"({sorted(got.items())})")
    check(subprocess.run([hc, "trace", "--convert", d, "--min-latency", "1us"],
                         capture_output=True).returncode == 2,
          "--min-latency without --repair-order: exit 2")

    # without bounds the same moves, none checked, counted as such
    d = os.path.join(tmp, "unbounded")
    write(d, None)
    p = repair(d)
    check(p.returncode == 0 and moves(moved_rows(d)) == want,
          "without bounds: the same 5 moves" + ("" if p.returncode == 0 else f" ({p.stderr[-200:]})"))
    if p.returncode == 0:
        check_outputs(d, p.stderr, 5, 500, 1, 2, unbounded=5)

    # bounds of +-100 ns cannot hold a move of 500: one line naming the pair, nothing changed
    d = os.path.join(tmp, "narrow")
    write(d, 100)
    before = raw(d)
    p = repair(d)
    lines = p.stderr.strip().splitlines()
    # the time named: the receive's earliest, with the send at its own earliest
    latest = 99500 + rawfile.hw_ns(rawfile.hw_code(100))
    earliest = 100000 - rawfile.hw_ns(rawfile.hw_code(100))
    check(p.returncode == 1 and len(lines) == 1 and
          f"message from rank 0 thread 0 (record 0, send at {T0 + 100000} ns) to rank 1 thread 0 "
          f"(record 1, receive at {T0 + 99500} ns)" in lines[0] and
          f"would have to move to {T0 + earliest} ns, {earliest - latest} ns past its latest "
          f"time ({T0 + latest} ns)" in lines[0] and
          "the bounds were wrong" in lines[0],
          f"+-100 ns bounds: exit 1, one line naming the pair and by how much the bound was "
          f"short ({p.returncode}: {lines})")
    check(raw(d) == before and not os.path.exists(os.path.join(d, "moved.csv")) and
          not os.path.exists(os.path.join(d, "trace.json")),
          "+-100 ns bounds: the raw files byte-identical, no moved.csv, no outputs")

    # each receive waits, through its thread, for its own send: no order pairs them so
    d = os.path.join(tmp, "cycle")
    write(d, 2000, cycle=True)
    before = raw(d)
    p = repair(d)
    lines = p.stderr.strip().splitlines()
    check(p.returncode == 1 and len(lines) == 1 and "before its own send" in lines[0] and
          raw(d) == before, f"a pairing no order allows: exit 1, one line, nothing changed "
          f"({lines})")

    # garbage: not a raw trace
    d = os.path.join(tmp, "garbage")
    write(d, 2000)
    with open(os.path.join(d, "raw", "rank.1"), "r+b") as f:
        f.write(b"NOTATRACE")
    p = repair(d)
    lines = p.stderr.strip().splitlines()
    check(p.returncode == 1 and len(lines) == 1 and "rank.1" in lines[0],
          f"a file that is not a raw trace: exit 1, one line naming it ({lines})")


# ---- traced runs ----------------------------------------------------------------------------

EMU = "offset=1,skew=100e-6,delay=20e-6,jitter-node=0,ranks-per-node=2,seed=%d"
REFERENCE_NODE = (0, 1)  # the ranks on the emulation's node 0: bounds of ~1 ns


def upper_bounds(data):
    """each event of a raw file: (tid, time, which) -> its latest time by the records, ns
    (None: no bound): the least own upper bound (a call's enter or leave: time + upper
    half-width; a send record: its t2_g) of the events of its thread at or after its time"""
    own = {}
    for i, r in enumerate(rawfile.records(data)):
        k = r["kind"]
        if k == rawfile.CALL or (k == rawfile.COLL and not r["flags"] & rawfile.F_NB):
            for leave in (0, 1):
                b = hw_interval(r, leave)
                t = r["t2_g"] if leave else r["t_g"]
                up = None if b is None or b[1] is None else T0 + b[1]
                own.setdefault(r["tid"], []).append((t, up, (i, leave)))
        elif k == SEND:
            own.setdefault(r["tid"], []).append((r["t_g"], r["t2_g"] or None, (i, "send")))
    out = {}
    for tid, evs in own.items():
        evs.sort(key=lambda e: e[0])
        best = None
        for t, up, which in reversed(evs):
            if up is not None and (best is None or up < best):
                best = up
            out[(tid, which)] = best
    return out


def beyond(orig, rows):
    """the moved events (rows of moved.csv) repaired past the upper bound their original
    records (orig: rank -> the raw file's bytes) give, with that bound. An event recorded past
    it already (a reading while the clock slewed in a correction larger than its half-width:
    the bounds hold the reference's time, not the reading) may stay there or move back
    towards it, never further"""
    far = []
    for rank, data in orig.items():
        up = upper_bounds(data)
        for m in rows:
            if int(m["rank"]) != rank:
                continue
            key = (int(m["thread"]), (int(m["record"]), 1 if m["time"] == "leave" else 0))
            lim = up.get(key, "?")
            if lim == "?" or (lim is not None and
                              int(m["repaired_ns"]) > max(lim, int(m["corrected_ns"]))):
                far.append((m, lim))
    return far


def check_repaired(seed, orig, d, rows, moved):
    """d's raw files against the originals orig (rank -> bytes) after a repair that moved the
    events in rows (moved.csv)"""
    bad, changed = [], 0
    for rank, data in orig.items():
        with open(os.path.join(d, "raw", f"rank.{rank}"), "rb") as f:
            now = f.read()
        a, b = rawfile.records(data), rawfile.records(now)
        if len(a) != len(b) or data[:rawfile.HEADER] != now[:rawfile.HEADER]:
            bad.append((rank, "records or header"))
            continue
        for i, (x, y) in enumerate(zip(a, b)):
            same = {k for k in x if x[k] == y[k]}
            if same == set(x):
                continue
            changed += 1
            # forward or back (a send within its lower bound): the half-widths must still hold
            if not set(x) - same <= {"t_g", "t2_g", "tag"} or \
                    (x["kind"] in (SEND, RECV) and x["t2_g"] != y["t2_g"]):
                bad.append((rank, i, x, y))
            for leave in (0, 1):
                if not holds(hw_interval(x, leave), hw_interval(y, leave)):
                    bad.append((rank, i, leave, hw_interval(x, leave), hw_interval(y, leave)))
    check(not bad and changed >= (moved > 0),
          f"seed {seed}: {changed} records changed, only their times and half-widths, "
          f"which still hold the original bounds ({bad[:2]})")
    far = beyond(orig, rows)
    check(not far, f"seed {seed}: every moved event within the upper bound its records give "
          f"({len(far)} of {len(rows)} not: {far[:2]})")
    for m in rows:  # the check bites: the first moved event recorded within its bound, 1 ns
        # past it
        hit = beyond(orig, [dict(m, repaired_ns=str(2 ** 62))])
        lim = hit[0][1] if hit else None
        if lim is not None and int(m["corrected_ns"]) <= lim:
            check(beyond(orig, [dict(m, repaired_ns=str(lim + 1))]) and
                  not beyond(orig, [dict(m, repaired_ns=str(lim))]),
                  f"seed {seed}: the check bites: an event 1 ns past its bound ({lim}) is found")
            break


def mpi(tmp, run, mpiexec, mini):
    moved_any, accepted = 0, []
    for seed in (3, 5):
        d = os.path.join(tmp, f"t{seed}")
        p = tracecheck.launch(run, mpiexec, 4, [hc, "trace", "-o", d, "--emulate", EMU % seed,
                                                "--sync", SYNC, "--", mini, "2000", "50"], 240)
        inv = tracecheck.summary_num(p.stderr, "inversions")
        check(p.returncode == 0 and inv is not None,
              f"seed {seed}: traced run, exit {p.returncode}, {inv} inversions" +
              ("" if p.returncode == 0 else p.stderr[-400:]))
        if p.returncode:
            continue
        orig = {r: open(os.path.join(d, "raw", f"rank.{r}"), "rb").read() for r in range(4)}
        q = repair(d)
        if q.returncode:
            line = q.stderr.strip().splitlines()
            ok = len(line) == 1 and "were wrong" in line[0] and any(
                f"to rank {r} thread" in line[0] for r in REFERENCE_NODE)
            accepted.append(seed)
            check(q.returncode == 1 and ok and all(
                open(os.path.join(d, "raw", f"rank.{r}"), "rb").read() == orig[r]
                for r in range(4)),
                f"seed {seed}: --repair-order failed only on a receive on the reference's node "
                f"(one line, the raw files unchanged): {q.stderr.strip()[-300:]}")
            continue
        rows = moved_rows(d)
        m = tracecheck.summary_num(q.stderr, r"events moved \(either way\)")
        before = tracecheck.summary_num(q.stderr, "receives were before their send")
        check(tracecheck.summary_num(q.stderr, "inversions") == 0 and m == len(rows) and
              before == inv,
              f"seed {seed}: --repair-order: 0 inversions left; {before} receives were before "
              f"their send ({inv} inversions before); {m} events moved (moved.csv {len(rows)})")
        moved_any += len(rows)
        if rows:
            sh = sorted(int(r["shift_ns"]) for r in rows)
            print(f"note seed {seed}: {len(rows)} events moved ({sum(x < 0 for x in sh)} back), "
                  f"by {sh[0]}-{sh[-1]} ns "
                  f"(median {sh[len(sh) // 2]})")
        check_repaired(seed, orig, d, rows, m)
    check(moved_any > 0, f"the repair moved events in some run ({moved_any}; failed on the "
          f"reference's node: seeds {accepted})")
    # the launcher's --repair-order
    d = os.path.join(tmp, "launcher")
    p = tracecheck.launch(run, mpiexec, 4, [hc, "trace", "-o", d, "--emulate", EMU % 3,
                                            "--sync", SYNC, "--repair-order", "--", mini,
                                            "2000", "50"], 240)
    m = tracecheck.summary_num(p.stderr, r"events moved \(either way\)")
    if p.returncode == 0:
        rows = moved_rows(d)
        check(tracecheck.summary_num(p.stderr, "inversions") == 0 and m == len(rows),
              f"the launcher's --repair-order: exit 0, 0 inversions, {m} events moved "
              f"(moved.csv {len(rows)})")
    else:
        check(p.returncode == 1 and "were wrong" in p.stderr and
              not os.path.exists(os.path.join(d, "trace.json")),
              f"the launcher's --repair-order failed only on the reference's node, no outputs "
              f"(exit {p.returncode}): {p.stderr.strip()[-300:]}")


tmp = tempfile.mkdtemp(prefix="hclock-reorder.")
if MPI:
    mpi(tmp, *sys.argv[3:6])
else:
    unit(tmp)
tracecheck.finish(tmp)
