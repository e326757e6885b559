#!/usr/bin/env python3
"""otf2_align_test.py HCLOCK RUN MPIEXEC MINI - hclock align on the tracer's traces.otf2 of
4 ranks on 2 emulated nodes (2 ranks a node, 1 s offsets, 100 ppm skew; MINI
examples/allreduce_mini, 2000 iterations: 16,000 messages), seeds 4, 5 and 8, aligned to
MPI_Rank_0 (the emulation's reference node) with --bounds. The messages are paired here from
otf2-print as align pairs them (first in, first out per sender, receiver, tag), then:
  - align matched every message the tracer paired, and the inversions found here equal the
    report's (the same pairs);
  - no message whose receive the bounds put before its send (receive's latest before the
    send's earliest) by more than 2E (below): that would be a wrong record time or a wrong
    pair (the check bites: a receive moved earlier by its bounds' width and 2E is found).
    Align's bounds assume each node's times a line of the truth; the tracer's global clock
    follows it only within E, so they can miss by up to 2E (26-89 us for E = 231 us beside
    busy processes);
  - align's quality is hull for every node, or fallback (with its warning) on a hop whose
    input already holds a message received at or before its send, by at most 2E: the tracer's
    clock may invert a message within its error, and then no line separates the two hulls
    (seen once on a busy machine: E = 2.3 us, a hop's latency -0.9 us). A node's quality is
    the worst along its path, so a node converted through a fallback hop says fallback too
    while its own hop is a hull (seen busy: rank 2 through rank 3, whose hop to rank 0 fell
    back); the hops that fell back are the ones align's warnings name;
  - no inversion on a message between a node and the node it is converted through (a hop of
    align's tree: the hull's constraints hold every such message; fallback hops excepted,
    their bounds are not strict); a message between nodes
    that no hop joins (rank 3 converted through rank 2 and rank 2 through rank 0, a message
    from rank 0 to rank 3) may invert inside the two ends' bounds: printed, allowed;
  - --repair-order: no inversion left, every event it moved within its bounds (forward by at
    most delta_plus, back by at most delta_minus: a send into the reference moves back; a
    repair that cannot hold fails with the pair named);
  - the truth: the tracer's global clock follows the emulated reference within its own true
    error E (the --event-truth line's max), and rank 0's times are align's reference
    timeline, so every event's time lies within [corrected - delta_minus - 2E,
    corrected + delta_plus + 2E].
Prints one line per check; exits 1 if any failed (the files kept for a look)."""
import collections
import csv
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tracecheck  # noqa: E402
from tracecheck import check  # noqa: E402

hc, run, mpiexec, mini = sys.argv[1:5]
h = subprocess.run([hc, "align", "--help"], capture_output=True, text=True)
if h.returncode != 0:
    print(f"skip: hclock align not built ({h.stderr.strip()[-100:]})")
    sys.exit(77)


def messages(otf2):
    """the archive's messages as align pairs them: [(sender, receiver, send time, receive
    time)], times in ns since the archive's global offset"""
    g = subprocess.run(["otf2-print", "-G", otf2], capture_output=True, text=True).stdout
    m = re.search(r"Ticks per Seconds: 1000000000, Global Offset: (\d+)", g)
    go = int(m.group(1)) if m else 0
    sends, recvs = collections.defaultdict(list), collections.defaultdict(list)
    pr = subprocess.Popen(["otf2-print", otf2], stdout=subprocess.PIPE, text=True)
    for line in pr.stdout:
        w = line.split(None, 3)
        if len(w) < 4 or w[0] not in ("MPI_SEND", "MPI_RECV"):
            continue
        me, t = int(w[1]) // 1024, int(w[2]) - go
        peer = int(re.search(r"(?:Receiver|Sender): (\d+)", w[3]).group(1))
        comm = re.search(r"Communicator: [^<]*<(\d+)>", w[3]).group(1)
        tag = int(re.search(r"Tag: (\d+)", w[3]).group(1))
        if w[0] == "MPI_SEND":
            sends[(me, peer, comm, tag)].append(t)
        else:
            recvs[(peer, me, comm, tag)].append(t)
    pr.wait()
    return [(k[0], k[1], s, r) for k in sends for s, r in zip(sends[k], recvs.get(k, []))], go


