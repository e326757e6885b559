#!/usr/bin/env python3
"""hclock specs --explain SPEC (docs/check.md, "Explaining a spec").

Without a launcher: for specs of every kind, the lines that say what runs (fit points,
ping-pongs, span, estimator, levels, cont's keys with their defaults filled in, auto's rules)
and, for auto, that nothing was measured and how to measure; bad specs and bad command lines
get one line on stderr, exit 2, nothing on stdout. With --mpirun/--mpiexec: under 2 and 3
processes auto(...) (alone and inside cont and h2) reports a real measurement: the pairs of the
tree, a worst pair among them, its round trips, the choice and a finite predicted error, the
bursts within the budget's quarter plus the groups the burst could not do without; a spec
without auto measures nothing; a bad spec under mpirun gets one line (not one per rank) and
every rank exits 2. The checks bite: the one-process run must not claim a measurement.
"""
import argparse, re, subprocess, sys

ap = argparse.ArgumentParser()
ap.add_argument("hclock")
ap.add_argument("--mpirun")
ap.add_argument("--mpiexec")
a = ap.parse_args()
failed = 0


def run(spec, np=0, extra=()):
    cmd = ([a.mpirun, a.mpiexec, str(np)] if np else []) + [a.hclock, "specs", *extra]
    if spec is not None:
        cmd += ["--explain", spec]
    return cmd, subprocess.run(cmd, capture_output=True, text=True, timeout=300)


def expect(cond, what, cmd, p):
    global failed
    print(f"{'ok  ' if cond else 'FAIL'} {what}: {' '.join(cmd)}")
    if not cond:
        print(f"  exit {p.returncode}\n  stdout: {p.stdout[-3000:]}\n  stderr: {p.stderr[-2000:]}")
        failed += 1


if not a.mpirun:
    cases = {
        "hca3/100/hull/20/span=0.3": [r"100 fit points of 20 ping-pongs", r"estimator hull",
                                      r"spread evenly over 0\.3 s", r"bounds: strict",
                                      r"nothing to measure"],
        "jk/10/skampi/5/ri": [r"10 fit points of 5 ping-pongs", r"back to back",
                              r"intercept re-measured", r"bounds: none"],
        "skampi/min/7": [r"7 ping-pongs, offset estimator min", r"no drift model"],
        "cont(h2(hca3/100/hull/20/span=0.3,prop),n=4,drive=progress)":
            [r"inter-node level", r"intra-node level", r"prop", r"window=2s \(default\)",
             r"n=4: ", r"drive=progress: ", r"stale=1\.25s \(default\)",
             r"min=0\.025s \(default\), max=0\.125s \(default\)"],
        "auto(0.3s)": [r"budget 0\.3 s, horizon 10 s", r"up to 48 groups of 16",
                       r"capped at 1/4 of the budget", r"the worst pair", r"estimator: hull",
                       r"not measured: one process.*mpirun -np 2"],
        "cont(auto(100ms,horizon=2s))": [r"auto\(0\.1s,horizon=2s\)", r"horizon 2 s",
                                         r"not measured"],
    }
    for spec, pats in cases.items():
        cmd, p = run(spec)
        miss = [x for x in pats if not re.search(x, p.stdout)]
        expect(p.returncode == 0 and not miss and not p.stderr,
               f"explains {spec} (missing: {miss})", cmd, p)
        expect("measured on this job" not in p.stdout, f"no measurement claimed for {spec}",
               cmd, p)
    for spec in ["auto(x)", "auto(0.3s", "hca3/1", "cont(none)", "h2(prop,prop)", "nope", ""]:
        cmd, p = run(spec)
        lines = p.stderr.strip().splitlines()
        expect(p.returncode == 2 and len(lines) == 1 and not p.stdout and
               lines[0].startswith("hclock specs: "), f"refuses {spec!r} in one line", cmd, p)
    for extra in (["--explain"], ["--markdown", "--explain", "auto(1s)"], ["--bogus"]):
        cmd, p = run(None, extra=extra)
        expect(p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1 and not p.stdout,
               f"refuses {' '.join(extra)} in one line", cmd, p)
    sys.exit(1 if failed else 0)

num = r"([0-9.e+-]+)"
for np, spec, budget in ((2, "auto(0.3s)", 0.3), (3, "cont(auto(0.2s))", 0.2),
                         (3, "h2(hca3/20/skampi/5,auto(0.2s))", 0.2)):
    cmd, p = run(spec, np)
    m = re.search(r"measured on this job \((\d+) processes, (\d+) pairs?\): bursts took " + num +
                  r" s .* slowest group of 16 ping-pongs " + num + " s", p.stdout)
    w = re.search(r"worst pair: ranks (\d+)-(\d+), (\d+) groups \((\d+) made, (\d+) through "
                  r"a stall\): round trips floor " + num, p.stdout)
    c = re.search(r"choice: hca3/(\d+)/(hull|skampi)/(\d+)", p.stdout)
    e = re.search(r"predicted error 10 s after the sync: " + num + " ns", p.stdout)
    ok = p.returncode == 0 and m and w and c and e
    if ok:
        procs, pairs, burst, slowest = int(m[1]), int(m[2]), float(m[3]), float(m[4])
        ref, client, groups = int(w[1]), int(w[2]), int(w[3])
        made, stalled = int(w[4]), int(w[5])
        pred = float(e[1])
        # the tree: every rank but 0 is the client of one pair, its parent the reference
        top = 1 << (np.bit_length() - 1)
        parent = client - top if client >= top else client & (client - 1)
        ok = (procs == np and pairs == np - 1 and 0 < client < np and ref == parent and
              8 <= groups <= 48 and groups <= made <= 72 and 0 <= stalled <= made and
              (groups == made - stalled or groups == 48 or stalled > made - 8) and
              0 < pred < float("inf") and
              burst <= budget / 4 + (groups == 8) * 8 * slowest + slowest)
    expect(bool(ok), f"np={np} {spec}: measured, the worst pair of the tree, a choice and its "
           f"prediction", cmd, p)
cmd, p = run("hca3/10/skampi/3", 2)
expect(p.returncode == 0 and "nothing to measure" in p.stdout and
       "measured on this job" not in p.stdout, "np=2, no auto: nothing measured", cmd, p)
cmd, p = run("auto(0.3s)x", 2)
expect(p.returncode != 0 and p.stderr.count("hclock specs: ") == 1 and not p.stdout,
       "np=2: a bad spec, one line", cmd, p)
sys.exit(1 if failed else 0)
