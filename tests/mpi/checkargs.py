"""checkargs.py - the options the check scripts (check_accuracy.py, check_bounds.py) share:
which hclock and launcher, how many ranks, the sync spec, the emulation and its read noise,
the waits, the seeds and the tree levels; and what every test script may ask of the machine
(TCP's floor, whether the machine was busy: cpu_share, also used by tests/bench and
tests/trace)."""
import argparse
import json
import os
import statistics
import subprocess
import time

# the smallest round trip a run over TCP can show here (the kernel's loopback stack: 8-30 us;
# shared memory: 0.4-2 us): a run whose smallest is below was not over TCP
TCP_RTT_FLOOR_NS = 3000

# below this share of a core (cpu_share), the machine was busy: a quiet machine's figures
# are not judged there
BUSY_SHARE = 0.8


def runnable():
    """Tasks the kernel has runnable right now, this process among them (/proc/stat's
    procs_running); None where there is no such line."""
    try:
        with open("/proc/stat") as f:
            for line in f:
                if line.startswith("procs_running "):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def cpu_share(wall=0.3):
    """The share of a core this process gets while it spins for `wall` seconds: about 1 on a
    quiet machine, 2/3 or less beside two busy processes on 2 cores. Evidence of a busy
    machine measured in the same run and independent of what a test judges. The share a
    0.3 s spin gets swings (0.51-0.78 beside two busy processes on 2 cores), so it is also
    bounded by what the runnable tasks seen meanwhile leave a process: cores / runnable
    (1 with nothing else runnable, 2/3 with 3 runnable on 2 cores)."""
    cores = os.cpu_count() or 1
    seen = []
    w0, c0 = time.perf_counter(), time.process_time()
    while time.perf_counter() - w0 < wall:
        n = runnable()
        if n is not None:
            seen.append(n)
    share = (time.process_time() - c0) / (time.perf_counter() - w0)
    if seen:
        share = min(share, cores / max(cores, statistics.median_low(seen)))
    return share


def parser(emulate, wait):
    ap = argparse.ArgumentParser()
    ap.add_argument("--hclock", required=True)
    ap.add_argument("--mpirun", required=True)
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--np", type=int, required=True)
    ap.add_argument("--sync", required=True)
    ap.add_argument("--emulate", default=emulate)
    ap.add_argument("--noise", type=float, default=20e-9, help="emulated noise std, s")
    ap.add_argument("--wait", default=wait)
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--levels", type=int, default=0, help="0: ceil(log2 np)")
    ap.add_argument("--expect", choices=["pass", "fail", "some-fail"], default="pass",
                    help="fail: every check must fail; some-fail: at least one")
    ap.add_argument("--stall", default="",
                    help="stall every process in a share of its offset measurements: "
                         "HCLOCK_FAULT's at=stall items, e.g. ms=1-5,share=0.05 (seeded by "
                         "the run's seed)")
    return ap


def stall_env(a, seed):
    """The environment of one run: HCLOCK_FAULT's stalls when --stall is given."""
    env = dict(os.environ)
    if a.stall:
        env["HCLOCK_FAULT"] = f"rank=all,at=stall,{a.stall},seed={seed}"
    return env


def show(cmd, env):
    """A command line to reproduce a run, its HCLOCK_FAULT first."""
    f = env.get("HCLOCK_FAULT")
    return (f"HCLOCK_FAULT={f} " if f else "") + " ".join(cmd)


def checks(a, failed):
    """Run `hclock check` once per seed of a.seeds (JSON, 10 ping-pongs per measurement);
    yield (seed, command, finished process) for those that exited 0; print a FAIL line for
    the others and count them in failed[0]."""
    import subprocess
    for seed in a.seeds.split(","):
        emu = f"{a.emulate},seed={seed}"
        cmd = [a.mpirun, a.mpiexec, str(a.np), a.hclock, "check", "--sync", a.sync, "--wait",
               a.wait, "--emulate", emu, "--format", "json", "--pingpongs", "10"]
        env = stall_env(a, seed)
        p = subprocess.run(cmd, capture_output=True, text=True, env=env)
        cmd = show(cmd, env).split(" ")
        if p.returncode != 0:
            print(f"FAIL seed={seed}: exit {p.returncode}: {' '.join(cmd)}\n{p.stderr[-2000:]}")
            failed[0] += 1
            continue
        if not over_tcp(seed, p.stdout):
            failed[0] += 1
            continue
        yield seed, cmd, p


def over_tcp(seed, stdout):
    """False (with a FAIL line) when the run should have gone over TCP (HCLOCK_TEST_NET=tcp,
    set by CTest for the mpi_tcp_* tests, or HCLOCK_TEST_NET_EXPECT=tcp) but its smallest
    round trip says shared memory. HCLOCK_TEST_NET_EXPECT=tcp alone (the guard: a run over
    shared memory that must be caught) whose round trips were all above TCP's floor, as on a
    busy machine, says the guard cannot bite"""
    if "tcp" not in (os.environ.get("HCLOCK_TEST_NET"), os.environ.get("HCLOCK_TEST_NET_EXPECT")):
        return True
    rtts = [c["rtt_min_s"] * 1e9 for r in json.loads(stdout)["runs"] for c in r["checks"]
            if c.get("measured", 1) and c["rtt_min_s"] > 0]
    if rtts and min(rtts) >= TCP_RTT_FLOOR_NS:
        if os.environ.get("HCLOCK_TEST_NET") != "tcp":  # the guard, over shared memory
            print(f"ok seed={seed}: the guard cannot bite: shared memory's smallest round trip "
                  f"{min(rtts):.0f} ns is at TCP's floor or above (a busy machine)")
            return True
        print(f"ok seed={seed}: over TCP (smallest round trip {min(rtts):.0f} ns)")
        return True
    print(f"FAIL seed={seed}: the messages did not go over TCP: smallest round trip "
          f"{min(rtts) if rtts else 0:.0f} ns, TCP's is >= {TCP_RTT_FLOOR_NS} ns here")
    return False


def run_fault(cmd, fault, timeout=300):
    """CMD run with HCLOCK_FAULT=FAULT in its environment (None: without one, whatever the
    caller's environment has)"""
    env = dict(os.environ)
    env.pop("HCLOCK_FAULT", None)
    if fault:
        env["HCLOCK_FAULT"] = fault
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
