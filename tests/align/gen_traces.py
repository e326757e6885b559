#!/usr/bin/env python3
"""gen_traces.py - synthetic per-node CSV traces of known clocks, for hclock align tests.

Node k's clock reads  L_k(t) = T0 + o_k + t + s_k * t / 1e9 + q_k * t^2 / 1e27  (integers, ns)
at true time t ns since the start; s_k in ppb, q_k in 1e-27/ns, |q_k| in [Q/2, Q] for --quadratic Q. Messages go along the edges of
a topology (star, chain, random), in both directions, with latency >= lat0 plus exponential
jitter; broadcasts reach every node within a few microseconds. Writes DIR/nK.csv and
DIR/truth.json (clock parameters, and for every event its true time) for check_truth().
"""
import argparse
import json
import os
import random


def clock(p, t):
    return p["T0"] + p["o"] + t + (p["s"] * t) // 10**9 + (p["q"] * t * t) // 10**27


def edges_of(topology, n, rnd):
    if topology == "star":
        return [(0, k) for k in range(1, n)]
    if topology == "chain":
        return [(k, k + 1) for k in range(n - 1)]
    if topology == "full":
        return [(a, b) for a in range(n) for b in range(a + 1, n)]
    # random: a random spanning tree plus a few extra edges
    order = list(range(n))
    rnd.shuffle(order)
    e = set()
    for i in range(1, n):
        a, b = order[i], order[rnd.randrange(i)]
        e.add((min(a, b), max(a, b)))
    for _ in range(n // 2):
        a, b = rnd.sample(range(n), 2)
        e.add((min(a, b), max(a, b)))
    return sorted(e)


def generate(out, nodes=2, topology="star", msgs=500, seed=1, duration_s=60.0, realtime=True,
             quadratic=0, bcast=50, lat0=20000, jitter=30000, others=True):
    rnd = random.Random(seed)
    os.makedirs(out, exist_ok=True)
    T0 = 1_700_000_000_000_000_000 if realtime else 0
    dur = int(duration_s * 1e9)
    params = []
    for k in range(nodes):
        params.append({"T0": T0, "o": 0 if k == 0 else rnd.randint(-5 * 10**9, 5 * 10**9),
                       "s": 0 if k == 0 else rnd.randint(-80000, 80000),
                       "q": 0 if k == 0 else rnd.choice((-1, 1)) * rnd.randint(quadratic // 2, quadratic)})
    ev = [[] for _ in range(nodes)]  # (true t, event, id, peer)
    mid = 0
    for a, b in edges_of(topology, nodes, rnd):
        for _ in range(msgs):
            src, dst = (a, b) if rnd.random() < 0.5 else (b, a)
            t = rnd.randrange(0, dur)
            lat = lat0 + int(rnd.expovariate(1.0 / jitter))
            mid += 1
            ev[src].append((t, "send", mid, f"n{dst}"))
            ev[dst].append((t + lat, "recv", mid, f"n{src}"))
    for i in range(bcast):
        t = rnd.randrange(0, dur)
        for k in range(nodes):
            ev[k].append((t + lat0 + rnd.randrange(0, 5000), "bcast", 100000000 + i, ""))
    if others:
        for k in range(nodes):
            for i in range(20):
                ev[k].append((rnd.randrange(0, dur), "compute", i, "x"))
    truth = {"params": params, "events": {}}
    for k in range(nodes):
        ev[k].sort()
        rows = []
        with open(os.path.join(out, f"n{k}.csv"), "w") as f:
            f.write("event,id,peer,time_ns\n")
            for t, name, i, peer in ev[k]:
                lt = clock(params[k], t)
                f.write(f"{name},{i},{peer},{lt}\n")
                rows.append([lt, t])
        truth["events"][f"n{k}"] = rows
    with open(os.path.join(out, "truth.json"), "w") as f:
        json.dump(truth, f)
    return truth


def check_truth(truth, bounds_csv, reference):
    """For every row of a --bounds file: is the true reference time inside the bounds?
    Returns (rows, outside, mean |error|, mean bound)."""
    p_ref = truth["params"][int(reference[1:])]
    true_t = {}
    for node, rows in truth["events"].items():
        for lt, t in rows:
            true_t[(node, lt)] = t
    n = out = 0
    err = bnd = 0.0
    with open(bounds_csv) as f:
        next(f)
        for line in f:
            node, lt, c, dm, dp = line.strip().split(",")
            expect = clock(p_ref, true_t[(node, int(lt))])
            c, dm, dp = int(c), float(dm), float(dp)
            n += 1
            # 1 ns: the integer rounding of corrected and true times
            d = expect - c  # an int: 1.7e18 does not fit a double exactly
            if not (-dm - 1 <= d <= dp + 1):
                out += 1
            err += abs(d)
            bnd += max(dm, dp)
    return n, out, err / max(n, 1), bnd / max(n, 1)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--nodes", type=int, default=2)
    ap.add_argument("--topology", default="star", choices=["star", "chain", "random", "full"])
    ap.add_argument("--msgs", type=int, default=500, help="messages per edge")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--duration", type=float, default=60.0, help="seconds")
    ap.add_argument("--quadratic", type=int, default=0, help="max |q| in 1e-27/ns")
    ap.add_argument("--bcast", type=int, default=50)
    ap.add_argument("--no-realtime", action="store_true")
    a = ap.parse_args()
    generate(a.out, a.nodes, a.topology, a.msgs, a.seed, a.duration, not a.no_realtime,
             a.quadratic, a.bcast)
