#!/usr/bin/env python3
"""raw_align_test.py HCLOCK RUN MPIEXEC MINI - the tracer's raw files as an input of hclock align
(format "raw", src/align/reader_raw.c).

MINI (examples/allreduce_mini) runs traced on 2 ranks as 2 emulated processes (1 s offsets,
100 ppm skew), for seeds 3 and 11. Then `hclock align DIR/raw/rank.* --reference rank.0` must
  - read both files as format raw and match every message the tracer paired (the report's
    message count equals the summary's "messages paired"; no warning of records without a
    partner), with 0 inversions (one pair: the hull's constraints hold every message);
  - write OUTDIR/rank.N equal to the input but for the global times, which `hclock trace
    --convert` reads back with 0 inversions;
  - agree with the tracer: the emulation's reference is rank 0 and the tracer's global clock
    follows it within its own true error E (the --event-truth line's max), so at every event of
    rank 1 the tracer's t_g lies within [corrected - delta_minus - E, corrected + delta_plus + E]
    (--bounds CSV; align's bounds are strict for quality hull).
A cut file (the last record half written) is read up to its last whole record with a warning;
a file cut inside its header, or with a garbage record kind, gives one line naming it, exit 1.
"""
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tracecheck
from tracecheck import check, summary_num

hc, run, mpiexec, mini = sys.argv[1:5]
HEADER, REC = 320, 64


def records(path):
    """[(kind, t_g, t_l, t2_g, t2_l)] of a raw file (util/record.h), the trailer excluded"""
    b = open(path, "rb").read()
    names_bytes = struct.unpack_from("<I", b, 20)[0]
    out, off = [], HEADER + names_bytes
    while off + REC <= len(b) and b[off:off + 8] != b"HCLKEND1":
        k = b[off]
        t_g, t_l, t2_g, t2_l = struct.unpack_from("<4q", b, off + 24)
        out.append((k, t_g, t_l, t2_g, t2_l))
        off += REC
    return out


tmp = tempfile.mkdtemp(prefix="hclock-raw-align.")
for seed in (3, 11):
    d = os.path.join(tmp, f"t{seed}")
    p, paired, e = tracecheck.traced_truth(hc, run, mpiexec, 2, d,
                                           f"offset=1,skew=100e-6,seed={seed}",
                                           [mini, "60", "20"], f"seed {seed}")
    tol = e if e is not None else 1000
    raw = [os.path.join(d, "raw", f"rank.{r}") for r in (0, 1)]
    out, bounds = os.path.join(tmp, f"al{seed}"), os.path.join(tmp, f"b{seed}.csv")
    al = subprocess.run([hc, "align"] + raw + ["--reference", "rank.0", "--out", out,
                                               "--bounds", bounds], capture_output=True, text=True)
    check(al.returncode == 0, f"seed {seed}: hclock align rank.0 rank.1: exit {al.returncode} "
          f"{al.stderr.strip()[-300:]}")
    msgs = re.search(r"messages: (\d+)", al.stdout)
    check(msgs is not None and paired and int(msgs.group(1)) == paired and
          "no partner" not in al.stderr,
          f"seed {seed}: every message matched ({msgs.group(1) if msgs else None} of {paired}) "
          f"{al.stderr.strip()}")
    rows = [ln.split() for ln in al.stdout.splitlines() if ln.startswith("rank.")]
    head = next((ln.split() for ln in al.stdout.splitlines() if ln.startswith("node ")), [])
    col = head.index("inversions") if "inversions" in head else 0
    inv = [int(r[col]) for r in rows]
    check(len(rows) == 2 and inv == [0, 0] and rows[1][2] == "hull",
          f"seed {seed}: 2 nodes, quality hull, 0 inversions after alignment" +
          ("" if inv == [0, 0] else al.stdout))
    # the tracer's global times within align's bounds (plus the tracer's own true error)
    ev = [ln.split(",") for ln in open(bounds).read().splitlines()[1:] if ln.startswith("rank.1,")]
    recs = records(raw[1])
    by_tl = {}
    for k, t_g, t_l, t2_g, t2_l in recs:
        if k not in (5, 6):  # REC_DROP, REC_BOUND: no events
            by_tl.setdefault(t_l, t_g)
    worst, outside = 0, 0
    for _, t, c, dm, dp in ev:
        g = by_tl[int(t)]
        e = g - int(c)
        worst = max(worst, abs(e))
        outside += not (-float(dm) - tol <= e <= float(dp) + tol)
    check(len(ev) == sum(1 for r in recs if r[0] not in (5, 6)) and outside == 0,
          f"seed {seed}: tracer's global time within align's bounds + {tol} ns at all {len(ev)} "
          f"events of rank.1 ({outside} outside; largest difference {worst} ns)")
    # the corrected files: the input with only t_g/t2_g changed (and the tracer's clock bounds,
    # REC_BOUND's and the messages', zeroed: unknown for the aligned clock), readable by --convert
    pairs = [(a, b) for r in (0, 1)
             for a, b in zip(records(raw[r]), records(os.path.join(out, f"rank.{r}")))]
    same = all(a[0] == b[0] and a[2] == b[2] and (a[4] == b[4] if a[0] != 6 else b[1:] == (0, a[2], 0, 0))
               for a, b in pairs) and \
        all(b[3] == 0 for a, b in pairs if a[0] in (2, 3)) and any(a[0] == 6 for a, _ in pairs)
    os.makedirs(os.path.join(tmp, f"c{seed}"))
    shutil.copytree(out, os.path.join(tmp, f"c{seed}", "raw"))
    cv = subprocess.run([hc, "trace", "--convert", os.path.join(tmp, f"c{seed}")],
                        capture_output=True, text=True)
    check(same and cv.returncode == 0 and summary_num(cv.stderr, "inversions") == 0 and
          summary_num(cv.stderr, "messages paired") == paired,
          f"seed {seed}: OUTDIR/rank.N differ from the input in global times only and convert "
          f"with 0 inversions (exit {cv.returncode})" + ("" if cv.returncode == 0 else cv.stderr))

# damaged inputs: one line naming the file
d = os.path.join(tmp, "t3", "raw")
data = open(os.path.join(d, "rank.1"), "rb").read()
names_bytes = struct.unpack_from("<I", data, 20)[0]
for what, blob, ok in (("cut in a record", data[:HEADER + names_bytes + (len(data) // REC // 2) * REC + 17], True),
                       ("cut in the header", data[:100], False),
                       ("garbage record kind", data[:HEADER + names_bytes + 5 * REC] + b"\x09" +
                        data[HEADER + names_bytes + 5 * REC + 1:], False)):
    bad = os.path.join(tmp, "bad", "rank.1")
    os.makedirs(os.path.dirname(bad), exist_ok=True)
    open(bad, "wb").write(blob)
    al = subprocess.run([hc, "align", os.path.join(d, "rank.0"), bad, "--out",
                         os.path.join(tmp, "badout")], capture_output=True, text=True)
    lines = al.stderr.strip().splitlines()
    if ok:
        check(al.returncode == 0 and "partial record" in al.stderr and "no partner" in al.stderr,
              f"{what}: read with a warning ({al.returncode}: {al.stderr.strip()[-300:]})")
    else:
        check(al.returncode == 1 and len(lines) == 1 and bad in lines[0],
              f"{what}: one line naming the file, exit 1 ({al.returncode}: {al.stderr.strip()})")
tracecheck.finish(tmp)
