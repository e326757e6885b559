#!/usr/bin/env python3
"""check_timeout.py HCLOCK MPIRUN_SH MPIEXEC - every wait of hclock has an end (HCLOCK_TIMEOUT).

With HCLOCK_TIMEOUT=3 on 2 ranks of `hclock check`:
  - freeze: rank 1 stops in its 5th ping-pong for ever (HCLOCK_FAULT=rank=1,at=freeze,k=5):
    the run ends non-zero within the limit plus a margin, with exactly one line
    "hclock: rank 0: MPI_Recv from rank 1 did not complete within 3 s (HCLOCK_TIMEOUT)..."
  - finalize: rank 1 stays in its MPI_Finalize (at=finalize): the results are out, the line
    "hclock check: rank 1: MPI_Finalize did not return within 3 s ..." says so (MPICH: rank
    0's, whose MPI_Finalize waits for rank 1, may come first), the run ends
    within the limit plus a margin, and every rank whose end was seen exited 0, the run's
    code (each rank runs under a small shell that writes its exit code to a file; at least one
    must be seen). The launcher's own code is not judged: MPICH's hydra records 1 for a
    process that closed its PMI connection without finalizing unless it saw that process's
    exit first, and kills the others with SIGKILL (9), so it says 0, 1 or 9 by timing (0 in
    every local run, 1 in CI); Open MPI's reports the process that left without finalizing and
    exits non-zero, or, its own fault, now and then hangs or dies of SIGSEGV after the ranks
    have ended: then the ranks' end is timed, said in a note, and the launcher ended);
  - trace finalize: the same in a traced program (hclock trace -- allreduce_mini): after
    the tracer's outputs are written, rank 1's MPI_Finalize is watched alike ("hclock trace:
    rank 1: ... the trace is complete; exiting with 0 ..."), the trace is there;
  - slow part: a traced program's rank 0 writes its part 4 s late (at=slowpart): rank 1's
    watch counts from the last process's mark, so no line, exit 0, the trace is there;
  - none: no fault, no timeout line, exit 0 (the limit does not bite a normal run);
  - bad: HCLOCK_TIMEOUT=abc: one line naming it, the default used, exit 0.
Prints one line per check; exits 1 if any failed."""
import atexit
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

hc, run, mpiexec = sys.argv[1:4]
LIMIT = 3
MARGIN = 30  # s: start-up, the sync, the launcher's clean-up on a loaded machine
mpich = not re.search(r"open ?mpi|openrte",
                      subprocess.run([mpiexec, "--version"], capture_output=True,
                                     text=True).stdout + "", re.I)
failures = 0


def check(ok, what, p=None):
    global failures
    print(("ok   " if ok else "FAIL ") + what)
    if not ok and p is not None:
        print(f"  exit {p.returncode}\n  stderr: {p.stderr[-1500:]}\n  stdout: {p.stdout[-500:]}")
    failures += not ok


def ranks_left(sid, names):
    """the hclock processes still running in the launch's session; a rank that has exited but
    not been reaped (a zombie: the launcher that hangs does not reap its children) has ended"""
    ps = subprocess.run(["ps", "-e", "-o", "sid=,stat=,comm="], capture_output=True,
                        text=True).stdout
    rows = [l.split() for l in ps.splitlines()]
    return sum(1 for f in rows
               if len(f) >= 3 and f[0] == str(sid) and f[2] in names and "Z" not in f[1])


def kept_lines(p):
    """the finalize watch's lines in a launch's stderr"""
    return [l for l in p.stderr.splitlines() if "MPI_Finalize did not return" in l]


CHECK = ["check", "--sync", "hca3/20/skampi/5", "--wait", "0", "--emulate",
         "offset=1,skew=100e-6,seed=3"]


