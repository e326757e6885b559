#!/usr/bin/env python3
"""check_cont_scenario.py CONT_RUN MPIRUN MPIEXEC NP [--seeds 1,5] - the short version of the
continuous clock's benchmark scenarios (bench/cont): NP = 2 is scenario A, NP = 4 scenario B
(two emulated nodes of two ranks, h2 with prop). 100 ppm skew, 0.2 ppm wander, a 3.8 ppm
frequency step 6 s after the epoch, 14 s of probes every 50 ms, 2 million reads from two
threads on every rank outside the reference's node. Per seed:
  - the truth inside the continuous clock's bounds at every probe of every rank;
  - zero backward steps (each thread against itself and against the other's readings);
  - from 3 s after the step on, the continuous clock's median true error is under a tenth of
    the one-shot's in the same run (which the step drives microseconds away: the check
    bites; where the one-shot's own slope error happened to offset the step and it stayed
    within 10 us, that comparison proves nothing and is not made) and under 1 us over shared
    memory (over TCP the tenth of the median round trip below stands for it; not
    asserted for MPICH with more ranks than cores, where the exchanges stall: the known
    limitation, nor where the exchanges' median round trip exceeds 20 us: a busy machine's,
    whose every message can wait a scheduler slice);
  - exchanges were made and fewer than half of them timed out (2 ranks: a busy machine
    makes a parent miss the 50 ms answer time now and then, 5 of 128 at load 10 here; a
    parent that does not answer makes them all time out); where the round trips say the
    machine was busy, or most exchanges timed out (their round trips then unknown), only
    that the exchanges went on, made or timed out (at least 10 in the 14 s): a parent's
    thread that waits for a core past the answer time makes most time out there (58 of 115
    at load 8 with two reading threads per rank beside; 87 timed out and 17 made beside
    two busy processes and a build; over TCP beside two busy processes and a load of 9,
    173 timed out and 2 made, the truth inside the bounds at every probe).
Over TCP (HCLOCK_TEST_NET=tcp, the mpi_tcp_* tests; HCLOCK_TEST_NET_EXPECT=tcp checks a run
over shared memory as if, which must fail), from what each run measured: its smallest round
trip at least TCP's floor here (else the run was not over TCP); the median error from 3 s
after the step under a tenth of the median round trip (the fastest ping-pongs' asymmetry is
a fraction of it; not asserted where the round trips say the machine was busy, whose one-way
delays can differ by a scheduler slice: 4.5 ms off, inside the bounds, for a 2.3 ms median
round trip beside two busy processes). The exchanges per 10 s are printed, not asserted:
after the step the window shrinks and a noisy link's period shortens until it has refilled
(86-87 per 10 s on 2026-11-26 at load 10-13, 189 in a run whose offsets scattered by 309 ns;
before the period saw the link's noise, 185 and 224).
The schedule's own checks are test_servo's.
Accuracy figures (median <= 100 ns over 30 minutes) are the benchmark's, not this test's."""
import csv, json, os, statistics, subprocess, sys, tempfile

from checkargs import TCP_RTT_FLOOR_NS

