#!/usr/bin/env python3
"""waits_otf2_test.py HCLOCK RUN MPIEXEC WAITS_MINI - hclock waits, the wait-state analysis on
an OTF2 archive, against the known answers of examples/waits_mini.c: every pattern made to wait
D = 40 ms on purpose, 2 rounds, on 4 ranks as 2 emulated nodes (1 s offsets, 100 ppm skews,
seed 1), traced with --event-truth as waits_known_test.py does. Then, on D/traces.otf2:
  - without --align: the same instances per pattern as D/profile.json's wait_states (the
    tracer's own analysis of the raw records), the estimates equal within 2 ns an instance
    (OTF2 keeps the tracer's ns), the same messages, collectives and calls; none proven, every
    call without bounds, and the note line says so;
  - --align --reference MPI_Rank_0 --truth D: every pattern has at least half its injected
    instances, each with its truth; no instance's true waiting time outside its interval
    (truth.outside 0, truth.instances > 0, the truth of 4 processes); each pattern's true
    total at least half of its injected waits and inside the totals' [proven, upper]; the
    bounds' widths printed; -o writes comm_matrix.svg (a cell for each pair that sent) and
    wait_states.svg;
  - the archive hclock align wrote (--reference MPI_Rank_0), aligned again by hclock waits
    --align: the same instances per pattern as the first --align run, each pattern's estimate
    inside the first run's [proven, upper];
  - the check bites: rank 1's truth moved by D/2 (a truth file rewritten, the other ranks'
    as they were) gives instances whose truth lies outside their interval;
  - bad input: one line on stderr and exit 2 (no archive, not OTF2, a directory without one,
    an unknown --reference, --reference without --align, a missing --truth directory, one
    without truth files, no ARCHIVE, an unknown option); an archive whose event file was cut
    short: one line, exit 1.
Exits 1 if any check failed (files kept), 77 when hclock waits, hclock align, libotf2 or the
program is not there."""
import glob
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tracecheck  # noqa: E402
from tracecheck import check  # noqa: E402

hc, run, mpiexec, mini = sys.argv[1:5]
D_MS, ROUNDS, NP = 40, 2, 4
EMU = "offset=1,skew=100e-6,ranks-per-node=2,seed=1"

for sub in ("waits", "align"):
    h = subprocess.run([hc, sub, "--help"], capture_output=True, text=True)
    if h.returncode != 0:
        print(f"skip: hclock {sub} not built ({h.stderr.strip()[-120:]})")
        sys.exit(77)
if not os.access(mini, os.X_OK):
    print(f"skip: {mini} not built")
    sys.exit(77)