def proven_backwards(msgs, b, tol):
    """the messages whose receive's latest time lies before its send's earliest by more than
    tol ns"""
    out = []
    for s, r, ts, tr in msgs:
        cs, ms, _ = b[(s, ts)]
        cr, _, pr = b[(r, tr)]
        if cr + pr + tol < cs - ms:
            out.append((s, r, ts, tr))
    return out


tmp = tempfile.mkdtemp(prefix="hclock-otf2-align.")
for seed in (4, 5, 8):
    d = os.path.join(tmp, f"t{seed}")
    p, paired, e = tracecheck.traced_truth(
        hc, run, mpiexec, 4, d, f"offset=1,skew=100e-6,ranks-per-node=2,seed={seed}",
        [mini, "2000", "50"], f"seed {seed}", 240)
    tol = 2 * e if e is not None else 2000
    otf2, bounds = os.path.join(d, "traces.otf2"), os.path.join(tmp, f"b{seed}.csv")
    if p.returncode == 0 and not os.path.exists(otf2):
        print("skip: no traces.otf2 (hclock built without libotf2)")
        sys.exit(77)
    al = subprocess.run([hc, "align", otf2, "--reference", "MPI_Rank_0", "--out",
                         os.path.join(tmp, f"al{seed}"), "--bounds", bounds, "--format", "json"],
                        capture_output=True, text=True)
    try:
        rep = json.loads(al.stdout)
        nodes = {nd["node"]: nd for nd in rep["nodes"]}
    except ValueError:
        rep, nodes = {}, {}
    msgs, _ = messages(otf2) if al.returncode == 0 else ([], 0)
    rank = {n: int(n.rsplit("_", 1)[1]) for n in nodes}
    parent = {rank[n]: rank.get(nd["via"]) for n, nd in nodes.items()}
    # the hops that fell back themselves (align warns for each); a node says fallback when
    # one lies on its path to the reference
    fallback = {int(a): int(v) for a, v in
                re.findall(r"MPI_Rank_(\d+) -> MPI_Rank_(\d+): the hulls intersect", al.stderr)}
    def path_falls(a):
        seen = set()
        while a is not None and a not in seen:
            seen.add(a)
            if a in fallback:
                return True
            a = parent.get(a)
        return False
    inherits = all((nd["quality"] == "fallback") == path_falls(rank[n])
                   for n, nd in nodes.items())
    # a hop's hulls intersect only if the input itself holds a message of that pair received
    # at or before its send (the identity line separates them otherwise): the tracer's global
    # clock inverted it, which its true error E allows (by at most 2E); align then says
    # "fallback" with a warning, as it should
    why = {}
    for a, v in fallback.items():
        lat = [tr - ts for s, r, ts, tr in msgs if {s, r} == {a, v}]
        why[a] = min(lat) if lat else None
    explained = all(w is not None and -tol <= w <= 0 and parent.get(a) == fallback[a]
                    for a, w in why.items())
    check(al.returncode == 0 and len(nodes) == 4 and
          all(nd["quality"] in ("hull", "reference", "fallback") for nd in nodes.values())
          and explained and inherits,
          f"seed {seed}: hclock align: exit {al.returncode}, 4 nodes, quality hull, or fallback "
          f"only on a hop whose input holds an inversion within 2E = {tol} ns (the tracer's "
          f"own) and with align's warning, or on a node whose path has such a hop "
          f"({[(n, nd['quality'], nd['via']) for n, nd in nodes.items()]}; smallest latency on "
          f"fallback hops, ns: {why}) {al.stderr.strip()[-300:]}")
    if fallback:
        print(f"note seed {seed}: fallback on hops {sorted(fallback.items())}: the tracer's "
              f"global clock inverted a message there (latency {why} ns, within 2E = {tol} ns),"
              f" so no line fits; their inversions are not checked below")
    if not nodes:
        continue
    b = {}
    with open(bounds) as f:
        for row in csv.DictReader(f):
            b[(int(row["node"].rsplit("_", 1)[1]), int(row["time_ns"]))] = (
                int(row["corrected_ns"]), int(row["delta_minus_ns"]), int(row["delta_plus_ns"]))
    check(len(msgs) == paired == sum(nd["recv"] for nd in nodes.values()),
          f"seed {seed}: every message matched ({len(msgs)} here, "
          f"{sum(nd['recv'] for nd in nodes.values())} by align, {paired} by the tracer)")
    inv = [(s, r, ts, tr) for s, r, ts, tr in msgs if b[(r, tr)][0] < b[(s, ts)][0]]
    check(len(inv) == sum(nd["inversions"] for nd in nodes.values()),
          f"seed {seed}: {len(inv)} inversions here, as align's report "
          f"({sum(nd['inversions'] for nd in nodes.values())})")
    back = proven_backwards(msgs, b, tol)
    check(not back, f"seed {seed}: no receive before its send by the bounds + {tol} ns "
          f"({back[:3]})")
    if msgs:
        s, r, ts, tr = msgs[len(msgs) // 2]
        cr, mr, pr = b[(r, tr)]
        cs, ms, _ = b[(s, ts)]
        moved = dict(b)
        moved[(r, tr)] = (cs - ms - pr - tol - 1, mr, pr)
        check(proven_backwards([(s, r, ts, tr)], moved, tol),
              "the check finds a receive moved before its send by its bounds' width and the "
              "2E allowance")
    hop = {(a, v) for a, v in parent.items() if v is not None and a not in fallback}
    on_hops = [x for x in inv if (x[0], x[1]) in hop or (x[1], x[0]) in hop]
    check(not on_hops, f"seed {seed}: no inversion on a hop of align's tree ({on_hops[:3]})")
    if inv:
        gap = sorted(b[(s, ts)][0] - b[(r, tr)][0] for s, r, ts, tr in inv)
        print(f"note seed {seed}: {len(inv)} inversions on messages between nodes no hop "
              f"joins ({sorted({(s, r) for s, r, _, _ in inv})}; tree {sorted(hop)}), by "
              f"{gap[0]}-{gap[-1]} ns, inside both ends' bounds")
    # --repair-order: no inversion left, every moved event within its bounds (a receive on the
    # reference cannot move: an inversion into it is an error naming the pair, accepted)
    mv = os.path.join(tmp, f"mv{seed}.csv")
    rp = subprocess.run([hc, "align", otf2, "--reference", "MPI_Rank_0", "--out",
                         os.path.join(tmp, f"rp{seed}"), "--repair-order", "--moved", mv,
                         "--format", "json"], capture_output=True, text=True)
    if rp.returncode == 0:
        rrep = json.loads(rp.stdout)
        moved = list(csv.DictReader(open(mv)))
        def room(m):
            """the event's (delta_minus, delta_plus) in the unrepaired run's bounds"""
            v = b[(int(m["node"].rsplit("_", 1)[1]), int(m["time_ns"]))]
            return v[1], v[2]
        # forward by at most delta_plus, or (a send) back by at most delta_minus
        far = [m for m in moved if int(m["shift_ns"]) == 0 or
               not -room(m)[0] - 1 <= int(m["shift_ns"]) <= room(m)[1] + 1]
        check(sum(nd["inversions"] for nd in rrep["nodes"]) == 0 and not far and
              len(moved) == sum(nd["moved"] for nd in rrep["nodes"]),
              f"seed {seed}: --repair-order: 0 inversions, {len(moved)} events moved (the "
              f"report's {sum(nd['moved'] for nd in rrep['nodes'])}), none beyond its bound "
              f"({far[:3]})")
    else:
        check(rp.returncode == 1 and len(inv) > 0,
              f"seed {seed}: --repair-order failed only where inversions were to repair, "
              f"naming the pair (exit {rp.returncode}: {rp.stderr.strip()[-300:]})")
    out = [(k, v) for k, v in b.items() if not -v[1] - tol <= k[1] - v[0] <= v[2] + tol]
    check(not out, f"seed {seed}: every event's global time within align's bounds + {tol} ns "
          f"(2 x the tracer's true error) of its corrected time ({len(out)} of {len(b)} not: "
          f"{out[:3]})")
tracecheck.finish(tmp)
