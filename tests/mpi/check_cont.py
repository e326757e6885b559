#!/usr/bin/env python3
"""check_cont.py HCLOCK MPIRUN MPIEXEC - after a 3.8 ppm frequency step the continuous clock
stays right while the one-shot one drifts away. For each seed, the same emulation
(100 ppm skew, the step 2 s after the emulation's start) is checked with a one-shot spec and
with cont(...) of it, driven by its thread and by hclock check's progress calls while it waits
(drive=progress), 5 s after the sync: the one-shot true error must exceed 2 us (the step's
3.8 ppm over ~3 s: the check bites) and each continuous one must be at most a tenth of it and
under 1 us. The bounds of both must hold the truth (the one-shot's may not: it assumes no
frequency change, so it is not asserted). Where the one-shot's error stays below 2 us the
step came before its sync ended (a slow start on a busy machine: once at load 13, with the
step at 1 s) and the seed's premise does not hold: it runs again, up to 3 times. The accuracy
(a tenth, under 1 us) is a quiet machine's figure: a run whose round trips (the one-shot's fit
points, the check's fastest probe, the continuous clock's latest exchange) exceeded 20 us or
whose exchanges' offsets scattered by more than 500 ns, a busy machine's, has only its bounds
held and its figures printed (docs/tests.md)."""
import json, subprocess, sys

hc, run, mpiexec = sys.argv[1:4]
# a run is busy above these (not check_accuracy.py's QUIET_RTT_NS, the 2 us a must-fail case
# is judged with): the largest round trip (the one-shot's fit points, the check's fastest
# probe, the continuous clock's latest exchange) is 1-3 us over shared memory on a quiet
# machine, and beside busy processes every one can wait a slice; the continuous clock's
# exchanges' offsets scatter by tens of ns on a quiet machine
BUSY_RTT_NS = 20000
BUSY_NOISE_NS = 500
inner = "hca3/20/hull/10/span=0.2"
failed = 0
def run_seed(seed):
    emu = f"offset=1,skew=100e-6,noise=20e-9,fstep=3.8e-6@2,seed={seed}"
    res = {}
    conts = (f"cont({inner})", f"cont({inner},drive=progress)")
    for spec in (inner,) + conts:
        cmd = [run, mpiexec, "2", hc, "check", "--sync", spec, "--wait", "0,5", "--emulate", emu,
               "--format", "json", "--pingpongs", "10"]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode:
            print(f"FAIL seed={seed}: exit {p.returncode}: {' '.join(cmd)}\n{p.stderr[-1500:]}")
            return 1
        run0 = json.loads(p.stdout)["runs"][0]
        last = run0["checks"][-1]
        cont = run0.get("cont", {})
        last["busy_rtt_ns"] = max(run0["stalls"]["fit_rtt_max_s"], last["rtt_min_s"],
                                  cont.get("rtt_max_s", 0)) * 1e9
        last["noise_ns"] = cont.get("noise_max_s", 0) * 1e9
        res[spec] = last
        if spec == inner and last["true_max_abs_error_s"] * 1e9 < 2000:
            print(f"again seed={seed}: the one-shot clock is only "
                  f"{last['true_max_abs_error_s'] * 1e9:.0f} ns off 5 s after the sync: the "
                  "step came before its sync ended")
            return None
    one = res[inner]["true_max_abs_error_s"] * 1e9
    failed = 0
    for spec in conts:
        cont = res[spec]["true_max_abs_error_s"] * 1e9
        inb = res[spec]["truth_in_bounds"]
        line = f"seed={seed}: 5 s after the sync one-shot {one:.0f} ns, {spec} {cont:.0f} ns, " \
               f"truth in its bounds {inb}"
        busy = res[spec]["busy_rtt_ns"] > BUSY_RTT_NS or res[spec]["noise_ns"] > BUSY_NOISE_NS
        if busy:  # the accuracy is a quiet machine's figure: the bounds only
            line += (f" (accuracy not asserted: round trips up to "
                     f"{res[spec]['busy_rtt_ns']:.0f} ns, the exchanges' noise "
                     f"{res[spec]['noise_ns']:.0f} ns: a busy machine)")
        if one < 2000 or inb is not True or (not busy and (cont > one / 10 or cont > 1000)):
            print("FAIL " + line)
            failed += 1
        else:
            print("ok   " + line)
    return failed


failed = 0
for seed in (1, 2):
    for attempt in range(3):
        f = run_seed(seed)
        if f is not None:
            failed += f
            break
    else:
        print(f"FAIL seed={seed}: the step came before the sync ended in 3 runs")
        failed += 1
sys.exit(1 if failed else 0)