# a rank's exit code, written by the shell that runs it to CODES/rank.N (MPICH's PMI_RANK,
# Open MPI's OMPI_COMM_WORLD_RANK); a shell the launcher kills first writes nothing
CODES = tempfile.mkdtemp(prefix="hclock-timeout-codes.")
atexit.register(shutil.rmtree, CODES, ignore_errors=True)  # on an exception's exit too
KEEP_CODE = ['sh', '-c', 'c=0; "$@" || c=$?; '
             'echo $c > "$HCLOCK_CODES/rank.${PMI_RANK:-${OMPI_COMM_WORLD_RANK:-x}}"; exit $c',
             'sh']


def rank_codes():
    """{rank: exit code} of the last launch's ranks whose end their shell saw"""
    codes = {}
    for f in os.listdir(CODES):
        with open(os.path.join(CODES, f)) as fh:
            codes[f.split(".", 1)[1]] = fh.read().strip()
    return codes


def launch(fault, limit=str(LIMIT), args=CHECK, names=("hclock",), keep_code=False):
    """(process, seconds until every rank had ended, whether the launcher failed on its own):
    Open MPI's mpiexec, handling processes that exit without MPI_Finalize, now and then does
    not end, or dies of SIGSEGV, after every rank has gone (1 in 15 and 1 in 30 launches of
    the finalize case here): the ranks are what is judged, the launcher is ended"""
    env = dict(os.environ, HCLOCK_TIMEOUT=limit, HCLOCK_CODES=CODES)
    for f in os.listdir(CODES):
        os.unlink(os.path.join(CODES, f))
    env.pop("HCLOCK_FAULT", None)
    if fault:
        env["HCLOCK_FAULT"] = fault
    t0 = time.time()
    p = subprocess.Popen([run, mpiexec, "2"] + (KEEP_CODE if keep_code else []) + [hc] + args,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                         start_new_session=True)
    out, err = [], []
    readers = [threading.Thread(target=lambda f=f, b=b: b.append(f.read()))
               for f, b in ((p.stdout, out), (p.stderr, err))]
    for r in readers:
        r.start()
    ended, hung, seen = None, False, False
    while p.poll() is None:
        time.sleep(0.25)
        n = ranks_left(p.pid, names) if ended is None else 0
        seen = seen or n > 0
        if ended is None and seen and n == 0:
            ended = time.time() - t0
        if ended is not None and time.time() - t0 > ended + 20:
            hung = True  # every rank gone for 20 s, the launcher still there
            os.killpg(p.pid, 9)
            p.wait()
        elif time.time() - t0 > 300:
            os.killpg(p.pid, 9)
            p.wait()
    for r in readers:
        r.join()
    p.stdout, p.stderr = "".join(out), "".join(err)
    dt = ended if ended is not None else time.time() - t0
    launcher = (hung or p.returncode in (-11, 139)) and not mpich
    if launcher:
        print(f"note: {fault or 'no fault'}: Open MPI's mpiexec "
              f"{'did not end' if hung else 'died of SIGSEGV'} after every rank had ended "
              f"({dt:.1f} s): its own fault on processes that exit without MPI_Finalize; "
              f"the ranks are judged, its exit code is not")
    return p, dt, launcher


p, dt, launcher = launch("rank=1,at=freeze,k=5")
lines = [l for l in p.stderr.splitlines() if "HCLOCK_TIMEOUT" in l]
want = re.compile(r"^hclock: rank 0: MPI_Recv from rank 1 did not complete within 3 s "
                  r"\(HCLOCK_TIMEOUT\): that process is gone or stuck; aborting the run$")
check(p.returncode != 0 or launcher, f"freeze: non-zero exit ({p.returncode})", p)
check(dt < LIMIT + MARGIN, f"freeze: ended in {dt:.1f} s (limit {LIMIT} s + {MARGIN} s)", p)
check(len(lines) == 1 and want.match(lines[0]),
      f"freeze: one line naming rank 0, the step and the peer: {lines}", p)

