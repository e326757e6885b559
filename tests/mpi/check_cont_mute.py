#!/usr/bin/env python3
"""check_cont_mute.py HCLOCK MPIRUN_SH MPIEXEC - a continuous clock whose exchanges all fail
is reported: with the reference (rank 0) answering no ping (HCLOCK_FAULT=rank=0,at=mute),
hclock check still exits 0, its JSON says the one other process made no exchange
(cont.failed_processes 1, timeouts > 0), and one warning line on stderr says it ran on its
one-shot model; the same run without the fault has exchanges on every process, no failure and
no warning (the check bites both ways); hclock drift's stderr line "continuous clock: N-M
exchanges per process, T timeouts" says the same, with and without the fault. Prints one line
per check; exits 1 if any failed."""
import json
import re
import sys

import checkargs

hc, run, mpiexec = sys.argv[1:4]
failures = 0


def check(ok, what):
    global failures
    print(("ok   " if ok else "FAIL ") + what)
    failures += not ok


def launch(fault):
    p = checkargs.run_fault([run, mpiexec, "2", hc, "check", "--wait", "0,1", "--format",
                             "json", "--emulate", "offset=1,skew=100e-6,seed=3"], fault, 180)
    try:
        cont = json.loads(p.stdout)["runs"][0].get("cont")
    except (ValueError, KeyError, IndexError):
        cont = None
    return p, cont


p, cont = launch(None)
check(p.returncode == 0 and cont is not None and cont["exchanges_min"] > 0 and
      cont["failed_processes"] == 0 and "made no exchange" not in p.stderr,
      f"no fault: exit {p.returncode}, cont {cont}, no warning ({p.stderr.strip()[-300:]!r})")
p, cont = launch("rank=0,at=mute")
warn = [l for l in p.stderr.splitlines() if "made no exchange" in l]
check(p.returncode == 0 and cont is not None and cont["failed_processes"] == 1 and
      cont["timeouts"] > 0 and cont["exchanges_max"] == 0 and len(warn) == 1 and
      "one-shot model" in warn[0],
      f"parent mute: exit {p.returncode}, cont {cont}, warning lines {warn} "
      f"({p.stderr.strip()[-300:]!r})")
# drift, bench and imbalance say the same in one stderr line (drift here: the shortest run)
line = re.compile(r"hclock drift: continuous clock: (\d+)-(\d+) exchanges per process, "
                  r"(\d+) timeouts")
for fault in (None, "rank=0,at=mute"):
    p = checkargs.run_fault([run, mpiexec, "2", hc, "drift", "--sync", "cont(hca3/20/skampi/5)",
                             "--duration", "1", "--interval", "0.5", "--emulate",
                             "offset=1,skew=100e-6,seed=3"], fault, 180)
    m = line.search(p.stderr)
    got = m and tuple(int(x) for x in m.groups())
    warn = [l for l in p.stderr.splitlines() if "made no exchange" in l]
    if fault is None:
        check(p.returncode == 0 and got is not None and got[0] > 0 and not warn,
              f"drift, no fault: exit {p.returncode}, its line {got} (exchanges), no warning "
              f"{'' if got else p.stderr.strip()[-300:]!r}")
    else:
        check(p.returncode == 0 and got is not None and got[:2] == (0, 0) and got[2] > 0 and
              len(warn) == 1,
              f"drift, parent mute: exit {p.returncode}, its line {got} (0-0, timeouts), one "
              f"warning {warn} {'' if got else p.stderr.strip()[-300:]!r}")
sys.exit(1 if failures else 0)