def waits(*args):
    """hclock waits ARGS: (exit status, stdout, stderr)"""
    p = subprocess.run([hc, "waits"] + list(args), capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def waits_json(what, *args):
    """hclock waits ARGS --json parsed (None after a failed check)"""
    rc, out, err = waits(*args, "--json")
    try:
        ws = json.loads(out) if rc == 0 else None
    except ValueError as e:
        ws, err = None, f"{err} (JSON: {e})"
    check(ws is not None, f"{what}: hclock waits {' '.join(args)} --json: exit {rc}"
          + ("" if ws is not None else f" {err.strip()[-300:]}"))
    return ws, err


def patterns(ws):
    return {p["pattern"]: p for p in ws["patterns"]}


tmp = tempfile.mkdtemp(prefix="hclock-waits-otf2.")
d = os.path.join(tmp, "trace")
p = tracecheck.launch(run, mpiexec, NP, [hc, "trace", "-o", d, "--emulate", EMU,
                                         "--event-truth", "--", mini, str(D_MS), str(ROUNDS)], 180)
check(p.returncode == 0 and "waits_mini: " in p.stdout,
      f"traced run, exit {p.returncode}" + ("" if p.returncode == 0 else p.stderr[-400:]))
otf2 = os.path.join(d, "traces.otf2")
if p.returncode == 0 and not os.path.exists(otf2):
    print("skip: no traces.otf2 (hclock built without libotf2)")
    sys.exit(77)
try:
    with open(os.path.join(d, "profile.json")) as f:
        prof = json.load(f)["wait_states"]
except (OSError, ValueError, KeyError) as e:
    prof = None
    check(False, f"D/profile.json has wait_states ({e})")

# ---- the archive's times as they are: the tracer's own analysis again ----
ws, _ = waits_json("no bounds", otf2)
if ws and prof:
    pp, pw = patterns(prof), patterns(ws)
    same = [(k, pp[k]["instances"], pw.get(k, {}).get("instances"), pp[k]["time_ns"],
             pw.get(k, {}).get("time_ns")) for k in pp]
    check(all(a == b and c is not None and e is not None and abs(c - e) <= 2 * a
              for _, a, b, c, e in same),
          f"no bounds: the instances and estimates of profile.json's wait_states "
          f"(pattern, instances there, here, time_ns there, here: {same})")
    keys = ("messages", "collectives", "calls")
    check(all(prof[k] == ws[k] for k in keys), f"no bounds: the same messages, collectives "
          f"and calls ({[(k, prof[k], ws[k]) for k in keys]})")
    check(all(x["proven"] == 0 and x["proven_ns"] == 0 for x in ws["patterns"]) and
          ws["calls_without_bounds"] == ws["calls"] > 0 and
          all(x["upper_ns"] is None for x in ws["patterns"] if x["instances"]),
          f"no bounds: none proven, all {ws['calls']} calls without bounds, no upper end")
rc, out, err = waits(otf2)
check(rc == 0 and re.search(r"^# hclock waits .*without bounds.*none proven", out, re.M) and
      "# wait states" in out, f"no bounds, text: the note line and the table (exit {rc}) "
      f"{out[:300]} {err[-200:]}")

# ---- aligned, with the truth ----
plots = os.path.join(tmp, "plots")
wa, err = waits_json("aligned", otf2, "--align", "--reference", "MPI_Rank_0", "--truth", d,
                     "-o", plots)
m = re.search(r"width mean (\d+) ns, max (\d+) ns; (\d+) times without", err)
check(m is not None and int(m.group(3)) == 0, f"aligned: the note line on the bounds' widths "
      f"({err.strip()[-300:]})")
if m:
    print(f"note: the bounds hclock align gave: {int(m.group(1)) / 1e3:.1f} us wide on average, "
          f"{int(m.group(2)) / 1e3:.1f} us at most")
if wa:
    t = wa.get("truth", {})
    check(t.get("processes") == NP and t.get("unreadable") == 0 and t.get("instances", 0) > 0
          and t.get("outside") == 0,
          f"aligned: every instance's true waiting time inside its interval: "
          f"{t.get('instances')} instances with the truth of {t.get('processes')} processes, "
          f"{t.get('outside')} outside {t.get('first_outside', [])[:3]}")
    tracecheck.waits_injected(wa, D_MS, ROUNDS, "aligned")
    titles = []
    for name in ("comm_matrix.svg", "wait_states.svg"):
        try:
            root = ET.parse(os.path.join(plots, name)).getroot()
            if name == "comm_matrix.svg":
                titles = [e.text or "" for e in root.iter("{http://www.w3.org/2000/svg}title")]
            check(True, f"aligned: -o: {name} parses")
        except (OSError, ET.ParseError) as e:
            check(False, f"aligned: -o: {name} parses ({e})")
    pairs = {(int(a), int(b)) for a, b in
             (re.match(r"\D*(\d+)\D+(\d+)", s).groups() for s in titles
              if re.match(r"\D*\d+\D+\d+.*message", s))}
    want = {(1, 0), (0, 1), (2, 0), (3, 2), (1, 2), (2, 1), (2, 3)}
    check(want <= pairs, f"aligned: comm_matrix.svg has a cell for each pair that sent "
          f"({sorted(pairs)})")

# ---- the archive hclock align wrote, aligned again ----
out_dir = os.path.join(tmp, "aligned")
al = subprocess.run([hc, "align", otf2, "--reference", "MPI_Rank_0", "--out", out_dir],
                    capture_output=True, text=True)
found = glob.glob(os.path.join(out_dir, "*", "traces.otf2"))
check(al.returncode == 0 and len(found) == 1, f"hclock align writes the corrected archive "
      f"(exit {al.returncode}, {found}) {al.stderr.strip()[-300:]}")
if found and wa:
    w2, err = waits_json("aligned twice", found[0], "--align")
    if w2:
        p1, p2 = patterns(wa), patterns(w2)
        rows = [(k, p1[k]["instances"], p2[k]["instances"], p1[k]["proven_ns"],
                 p2[k]["time_ns"], p1[k]["upper_ns"]) for k in p1]
        check(all(a == b and lo <= e <= (hi if hi is not None else float("inf"))
                  for _, a, b, lo, e, hi in rows),
              f"aligned twice: the same instances per pattern, each estimate inside the first "
              f"run's [proven, upper] (pattern, instances first, again, proven, estimate, "
              f"upper: {rows})")
        print(f"note: aligned again: {err.strip()[-200:]}")

# ---- the check bites: rank 1's truth moved by D/2 ----
bite = os.path.join(tmp, "bite")
os.makedirs(os.path.join(bite, "raw"))
for r in range(NP):
    src, dst = os.path.join(d, "raw", f"truth.{r}"), os.path.join(bite, "raw", f"truth.{r}")
    if r != 1:
        shutil.copy(src, dst)
        continue
    with open(src, "rb") as f:
        data = bytearray(f.read())
    head = struct.calcsize("<8siIQQ")
    count = struct.unpack_from("<8siIQQ", data, 0)[3]
    for i in range(count):
        o = head + 24 * i
        g, lo, hi = struct.unpack_from("<qqq", data, o)
        struct.pack_into("<qqq", data, o, g, lo + D_MS * 500000, hi + D_MS * 500000)
    with open(dst, "wb") as f:
        f.write(data)
wb, _ = waits_json("bite", otf2, "--align", "--reference", "MPI_Rank_0", "--truth", bite)
tb = (wb or {}).get("truth", {})
check(tb.get("outside", 0) > 0, f"the check bites: rank 1's truth moved by {D_MS / 2} ms, "
      f"{tb.get('outside')} of {tb.get('instances')} instances with their truth outside")

# ---- bad input ----
garbage = os.path.join(tmp, "garbage.otf2")
with open(garbage, "w") as f:
    f.write("not an archive\n")
empty = os.path.join(tmp, "notruth")
os.makedirs(os.path.join(empty, "raw"))
bad = [
    ([os.path.join(tmp, "nothing")], "no OTF2 archive"),
    ([garbage], "not a readable OTF2 archive"),
    ([os.path.join(d, "raw")], "no OTF2 archive"),
    ([otf2, "--align", "--reference", "MPI_Rank_9"], "no such process"),
    ([otf2, "--reference", "MPI_Rank_0"], "needs --align"),
    ([otf2, "--truth", os.path.join(tmp, "nothing")], "--truth"),
    ([otf2, "--truth", empty], "no readable truth file"),
    ([], "needs one ARCHIVE"),
    ([otf2, "--bogus"], "unknown option"),
]
for args, want in bad:
    rc, out, err = waits(*args)
    lines = err.strip().splitlines()
    check(rc == 2 and len(lines) == 1 and want in err and not out,
          f"bad input {args[1:] or args}: exit {rc}, one line naming it ({lines})")
cut = os.path.join(tmp, "cut")
shutil.copytree(d, cut, ignore=shutil.ignore_patterns("raw", "parts"))
evts = sorted(glob.glob(os.path.join(cut, "traces", "*.evt")))
if evts:
    os.truncate(evts[1], 300)
rc, out, err = waits(os.path.join(cut, "traces.otf2"))
lines = err.strip().splitlines()
check(rc == 1 and len(lines) == 1 and
      ("give a complete OTF2 archive" in err or "does not know" in err),
      f"an event file cut short: exit {rc}, one line ({lines})")
tracecheck.finish(tmp)