cont_run, run, mpiexec, np_ = sys.argv[1:5]
np_ = int(np_)
# --seeds A,B: the guard's test needs one launch to bite
seeds = [int(x) for x in sys.argv[6].split(",")] if sys.argv[5:6] == ["--seeds"] else [1, 5]
inner = "h2(hca3/20/hull/10/span=0.2,prop)"
STEP = 6.0
# the exchanges' median round trip on a quiet machine here is a few us over shared memory;
# beside busy processes it is a scheduler slice (1-2 ms): the accuracy is then not asserted
QUIET_MEDIAN_NS = 20000
ONESHOT_DRIVEN_NS = 10000  # a one-shot the step drove away: its median error above this
# over the kernel's TCP: 20-30 us quiet, 3.9 ms beside busy ones; a CI machine's run at 217 us
# (8x quiet) had its continuous clock 10.1 us off (a twentieth of that round trip, inside its
# bounds) against the one-shot's 23.6 us: not a tenth of it. Busy from 4x quiet on, as over
# shared memory
QUIET_MEDIAN_TCP_NS = 100000
failed = 0
for seed in seeds:
    emu = f"offset=1,skew=100e-6,wander=2e-7@60,fstep=3.8e-6@{STEP:g},seed={seed}"
    if np_ == 4:
        emu += ",nodes=2"
    with tempfile.TemporaryDirectory() as d:
        f = os.path.join(d, "probes.csv")
        cmd = [run, mpiexec, str(np_), cont_run, "--emulate", emu, "--cont", f"cont({inner})",
               "--oneshot", inner, "--seconds", "14", "--probe-ms", "50", "--reads", "2000000",
               "--csv", f]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode:
            print(f"FAIL seed={seed}: exit {p.returncode}: {' '.join(cmd)}\n{p.stderr[-1500:]}")
            failed += 1
            continue
        summ = json.loads(p.stdout.strip().splitlines()[-1])
        rows = list(csv.DictReader(open(f)))
    ref = summ["ranks"][0]["node"]
    problems = []
    bounded = [r for r in rows if r["lo_ns"] != "nan"]
    outside = [r for r in bounded if r["in_bounds"] != "1"]
    if len(bounded) < len(rows) * 0.95:
        problems.append(f"only {len(bounded)} of {len(rows)} probes had bounds")
    if outside:
        r = outside[0]
        problems.append(f"truth outside the bounds at {len(outside)} probes (first: t {r['t_s']} s "
                        f"rank {r['rank']} error {r['cont_err_ns']} ns bounds [{r['lo_ns']}, {r['hi_ns']}])")
    rk = summ["ranks"]
    back = sum(x["backward"] + x["cross_backward"] for x in rk)
    reads = sum(x["reads"] for x in rk)
    nonref = sum(1 for x in rk if x["node"] != ref)
    if back:
        problems.append(f"{back:.0f} backward steps in {reads:.0f} reads")
    if reads < nonref * 2000000:
        problems.append(f"{reads:.0f} reads, expected {nonref * 2000000}")
    late = [r for r in rows if float(r["node"]) != ref and float(r["t_s"]) > STEP + 3]
    cont = statistics.median(abs(float(r["cont_err_ns"])) for r in late) if late else float("nan")
    one = statistics.median(abs(float(r["oneshot_err_ns"])) for r in late) if late else float("nan")
    # MPICH with more ranks than cores: its exchanges stall (round trips of 0.1-0.6 ms), the
    # bounds hold but the estimates are microseconds off: the accuracy is printed, not
    # asserted there
    stalls = np_ > (os.cpu_count() or 1) and "mpich" in os.path.basename(mpiexec)
    kids = [x for x in rk if x["exchanges"] > 0]
    rtt_med = max((x["rtt_median_ns"] for x in kids), default=0)
    tcp = "tcp" in (os.environ.get("HCLOCK_TEST_NET"), os.environ.get("HCLOCK_TEST_NET_EXPECT"))
    ex = sum(x["exchanges"] for x in rk)
    to = sum(x["timeouts"] for x in rk)
    # a busy machine: its exchanges' median round trip far above a quiet one's (2-5 us over
    # shared memory here), each waiting for a core
    # (or its exchanges mostly timing out, their round trips then unknown: an answer later
    # than 50 ms never comes on a quiet machine)
    busy = rtt_med > (QUIET_MEDIAN_TCP_NS if tcp else QUIET_MEDIAN_NS) or to > ex
    # the one-shot is the bite: the step drives it 11-53 us away over those 11 s, unless its
    # own slope error happened to offset the step (2.8 us in one MPICH/TCP run): then only the
    # continuous clock's own figure is judged
    driven = one >= ONESHOT_DRIVEN_NS
    # shared memory's 1 us; over TCP, whose one-way delays differ by more (seed 5 under
    # MPICH: 500-593 ns for 22-26 us round trips), the tenth of the median round trip below
    cap = float("inf") if tcp else 1000
    if not stalls and not busy and (not late or not (cont < cap and
                                                     (cont < one / 10 or not driven))):
        problems.append(f"from 3 s after the step: continuous median {cont:.0f} ns, one-shot {one:.0f} ns")
    elif late and not driven and not stalls and not busy:
        print(f"note seed={seed}: the one-shot stayed within {ONESHOT_DRIVEN_NS} ns of the truth "
              f"({one:.0f} ns: its slope error offset the step), so only the continuous "
              f"clock's {'tenth of a round trip' if tcp else '1 us'} is judged")
    # busy: the exchanges went on at their pace (made or timed out: at least 10 in the 14 s;
    # how many a starved peer answers in time is the machine's)
    if np_ == 2 and not (ex + to >= 10 if busy else ex > 20 and to * 2 < ex):
        problems.append(f"{ex:.0f} exchanges, {to:.0f} timed out")
    rtt_min = min((x["rtt_min_ns"] for x in kids if x["rtt_min_ns"] > 0), default=0)
    noise = max((x["noise_median_ns"] for x in kids), default=0)
    per10 = max((10 * x["exchanges"] / x["elapsed_s"] for x in kids), default=0)
    if tcp and os.environ.get("HCLOCK_TEST_NET") != "tcp" and rtt_min >= TCP_RTT_FLOOR_NS:
        print(f"the guard cannot bite: shared memory's smallest round trip {rtt_min:.0f} ns is "
              f"at TCP's floor or above (a busy machine)")
    if tcp and 0 < rtt_min < TCP_RTT_FLOOR_NS:
        problems.append(f"not over TCP: smallest round trip {rtt_min:.0f} ns, TCP's is >= "
                        f"{TCP_RTT_FLOOR_NS} ns here")
    if tcp and late and not busy and not cont < rtt_med / 10:
        problems.append(f"median error {cont:.0f} ns from 3 s after the step, not under a tenth "
                        f"of the median round trip ({rtt_med:.0f} ns)")
    line = ("(accuracy not asserted: MPICH, more ranks than cores) " if stalls else "") + \
        (f"(accuracy not asserted: median round trip {rtt_med:.0f} ns, a busy machine) "
         if busy and not stalls else "") + \
        (f"seed={seed} np={np_}: {len(rows)} probes, truth in bounds at {len(bounded) - len(outside)}"
            f"/{len(bounded)}; {reads:.0f} reads, {back:.0f} backward; from 3 s after the step "
            f"median error continuous {cont:.0f} ns, one-shot {one:.0f} ns; {ex:.0f} exchanges "
            f"({to:.0f} timed out), {per10:.0f} per 10 s; round trips {rtt_min:.0f} ns smallest, "
            f"{rtt_med:.0f} ns median; offsets' scatter {noise:.0f} ns")
    if problems:
        print("FAIL " + line + "\n  " + "\n  ".join(problems))
        failed += 1
    else:
        print("ok   " + line)
sys.exit(1 if failed else 0)
