#!/usr/bin/env python3
"""test_tool.py - tool tests of `hclock align` on generated traces of known clocks.

usage: test_tool.py HCLOCK GROUP   (GROUP: synthetic, nonlinear, golden, badinput, options,
                                    strict, repair)
Every failure prints the seed of the generated traces.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_traces  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
failures = 0


def fail(msg):
    global failures
    failures += 1
    print("FAIL:", msg)


def run(hclock, args, expect_rc=0):
    p = subprocess.run([hclock, "align"] + args, capture_output=True, text=True)
    if expect_rc is not None and p.returncode != expect_rc:
        fail(f"hclock align {' '.join(args)}: rc {p.returncode}, expected {expect_rc}\n"
             f"stderr: {p.stderr}")
    return p


def read_csv(path):
    with open(path) as f:
        return [line.rstrip("\n").split(",") for line in f]


def synthetic(hclock, tmp):
    cases = [  # nodes, topology, seed, reference, msgs
        (2, "star", 11, None, 800), (2, "star", 12, "n1", 300), (4, "star", 13, None, 400),
        (5, "chain", 14, "n0", 400), (8, "chain", 15, "n7", 300), (6, "random", 16, None, 300),
        (8, "random", 17, "n3", 300), (3, "full", 18, None, 300)]
    for nodes, topo, seed, ref, msgs in cases:
        d = os.path.join(tmp, f"s{seed}")
        truth = gen_traces.generate(d + "/in", nodes=nodes, topology=topo, msgs=msgs, seed=seed,
                                    duration_s=120)
        os.remove(d + "/in/truth.json")
        args = [d + "/in", "--out", d + "/out", "--bounds", d + "/b.csv", "--format", "json",
                "--plot", d + "/p.svg"]
        if ref:
            args += ["--reference", ref]
        p = run(hclock, args)
        if p.returncode:
            continue
        tag = f"seed {seed} ({nodes} nodes, {topo})"
        r = json.loads(p.stdout)
        if set(r) != {"tool", "reference", "mode", "estimate", "messages", "unmatched", "nodes",
                      "pairs", "bcast_diff_delay_ns"} or \
                r["tool"] != "hclock align":
            fail(f"{tag}: JSON keys {sorted(r)}")
        if ref and r["reference"] != ref:
            fail(f"{tag}: reference {r['reference']}, asked for {ref}")
        for n in r["nodes"]:
            if set(n) != {"node", "via", "hops", "x0_ns", "offset_ns", "slope", "a0_ns", "a1",
                          "quality", "bound_best_ns", "bound_mean_ns", "bound_max_ns", "recv",
                          "inversions", "too_fast"}:
                fail(f"{tag}: node keys {sorted(n)}")
            if n["inversions"]:
                fail(f"{tag}: {n['node']} has {n['inversions']} inversions")
            if n["quality"] not in ("hull", "reference"):
                fail(f"{tag}: {n['node']} quality {n['quality']}")
            # a1 against the truth: d(L_ref)/d(L_node)
            pn = truth["params"][int(n["node"][1:])]
            pr = truth["params"][int(r["reference"][1:])]
            a1 = (1 + pr["s"] * 1e-9) / (1 + pn["s"] * 1e-9)
            if abs(n["a1"] - a1) > 2e-6:
                fail(f"{tag}: {n['node']} a1 {n['a1']} vs true {a1}")
        rows, outside, err, bnd = gen_traces.check_truth(truth, d + "/b.csv", r["reference"])
        if outside:
            fail(f"{tag}: {outside} of {rows} events with the true time outside the bounds")
        if not err < 0.25 * bnd:
            fail(f"{tag}: mean error {err:.0f} ns not far below the mean bound {bnd:.0f} ns")
        # the corrected traces: same lines, the times of the bounds file, monotonic
        b = {}
        for node, lt, c, dm, dp in read_csv(d + "/b.csv")[1:]:
            b.setdefault(node, []).append(int(c))
        for k in range(nodes):
            rows_in = read_csv(f"{d}/in/n{k}.csv")
            rows_out = read_csv(f"{d}/out/n{k}.csv")
            if [x[:3] for x in rows_in] != [x[:3] for x in rows_out]:
                fail(f"{tag}: n{k}.csv: corrected trace changed more than the times")
            times = [int(x[3]) for x in rows_out[1:]]
            if times != b[f"n{k}"]:
                fail(f"{tag}: n{k}.csv times differ from the bounds file")
            if any(y < x for x, y in zip(times, times[1:])):
                fail(f"{tag}: n{k}.csv corrected times not monotonic")
        if topo == "chain" and ref in ("n0", "n7"):
            p2 = run(hclock, [d + "/in", "--out", d + "/out2", "--reference", ref])
            hops = max(int(line.split()[3]) for line in p2.stdout.splitlines()[2:2 + nodes])
            if hops < 3:
                fail(f"{tag}: longest path {hops} hops, expected >= 3")
        with open(d + "/p.svg") as f:
            svg = f.read()
        if not svg.startswith("<svg") or "polygon" not in svg or "circle" not in svg:
            fail(f"{tag}: plot lacks the band or the broadcasts")
        print(f"ok {tag}: ref {r['reference']}, mean error {err:.0f} ns, mean bound {bnd:.0f} ns")


def nonlinear(hclock, tmp):
    seed = 21
    d = os.path.join(tmp, "q")
    # |q| ~ 4e-21/ns: 0.4-0.8 ms of curvature over 4 h, far more than the latency
    t2 = gen_traces.generate(d + "/in", nodes=2, msgs=4000, seed=seed, duration_s=4 * 3600,
                             quadratic=4000000, bcast=200)
    os.remove(d + "/in/truth.json")
    errs = {}
    for name, extra in (("fallback", []), ("auto", ["--segments", "auto"]),
                        ("fixed", ["--segments", "20m"]), ("regression", ["--mode", "regression"])):
        p = run(hclock, [d + "/in", "--out", d + "/o-" + name, "--reference", "n0",
                         "--bounds", d + f"/b-{name}.csv", "--format", "json"] + extra)
        if p.returncode:
            continue
        r = json.loads(p.stdout)
        q = r["nodes"][1]["quality"]
        want = {"fallback": "fallback", "auto": "segments", "fixed": "segments",
                "regression": "regression"}[name]
        if q != want:
            fail(f"seed {seed} {name}: quality {q}, expected {want}")
        if name == "fallback" and "hulls intersect" not in p.stderr:
            fail(f"seed {seed}: no warning that the hulls intersect: {p.stderr!r}")
        rows, outside, err, bnd = gen_traces.check_truth(t2, d + f"/b-{name}.csv", "n0")
        errs[name] = err
        print(f"ok nonlinear seed {seed} {name}: mean error {err:.0f} ns, bound {bnd:.0f} ns, "
              f"inversions {r['nodes'][0]['inversions'] + r['nodes'][1]['inversions']}")
    if errs and not errs.get("auto", 1e99) < errs.get("fallback", 0) / 3:
        fail(f"seed {seed}: segments error {errs.get('auto')} not well below fallback "
             f"{errs.get('fallback')}")
    # a linear trace of the same length fits one line: no fallback
    d2 = os.path.join(tmp, "lin")
    gen_traces.generate(d2 + "/in", nodes=2, msgs=4000, seed=seed, duration_s=4 * 3600)
    os.remove(d2 + "/in/truth.json")
    p = run(hclock, [d2 + "/in", "--out", d2 + "/o", "--format", "json", "--segments", "auto"])
    if not p.returncode and {n["quality"] for n in json.loads(p.stdout)["nodes"]} != \
            {"reference", "hull"}:
        fail(f"seed {seed}: linear clocks did not fit one line with --segments auto")


def golden(hclock, tmp):
    g = os.path.join(HERE, "golden")
    p = run(hclock, [g + "/a.csv", g + "/b.csv", "--out", tmp + "/g", "--format", "json",
                     "--bounds", tmp + "/g.csv"])
    for got, want in ((p.stdout, "small.json"), (open(tmp + "/g.csv").read(), "small-bounds.csv"),
                      (open(tmp + "/g/b.csv").read(), "small-b-out.csv")):
        with open(os.path.join(g, want)) as f:
            if got != f.read():
                fail(f"golden {want} differs:\n{got}")
    json.loads(p.stdout)
    p = run(hclock, [g + "/a.csv", g + "/b.csv", "--out", tmp + "/g2"])
    if "reference: a" not in p.stdout:
        fail("table lacks the reference line")


def badinput(hclock, tmp):
    good_a = "event,id,peer,time_ns\nsend,1,b,1000\nrecv,2,b,5000\nsend,3,b,9000\nrecv,4,b,15000\n"
    good_b = "event,id,peer,time_ns\nrecv,1,a,101200\nsend,2,a,104000\nrecv,3,a,109100\n" \
             "send,4,a,114000\n"
    cases = [  # name, a.csv, b.csv, expected text in the one-line error
        ("header", "event,id,time_ns\n", good_b, "a.csv:1:"),
        ("columns", good_a + "send,5,b\n", good_b, "a.csv:6:"),
        ("more-columns", good_a.replace("send,3,b,9000", "send,3,b,9000,1"), good_b, "a.csv:4:"),
        ("unsorted", good_a.replace("9000", "900"), good_b, "a.csv:4:"),
        ("duplicate", good_a.replace("send,3,", "send,1,"), good_b, "a.csv:4:"),
        ("one-sided", good_a + "send,9,b,16000\n", good_b, "a.csv:6:"),
        ("one-sided-recv", good_a, good_b + "recv,9,a,115000\n", "b.csv:6:"),
        ("bad-estimate", good_a, good_b, "--estimate"),
        ("bad-unmatched", good_a, good_b, "--unmatched"),
        ("bad-time", good_a.replace("5000", "5x00"), good_b, "a.csv:3:"),
        ("bad-id", good_a.replace("send,3,", "send,-3,"), good_b, "a.csv:4:"),
        ("unknown-peer", good_a.replace("send,3,b", "send,3,c"), good_b, "a.csv:4:"),
        ("self-peer", good_a.replace("send,3,b", "send,3,a"), good_b, "a.csv:4:"),
        ("empty", "", good_b, "a.csv:1:"),
        ("huge-time", good_a.replace("15000", "9223372036854775807"), good_b, "a.csv:5:"),
        ("nul", good_a.replace("5000", "50\0" + "0"), good_b, "a.csv"),
    ]
    for name, a, b, want in cases:
        d = os.path.join(tmp, "bad-" + name)
        os.makedirs(d)
        with open(d + "/a.csv", "w") as f:
            f.write(a)
        with open(d + "/b.csv", "w") as f:
            f.write(b)
        extra = ["--unmatched", "fail"] if name.startswith("one-sided") else \
            ["--estimate", "median"] if name == "bad-estimate" else \
            ["--unmatched", "warn"] if name == "bad-unmatched" else []
        p = run(hclock, [d + "/a.csv", d + "/b.csv", "--out", d + "/out", "--bounds",
                         d + "/bounds.csv"] + extra, expect_rc=2 if extra and extra[1] in
                ("median", "warn") else 1)
        lines = p.stderr.strip().splitlines()
        if len(lines) != 1 or want not in lines[0]:
            fail(f"bad input {name}: stderr {p.stderr!r}, expected one line with {want!r}")
        if os.path.exists(d + "/out") or os.path.exists(d + "/bounds.csv"):
            fail(f"bad input {name}: wrote output")
        print(f"ok bad input {name}: {lines[0] if lines else ''}")
    # a node without a message path to the reference is named
    d = os.path.join(tmp, "bad-nopath")
    os.makedirs(d)
    for n, text in (("a", good_a), ("b", good_b),
                    ("c", "event,id,peer,time_ns\nsend,1,d,10\n"),
                    ("d", "event,id,peer,time_ns\nrecv,1,c,20\n")):
        with open(f"{d}/{n}.csv", "w") as f:
            f.write(text)
    p = run(hclock, [d, "--out", d + "/out", "--reference", "a"], expect_rc=1)
    if "no message path" not in p.stderr or not ("c (" in p.stderr or "d (" in p.stderr):
        fail(f"no path: stderr {p.stderr!r}")
    # missing file, unknown option, bad option values
    for args, want in (([tmp + "/nonexistent.csv", "--out", tmp + "/x"], "nonexistent.csv"),
                       ([tmp + "/x.csv", "--out", tmp + "/x", "--frobnicate"], "--frobnicate"),
                       ([tmp + "/x.csv", "--out", tmp + "/x", "--format", "xml"], "--format"),
                       ([tmp + "/x.csv", "--out", tmp + "/x", "--segments", "60x"], "--segments"),
                       ([tmp + "/x.csv", "--out", tmp + "/x", "--segments", "0"], "--segments"),
                       ([tmp + "/x.csv", "--out", tmp + "/x", "--min-latency", "-1us"],
                        "--min-latency"),
                       ([tmp + "/x.csv", "--out", tmp + "/x", "--mode", "lp"], "--mode"),
                       ([tmp + "/x.csv"], "--out")):
        p = run(hclock, args, expect_rc=None)
        if p.returncode == 0 or want not in p.stderr or len(p.stderr.strip().splitlines()) != 1:
            fail(f"{args}: rc {p.returncode}, stderr {p.stderr!r}")
    # an output directory that cannot be written: nothing else appears either
    d = os.path.join(tmp, "ro")
    os.makedirs(d + "/in")
    with open(d + "/in/a.csv", "w") as f:
        f.write(good_a)
    with open(d + "/in/b.csv", "w") as f:
        f.write(good_b)
    with open(d + "/file", "w") as f:
        f.write("x")
    p = run(hclock, [d + "/in", "--out", d + "/file/sub", "--bounds", d + "/b.csv",
                     "--plot", d + "/p.svg"], expect_rc=1)
    if sorted(os.listdir(d)) != ["file", "in"]:
        fail(f"failed write left files: {os.listdir(d)}")


def strict(hclock, tmp):
    """Bounds strict to the ns at real epochs (1e13 to 1.7e18 ns): clocks exactly linear on a
    100 us grid (so the truth is an exact integer), a fifth of the messages with zero latency
    (from one side: the truth then lies on the edge of the corridor, where rounding the corrected time
    without moving the deltas put it outside by up to 0.5 ns); relation at x0 against the
    truth; unmatched events at both ends skipped and counted per pair; modes of the outputs
    under two umasks; the report's CSV and table against its JSON; --reference by file;
    --estimate mean inside the same bounds."""
    import random
    unit = 100000
    for seed, T0 in ((41, 10**13), (42, 10**15), (43, 10**17), (44, 1_700_000_000_000_000_000)):
        rnd = random.Random(seed)
        d = os.path.join(tmp, f"strict{seed}")
        os.makedirs(d + "/in")
        num = rnd.choice([-7, -3, 2, 5, 8])  # skew num/unit: 20-80 ppm
        off = rnd.randrange(-10**12, 10**12)

        def local(k, t):  # t: true ns, a multiple of unit
            return T0 + t if k == 0 else T0 + off + t + t * num // unit
        ev = {0: [], 1: []}
        for i in range(600):
            src = rnd.randrange(2)
            t = rnd.randrange(10, 200000) * unit
            lat = 0 if src == 0 and rnd.random() < 0.2 else rnd.randrange(1, 5) * unit
            ev[src].append((t, "send", i, 1 - src))
            ev[1 - src].append((t + lat, "recv", i, src))
        # cut at the ends: a send before the other trace starts, a recv after it ended
        ev[0].append((5 * unit, "send", 9001, 1))
        ev[1].append((300000 * unit, "send", 9002, 0))
        ev[1].append((300001 * unit, "recv", 9003, 0))
        truth = {}
        for k in (0, 1):
            ev[k].sort()
            with open(f"{d}/in/h{k}.csv", "w") as f:
                f.write("event,id,peer,time_ns\n")
                for t, kind, i, peer in ev[k]:
                    f.write(f"{kind},{i},h{peer},{local(k, t)}\n")
                    truth[(f"h{k}", local(k, t))] = T0 + t
        old = os.umask(0o027)
        try:
            p = run(hclock, [d + "/in", "--out", d + "/out", "--bounds", d + "/b.csv",
                             "--plot", d + "/p.svg", "--format", "json", "--reference",
                             d + "/in/h0.csv"])
        finally:
            os.umask(old)
        if p.returncode:
            continue
        tag = f"strict seed {seed} T0 {T0}"
        for path in (d + "/out/h1.csv", d + "/b.csv", d + "/p.svg"):
            if os.stat(path).st_mode & 0o777 != 0o640:
                fail(f"{tag}: {path} mode {oct(os.stat(path).st_mode & 0o777)} under umask 027")
        r = json.loads(p.stdout)
        outside = 0
        for node, lt, c, dm, dp in read_csv(d + "/b.csv")[1:]:
            true = truth[(node, int(lt))]
            if not int(c) - int(dm) <= true <= int(c) + int(dp):
                outside += 1
        if outside:
            fail(f"{tag}: {outside} events with the truth outside the bounds")
        n1 = r["nodes"][1]
        slope = unit / (unit + num)
        x0 = n1["x0_ns"]
        # true offset at x0: solve local(1, t) = x0 for real t
        true_t = (x0 - T0 - off) * unit / (unit + num)
        span = 2e10  # ns of true time the messages cover
        if abs(n1["slope"] - slope) > 4 * n1["bound_max_ns"] / span or \
                abs(n1["offset_ns"] - (T0 + true_t - x0)) > n1["bound_max_ns"]:
            fail(f"{tag}: relation {n1['slope']} {n1['offset_ns']} vs {slope} "
                 f"{T0 + true_t - x0}")
        pairs = {(q["from"], q["to"]): q for q in r["pairs"]}
        if pairs[("h0", "h1")]["unmatched_sends"] != 1 or \
                pairs[("h1", "h0")]["unmatched_sends"] != 1 or \
                pairs[("h0", "h1")]["unmatched_recvs"] != 1 or r["unmatched"] != 3 or \
                r["messages"] != 600:
            fail(f"{tag}: unmatched counts {r['pairs']}")
        # the same figures as CSV and as a table
        c = run(hclock, [d + "/in", "--out", d + "/out", "--format", "csv", "--reference",
                         "h0.csv"]).stdout.split("\n\n")
        rows = [line.split(",") for line in c[0].splitlines()]
        if rows[2][rows[0].index("slope")] != repr(n1["slope"]) and \
                float(rows[2][rows[0].index("slope")]) != n1["slope"]:
            fail(f"{tag}: CSV slope {rows[2]} vs JSON {n1['slope']}")
        q = pairs[("h0", "h1")]
        if rows[2][rows[0].index("via")] != "h0" or c[1].splitlines()[1] != \
                f"h0,h1,{q['messages']},1,1":
            fail(f"{tag}: CSV report {c}")
        t = run(hclock, [d + "/in", "--out", d + "/out"]).stdout
        if "unmatched: 3" not in t or "x0_ns" not in t:
            fail(f"{tag}: table {t}")
        # Trace Compass's estimate: another line inside the same corridor
        m = run(hclock, [d + "/in", "--out", d + "/om", "--bounds", d + "/bm.csv", "--format",
                         "json", "--estimate", "mean", "--reference", "h0"])
        rm = json.loads(m.stdout)
        if rm["estimate"] != "mean" or abs(rm["nodes"][1]["slope"] - slope) > \
                4 * n1["bound_max_ns"] / span or \
                rm["nodes"][1]["inversions"]:
            fail(f"{tag}: --estimate mean {rm['nodes'][1]}")
        for node, lt, c, dm, dp in read_csv(d + "/bm.csv")[1:]:
            if not int(c) - int(dm) <= truth[(node, int(lt))] <= int(c) + int(dp):
                fail(f"{tag}: --estimate mean: truth outside at {node} {lt}")
                break
        p = run(hclock, [d + "/in", "--out", d + "/o2", "--unmatched", "fail"], expect_rc=1)
        if "has no matching" not in p.stderr:
            fail(f"{tag}: --unmatched fail: {p.stderr!r}")
        print(f"ok {tag}: slope {n1['slope']!r} (true {slope!r}), bound mean "
              f"{n1['bound_mean_ns']} ns")


def options(hclock, tmp):
    d = os.path.join(tmp, "opt")
    gen_traces.generate(d + "/in", nodes=3, msgs=300, seed=31)
    os.remove(d + "/in/truth.json")
    p = subprocess.run([hclock, "align", "--help"], capture_output=True, text=True)
    if p.returncode or "--segments" not in p.stdout:
        fail("--help")
    p = run(hclock, [d + "/in", "--out=" + d + "/o", "--min-latency", "25us", "--format=json"])
    r = json.loads(p.stdout)
    if any(n["inversions"] for n in r["nodes"]):
        fail("inversions with --min-latency")
    # durations follow the one rule of every tool (src/util/parse.h): a bare number is seconds
    for same in (["--min-latency", "2.5e-5"], ["--min-latency", "25000ns"],
                 ["--min-latency", "0.025ms"]):
        p2 = run(hclock, [d + "/in", "--out", d + "/o", "--format", "json"] + same)
        if p2.stdout != p.stdout:
            fail(f"{same} differs from --min-latency 25us")
    # 25000 s: every message is too fast (read as ns, few would be)
    p2 = run(hclock, [d + "/in", "--out", d + "/o", "--format", "json", "--min-latency", "25000"])
    recvs = sum(line.startswith("recv,") for f in os.listdir(d + "/in")
                for line in open(os.path.join(d, "in", f)))
    if sum(n["too_fast"] for n in json.loads(p2.stdout)["nodes"]) != recvs:
        fail(f"--min-latency 25000 (seconds): not all {recvs} messages too fast")
    seg = [run(hclock, [d + "/in", "--out", d + "/o", "--format", "json", "--segments", v]).stdout
           for v in ("1200", "20m", "1200s")]
    if seg[0] != seg[1] or seg[0] != seg[2]:
        fail("--segments 1200 is not 20 minutes")
    p = run(hclock, [d + "/in", "--out", d + "/o", "--reference", "zz"], expect_rc=1)
    if "zz" not in p.stderr:
        fail(f"unknown reference: {p.stderr!r}")


def repair_traces(out, seed, fast=300, slow=300, dur_s=60):
    """n0 <-> n1 and n0 <-> n2 with 20 us + exp(30 us) latency (align's tree: both via n0),
    n1 -> n2 only (no hop joins them) with 100-500 ns, far below the two ends' errors: many
    of those arrive before they left once aligned. After some receives on n2 a local event a
    few us later, before some an event at the very same local time (it must move with the
    receive). Returns {(node, local): true time}."""
    import random
    rnd = random.Random(seed)
    os.makedirs(out, exist_ok=True)
    T0 = 1_700_000_000_000_000_000
    params = [{"T0": T0, "o": 0 if k == 0 else rnd.randint(-5 * 10**9, 5 * 10**9),
               "s": 0 if k == 0 else rnd.randint(-80000, 80000), "q": 0} for k in range(3)]
    ev = [[] for _ in range(3)]
    dur = int(dur_s * 1e9)
    mid = 0
    for a, b in ((0, 1), (0, 2)):
        for _ in range(slow):
            src, dst = (a, b) if rnd.random() < 0.5 else (b, a)
            t = rnd.randrange(0, dur)
            lat = 20000 + int(rnd.expovariate(1 / 30000))
            mid += 1
            ev[src].append((t, "send", mid, f"n{dst}"))
            ev[dst].append((t + lat, "recv", mid, f"n{src}"))
    for i in range(fast):
        t = rnd.randrange(0, dur)
        lat = rnd.randrange(100, 500)
        mid += 1
        ev[1].append((t, "send", mid, "n2"))
        ev[2].append((t + lat, "recv", mid, "n1"))
        if i % 3 == 0:
            ev[2].append((t + lat + rnd.randrange(1, 3000), "compute", mid, "after"))
        elif i % 3 == 1:  # sorts before the receive: the same time, the line before
            ev[2].append((t + lat, "compute", mid, "tied"))
    truth = {}
    for k in range(3):
        ev[k].sort()
        with open(f"{out}/n{k}.csv", "w") as f:
            f.write("event,id,peer,time_ns\n")
            for t, name, i, peer in ev[k]:
                lt = gen_traces.clock(params[k], t)
                f.write(f"{name},{i},{peer},{lt}\n")
                truth[(f"n{k}", lt)] = gen_traces.clock(params[0], t)
    return truth


def repair(hclock, tmp):
    """--repair-order on traces whose alignment holds inversions: none after it, every move
    within the bounds and listed in --moved, the intervals kept, the truth inside them, the
    corrected traces in order; failures that name the pair and write nothing; bad options."""
    seed = 51
    d = os.path.join(tmp, "rep")
    truth = repair_traces(d + "/in", seed)
    base = [d + "/in", "--reference", "n0", "--format", "json"]
    p0 = run(hclock, base + ["--out", d + "/o0", "--bounds", d + "/b0.csv"])
    p1 = run(hclock, base + ["--out", d + "/o1", "--bounds", d + "/b1.csv", "--repair-order",
                             "--moved", d + "/m.csv"])
    if p0.returncode or p1.returncode:
        return
    tag = f"repair seed {seed}"
    r0, r1 = json.loads(p0.stdout), json.loads(p1.stdout)
    inv0 = sum(n["inversions"] for n in r0["nodes"])
    if not inv0 or "moved" in r0 or "moved" in r0["nodes"][0]:
        fail(f"{tag}: the premise: {inv0} inversions without --repair-order, keys {sorted(r0)}")
    if any(n["inversions"] for n in r1["nodes"]):
        fail(f"{tag}: inversions after the repair: {[n['inversions'] for n in r1['nodes']]}")
    moved = {n["node"]: (n["moved"], n["moved_max_ns"]) for n in r1["nodes"]}
    if r1["moved"] != sum(m for m, x in moved.values()) or \
            r1["moved_max_ns"] != max(x for m, x in moved.values()) or not r1["moved"] or \
            moved["n0"] != (0, 0) or moved["n1"] != (0, 0):
        fail(f"{tag}: moved {r1['moved']} max {r1['moved_max_ns']}, per node {moved}")
    # the bounds files row by row: what moved, by how much, the interval kept
    b0, b1 = read_csv(d + "/b0.csv")[1:], read_csv(d + "/b1.csv")[1:]
    diff, outside = [], 0
    for x, y in zip(b0, b1):
        node, lt = x[0], int(x[1])
        c0, dm0, dp0 = map(int, x[2:])
        c1, dm1, dp1 = map(int, y[2:])
        if y[:2] != x[:2] or not c0 - dm0 <= c1 <= c0 + dp0:
            fail(f"{tag}: {node} {lt}: repaired {c1} outside [{c0 - dm0}, {c0 + dp0}]")
        if c1 - dm1 != c0 - dm0 or c1 + dp1 != c0 + dp0:
            fail(f"{tag}: {node} {lt}: interval [{c0 - dm0}, {c0 + dp0}] became "
                 f"[{c1 - dm1}, {c1 + dp1}]")
        if c1 != c0:
            diff.append([node, str(lt), str(c0), str(c1), str(c1 - c0)])
        # 1 ns: the integer rounding of the true time
        if not c1 - dm1 - 1 <= truth[(node, lt)] <= c1 + dp1 + 1:
            outside += 1
    if outside:
        fail(f"{tag}: {outside} events with the truth outside the repaired bounds")
    m = read_csv(d + "/m.csv")
    if m[0] != ["node", "time_ns", "corrected_ns", "repaired_ns", "shift_ns"] or \
            m[1:] != diff or len(diff) != r1["moved"]:
        fail(f"{tag}: --moved lists {len(m) - 1} events, the bounds files differ in "
             f"{len(diff)}, the report says {r1['moved']}")
    # the corrected traces: the repaired times, in order; every receive at or after its send
    sent, got, lines = {}, {}, {}
    for k in range(3):
        rows = read_csv(f"{d}/o1/n{k}.csv")[1:]
        times = [int(x[3]) for x in rows]
        if times != [int(y[2]) for y in b1 if y[0] == f"n{k}"]:
            fail(f"{tag}: n{k}.csv times are not the repaired ones")
        if any(b < a for a, b in zip(times, times[1:])):
            fail(f"{tag}: n{k}.csv out of order")
        for x, t in zip(rows, times):
            if x[0] in ("send", "recv"):
                (sent if x[0] == "send" else got)[x[1]] = t
            lines.setdefault((f"n{k}", x[1]), []).append((x[2], t))
    late = [i for i in got if i in sent and got[i] < sent[i]]
    if late:
        fail(f"{tag}: {len(late)} receives before their sends in the output, e.g. id {late[0]}")
    tied = [v for (node, i), v in lines.items() if any(p == "tied" for p, t in v)]
    if not tied or any(len({t for p, t in v if p in ("tied", "n1")}) != 1 for v in tied):
        fail(f"{tag}: events of one local time parted in the output")
    # moved together: a receive moved with the event of its local time before it
    pairs = sum(1 for x, y in zip(diff, diff[1:]) if x[:2] == y[:2])
    if not pairs:
        fail(f"{tag}: no receive moved with an event of its local time")
    t = run(hclock, base[:-2] + ["--out", d + "/o2", "--repair-order"]).stdout
    c = run(hclock, base[:-1] + ["csv", "--out", d + "/o3", "--repair-order"]).stdout
    if f"repaired order: {r1['moved']} events moved" not in t or \
            not c.startswith("node,") or ",moved,moved_max_ns\n" not in c or \
            f"\nmoved,moved_max_ns\n{r1['moved']},{r1['moved_max_ns']}\n" not in c:
        fail(f"{tag}: table or CSV report without the repair's figures")
    print(f"ok {tag}: {inv0} inversions before, 0 after; {r1['moved']} events moved, at most "
          f"{r1['moved_max_ns']} ns; {pairs} of them with an event of their local time")

    # hulls intersect: the fallback line's inverted receives lie on the reference (no room at
    # all); the forward-only repair failed here ("the repair never moves an event back"). The
    # sends move back within their lower bounds instead: the fallback's bounds, not strict as
    # they are, are wide enough for that (each inversion is well inside them), so the repair
    # succeeds with negative shifts in --moved, the reference untouched
    q = os.path.join(tmp, "rep-q")
    gen_traces.generate(q, nodes=2, msgs=2000, seed=21, duration_s=4 * 3600,
                        quadratic=4000000, bcast=0)
    os.remove(q + "/truth.json")
    fq = os.path.join(tmp, "rep-fallback")
    os.makedirs(fq)
    qb = [q, "--reference", "n0", "--format", "json"]
    p0 = run(hclock, qb + ["--out", fq + "/o0", "--bounds", fq + "/b0.csv"])
    p1 = run(hclock, qb + ["--out", fq + "/o1", "--bounds", fq + "/b1.csv", "--repair-order",
                           "--moved", fq + "/m.csv"])
    if not p0.returncode and not p1.returncode:
        r0, r1 = json.loads(p0.stdout), json.loads(p1.stdout)
        inv0 = sum(n["inversions"] for n in r0["nodes"])
        rows = read_csv(fq + "/m.csv")[1:]
        back = [int(x[4]) for x in rows if int(x[4]) < 0]
        b0, b1 = read_csv(fq + "/b0.csv")[1:], read_csv(fq + "/b1.csv")[1:]
        outside = [(x, y) for x, y in zip(b0, b1)
                   if not int(x[2]) - int(x[3]) <= int(y[2]) <= int(x[2]) + int(x[4]) or
                   int(y[2]) - int(y[3]) != int(x[2]) - int(x[3]) or
                   int(y[2]) + int(y[4]) != int(x[2]) + int(x[4])]
        if "hulls intersect" not in p1.stderr or not inv0 or \
                any(n["inversions"] for n in r1["nodes"]) or not back or \
                any(x[0] != "n1" for x in rows) or len(rows) != r1["moved"] or \
                any(int(x[3]) - int(x[2]) != int(x[4]) for x in rows) or \
                r1["moved_max_ns"] != max(abs(int(x[4])) for x in rows) or outside or \
                [x for x in b0 if x[0] == "n0"] != [x for x in b1 if x[0] == "n0"]:
            fail(f"{tag}: fallback: {inv0} inversions before, "
                 f"{[n['inversions'] for n in r1['nodes']]} after; {len(rows)} moved "
                 f"({len(back)} back), report {r1['moved']} max {r1['moved_max_ns']}; "
                 f"{len(outside)} outside their bounds, e.g. {outside[:1]}")
        else:
            print(f"ok repair (fallback, inversions into the reference): {inv0} inversions "
                  f"before, 0 after; {len(rows)} events moved on n1, {len(back)} of them back "
                  f"(by up to {-min(back)} ns), the largest move {r1['moved_max_ns']} ns")

    # failures: one line naming the pair, exit 1, nothing written
    f2 = os.path.join(tmp, "rep-fail")
    os.makedirs(f2)
    for name, args, want in (
            ("latency", [d + "/in", "--reference", "n0", "--min-latency", "60us"],
             ["message from n", ") to n", "past its latest time", "--min-latency, were wrong"]),
            # the fallback's case with a latency its bounds cannot hold
            ("fallback latency", qb[:3] + ["--min-latency", "1ms"],
             ["message from n", ") to n", "past its latest time", "were wrong"])):
        p = run(hclock, args + ["--out", f2 + "/out", "--bounds", f2 + "/b.csv", "--moved",
                                f2 + "/m.csv", "--repair-order"], expect_rc=1)
        lines = p.stderr.strip().splitlines()
        if len([x for x in lines if "warning:" not in x]) != 1 or \
                not all(w in lines[-1] for w in want):
            fail(f"{tag}: {name}: stderr {p.stderr!r}, expected one line with {want}")
        if os.listdir(f2):
            fail(f"{tag}: {name}: failed repair wrote {os.listdir(f2)}")
        print(f"ok repair fails ({name}): {lines[-1][:160]}...")
    # bad command lines
    for args, want in ((["--moved", f2 + "/m.csv"], "--repair-order"),
                       (["--repair-order=yes"], "--repair-order")):
        p = run(hclock, [d + "/in", "--out", f2 + "/out"] + args, expect_rc=2)
        if want not in p.stderr or len(p.stderr.strip().splitlines()) != 1 or os.listdir(f2):
            fail(f"{args}: stderr {p.stderr!r}")


def main():
    hclock, group = sys.argv[1], sys.argv[2]
    tmp = tempfile.mkdtemp(prefix="hclock-align-")
    try:
        {"synthetic": synthetic, "nonlinear": nonlinear, "golden": golden, "strict": strict,
         "badinput": badinput, "options": options, "repair": repair}[group](hclock, tmp)
    finally:
        if not failures:
            shutil.rmtree(tmp)
        else:
            print("inputs kept in", tmp)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
