#!/usr/bin/env python3
"""test_tool.py - tool tests of `hclock align` on generated traces of known clocks.

usage: test_tool.py HCLOCK GROUP   (GROUP: synthetic, nonlinear, golden, badinput, options)
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
        if set(r) != {"tool", "reference", "nodes", "bcast_diff_delay_ns"} or \
                r["tool"] != "hclock align":
            fail(f"{tag}: JSON keys {sorted(r)}")
        if ref and r["reference"] != ref:
            fail(f"{tag}: reference {r['reference']}, asked for {ref}")
        for n in r["nodes"]:
            if set(n) != {"node", "a0_ns", "a1", "quality", "bound_mean_ns", "bound_max_ns",
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
        p = run(hclock, [d + "/a.csv", d + "/b.csv", "--out", d + "/out", "--bounds",
                         d + "/bounds.csv"], expect_rc=1)
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


def main():
    hclock, group = sys.argv[1], sys.argv[2]
    tmp = tempfile.mkdtemp(prefix="hclock-align-")
    try:
        {"synthetic": synthetic, "nonlinear": nonlinear, "golden": golden,
         "badinput": badinput, "options": options}[group](hclock, tmp)
    finally:
        if not failures:
            shutil.rmtree(tmp)
        else:
            print("inputs kept in", tmp)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