p, dt, launcher = launch("rank=1,at=finalize", keep_code=True)
lines = kept_lines(p)
codes = rank_codes()
# MPICH's MPI_Finalize waits for every process: rank 0 stays in its own too, and its line,
# at about the same moment, can come first (the launcher then ends rank 1 before it says it)
who = "[01]" if mpich else "1"
want = re.compile(r"^hclock check: rank " + who + r": MPI_Finalize did not return within 3 s "
                  r"\(HCLOCK_TIMEOUT, 30 s at most\).*exiting with the run's code 0$")
check(any(want.match(l) for l in lines),
      f"finalize: the line of rank {'0 or 1' if mpich else '1'}: {lines}", p)
check("true_max|err|_ns" in p.stdout, "finalize: the results were printed before", p)
check(dt < LIMIT + MARGIN, f"finalize: ended in {dt:.1f} s (limit {LIMIT} s + {MARGIN} s)", p)
check(codes and all(c == "0" for c in codes.values()),
      f"finalize: every rank whose end was seen exited 0, the run's code: {codes} "
      f"(the launcher's own code {p.returncode} is not judged)", p)

prog = os.path.join(os.path.dirname(hc), "allreduce_mini")
if os.path.exists(prog):
    out = tempfile.mkdtemp(prefix="hclock-timeout-test.")
    try:
        p, dt, launcher = launch("rank=1,at=finalize", args=["trace", "-o", out + "/t", "--", prog],
                                 names=("allreduce_mini",))
        lines = kept_lines(p)
        want = re.compile(r"^hclock trace: rank " + who + r": MPI_Finalize did not return within "
                          r"3 s \(HCLOCK_TIMEOUT, 30 s at most\).*the trace is complete; exiting "
                          r"with 0 \(the program's code after MPI_Finalize does not run\)$")
        check(any(want.match(l) for l in lines),
              f"trace finalize: the line of rank {'0 or 1' if mpich else '1'}: {lines}", p)
        check("checksum" in p.stdout and os.path.exists(out + "/t/trace.pftrace"),
              "trace finalize: the program's output and the trace are there", p)
        check(dt < LIMIT + MARGIN,
              f"trace finalize: ended in {dt:.1f} s (limit {LIMIT} s + {MARGIN} s)", p)
        # rank 0 writes its part 4 s late (at=slowpart): rank 1's watch waits for it (a
        # shutdown waits for every process), no line, exit 0; a watch counting from its own
        # MPI_Finalize would end rank 1 after 3 s
        shutil.rmtree(out + "/t", ignore_errors=True)
        p, dt, launcher = launch("rank=0,at=slowpart",
                                 args=["trace", "-o", out + "/t", "--", prog],
                                 names=("allreduce_mini",))
        lines = kept_lines(p)
        check(not lines and (p.returncode == 0 or launcher),
              f"slow part: no process ended while another wrote its part: exit "
              f"{p.returncode}, {lines}", p)
        check("checksum" in p.stdout and os.path.exists(out + "/t/trace.pftrace"),
              "slow part: the program's output and the trace are there", p)
        check(LIMIT + 1 <= dt < 2 * LIMIT + 1 + MARGIN,
              f"slow part: ended in {dt:.1f} s (rank 0 {LIMIT + 1} s late)", p)
    finally:
        shutil.rmtree(out, ignore_errors=True)
else:
    print(f"note: {prog} not built: the traced program's case left out")

p, dt, _ = launch(None)
check(p.returncode == 0 and "HCLOCK_TIMEOUT" not in p.stderr,
      f"none: exit {p.returncode}, no timeout line ({dt:.1f} s)", p)

p, dt, _ = launch(None, "abc")
lines = [l for l in p.stderr.splitlines() if "HCLOCK_TIMEOUT='abc'" in l]
check(p.returncode == 0 and len(lines) >= 1 and "not a number of seconds" in lines[0],
      f"bad: exit {p.returncode}, the value named: {lines[:1]}", p)
sys.exit(1 if failures else 0)
