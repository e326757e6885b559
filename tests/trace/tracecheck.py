"""tracecheck.py - what the hclock trace tests share (trace_test.py, apps_test.py): one line
per check with a count of failures, launching under tests/mpi/mpirun.sh, the numbers of the
tracer's summary, and reading a trace's outputs back."""
import json
import os
import re
import shutil
import subprocess
import sys

failed = 0


def check(ok, what):
    global failed
    print(("ok   " if ok else "FAIL ") + what)
    failed += not ok


def launch(run, mpiexec, np_, args, timeout=120, cwd=None):
    env = dict(os.environ, HCLOCK_TEST_TIMEOUT=str(timeout))
    return subprocess.run([run, mpiexec, str(np_)] + args, capture_output=True, text=True,
                          env=env, cwd=cwd)


def summary_num(err, what):
    """the number before WHAT in the summary on stderr (None: not there)"""
    m = re.search(r"(\d+) " + what, err)
    return int(m.group(1)) if m else None


def load(d):
    with open(os.path.join(d, "trace.json")) as f:
        return json.load(f)["traceEvents"]


def load_checked(d):
    """trace.json's events, or [] and a failed check when it does not parse"""
    try:
        return load(d)
    except Exception as e:  # noqa: BLE001 - any parse error is the finding
        check(False, f"trace.json parses: {e}")
        return []


def check_exits(plain, traced):
    """the untraced and the traced launch both exited 0"""
    check(plain.returncode == 0 and traced.returncode == 0,
          f"exit codes untraced {plain.returncode}, traced {traced.returncode}: "
          f"{traced.stderr[-800:]}")


def check_align(hc, otf2, out, nodes):
    """hclock align reads OTF2 back: NODES nodes, 0 inversions"""
    al = subprocess.run([hc, "align", otf2, "--out", out, "--format", "json"],
                        capture_output=True, text=True)
    try:
        rep = json.loads(al.stdout)
        inv = sum(nd["inversions"] for nd in rep["nodes"])
        ok = al.returncode == 0 and len(rep["nodes"]) == nodes
    except Exception as e:  # noqa: BLE001 - any parse error is the finding
        ok, inv = False, str(e)
    check(ok and inv == 0, f"hclock align reads traces.otf2 back: {inv} inversions "
          f"{al.stderr.strip()[-300:]}")


def finish(tmp):
    """exit: 1 if a check failed (the files kept in TMP for a look), else 0 (TMP removed: an
    HPCC trace takes 220 MB)"""
    if failed:
        print(f"files kept in {tmp}")
    else:
        shutil.rmtree(tmp, ignore_errors=True)
    sys.exit(1 if failed else 0)
