#!/usr/bin/env python3
"""Run `hclock check` with a hull-learned sync under emulated clocks and assert its bounds.

For every seed and every check: the bounds are known (bound_half_width_s is a number), the
truth lay inside them on every process (truth_in_bounds), and right after the sync the
half-width is within --width-factor times the round trip measured (the larger of the check's
smallest and the largest the sync's clocks rest on, stalls.fit_rtt_max_s: the
hull's corridor is about one round trip wide, plus the emulated read noise: 4 std per
timestamp on both ends, levels hops of a tree), or --width-floor-ns if larger. --expect fail inverts the truth assertion:
some check must find the truth outside (a clock step after the sync, which no bound can
foresee), which proves the assertion bites. The width cap is not asserted (said, not counted)
where the sync's fit rested on round trips over 1 ms (a busy machine's scheduler slices), nor
for a continuous clock right after a sync that the tool called slowed by stalls (slow_sync:
its first exchanges were made on the same busy machine, and its bound rests on them); it
allows for the slope's uncertainty from the fit's span (auto's, the spec's span=S, or else the
sync's duration per level) to the check's read of its bounds (x (1 + 2 x distance / span)).
--warn REGEX: the sync's warnings on stderr must
match (a step during the sync: the hulls intersect, the fallback is announced; unless the step
is smaller than the largest round trip the clock rests on, where it can hide: said, not
counted). --auto: the
spec holds an auto(...) (cont(auto(...))): its choice must be reported (check's JSON key
"auto", through cont); where it chose skampi (a blurred floor: over TCP on a loaded machine) a
check without bounds (right after the sync, before the continuous clock's hulls have any) must
instead have its true error within the same cap the half-width has.

An emulated step meant to come after the sync (--emulate ...,step=X@T with --expect fail) needs
the sync to end before T: on a busy machine it can take longer, the step then falls inside it,
and the right answer is the learner's warning that the hulls intersect and no bounds. Such a
seed runs again with the step moved to twice the sync's duration plus 1 s, up to 2 times; a
seed whose premise never held is said and not counted (docs/tests.md, "Flaky tests found").
"""
import json, math, re, subprocess, sys

import checkargs

ap = checkargs.parser("offset=1,skew=100e-6,noise=20e-9,jitter=1e-6", "0,1")
ap.add_argument("--width-factor", type=float, default=3.0)
ap.add_argument("--width-floor-ns", type=float, default=0.0)
ap.add_argument("--warn", default=None)
ap.add_argument("--auto", action="store_true")
a = ap.parse_args()

levels = a.levels or max(1, math.ceil(math.log2(a.np)))
# the largest round trip a sync's fit rests on, over which the machine was busy: a scheduler
# slice is 4 ms; quiet, 1-5 us over shared memory, 27-40 us over TCP, a tail of 100s of us
BUSY_FIT_RTT_NS = 1000000
_span = re.search(r"span=([0-9.eE+-]+)", a.sync or "")
SPEC_SPAN_S = float(_span.group(1)) if _span and "auto(" not in (a.sync or "") else 0.0
failed = 0
outside = 0
narrow = 0  # checks whose bounds are narrower than the emulated step: after it, truth outside
nfail = [0]
_step = re.search(r"step=([^,@]+)@", a.emulate)
step_size = abs(float(_step.group(1))) * 1e9 if _step else 0.0

def step_inside(p, at_s):
    """The sync saw the emulated step at at_s (its hulls intersect) and so gave no bounds,
    and it could have: it lasted long enough to reach it (a sync that warns of a step it
    cannot have met is a failure, not a busy machine)"""
    run0 = json.loads(p.stdout)["runs"][0]
    return re.search(r"hulls of its .* intersect", p.stderr) and \
        run0["sync_duration_s"] > at_s / 2 and \
        any(c.get("bound_half_width_s") is None for c in run0["checks"])


def runs():
    """checkargs.checks, with a seed whose step fell inside the sync run again (see above)"""
    step = re.search(r"step=([^,@]+)@([0-9.eE+-]+)", a.emulate)
    if a.expect != "fail" or a.warn is not None or not step:
        yield from checkargs.checks(a, nfail)
        return
    base, seeds, waits = a.emulate, a.seeds, a.wait
    for seed in seeds.split(","):
        a.emulate, a.seeds, a.wait = base, seed, waits
        at = float(step.group(2))  # when the step comes, s after the epoch
        for attempt in range(3):
            got = list(checkargs.checks(a, nfail))
            if not got or not step_inside(got[0][2], at):
                yield from got
                break
            dur = json.loads(got[0][2].stdout)["runs"][0]["sync_duration_s"]
            at = math.ceil(2 * dur + 1)
            print(f"again seed={seed}: the sync took {dur:.3f} s, the step meant after it fell "
                  f"inside (the hulls intersect, no bounds: the right answer); again with the "
                  f"step at {at} s")
            a.emulate = base.replace(step.group(0), f"step={step.group(1)}@{at}")
            a.wait = ",".join(w if float(w) == 0 else f"{float(w) + at - float(step.group(2)):g}"
                              for w in waits.split(","))
        else:
            print(f"skip seed={seed}: the step fell inside the sync in 3 runs (a busy machine): "
                  f"not counted")
    a.emulate, a.seeds, a.wait = base, seeds, waits


for seed, cmd, p in runs():
    if a.warn is not None:
        run0 = json.loads(p.stdout)["runs"][0]
        fit_rtt = run0["stalls"]["fit_rtt_max_s"] * 1e9
        unclean = run0["stalls"]["unclean_models"]
        if not re.search(a.warn, p.stderr) and step_size and (fit_rtt > step_size or unclean):
            # a step smaller than the round trips the clock rests on can hide in them, and one
            # among the fit points a busy machine's stalls left out can fall between the kept
            # ones (9 of 20 kept, all on one side of it): the premise of the case fails, and
            # with it the bound's (no step during the sync), so its truth may lie outside:
            # said, not counted (a quiet machine keeps every point: there it bites)
            held = all(c.get("truth_in_bounds") is not False for c in run0["checks"])
            why = (f"hid in round trips up to {fit_rtt:.0f} ns" if fit_rtt > step_size else
                   f"may have fallen among the fit points left out as stalled ({unclean} "
                   f"unclean model(s))")
            print(f"skip seed={seed}: no warning, the {step_size:.0f} ns step {why} (a busy "
                  f"machine); the truth in the bounds: {held} (they assume no step during the "
                  f"sync); not counted")
            continue
        if re.search(a.warn, p.stderr):
            print(f"ok   seed={seed}: warning seen: "
                  f"{[l for l in p.stderr.splitlines() if 'warning' in l][:1]}")
        else:
            print(f"FAIL seed={seed}: no warning matching {a.warn!r} on stderr:\n{p.stderr[-2000:]}")
            failed += 1
        continue
    run0 = json.loads(p.stdout)["runs"][0]
    au = None
    if a.auto:
        au = run0.get("auto")
        if not au or "estimator" not in au:
            print(f"FAIL seed={seed}: no auto choice reported: {au} ({' '.join(cmd)})")
            failed += 1
            continue
        print(f"ok   seed={seed}: auto chose {au['spec']} (floor {au['floor_ns']:.0f} ns, tail "
              f"{au['tail_ns']:.0f} ns, bursts {au['burst_s']:.4f} s)")
    # a bound right after the sync is the fit's corridor (about a round trip) carried from the
    # fit's end to the check: the slope's uncertainty (corridor / span) widens it by
    # 2 x distance / span. Where auto chose the fit, its span and the time spent outside the
    # fit are known (the rest of the sync after its bursts and agreement: an upper bound of
    # the distance); a busy machine makes that distance long against a short span
    # (without auto, the spec's span=S: the fit spans at least S, the rest of the sync comes
    # after it; 156 us for 24 us round trips over TCP beside a build)
    # (and the check reads its bounds at its check point, read_after_s: after_s and the
    # time its wait and read took)
    span, dist = 0.0, 0.0
    if au and au.get("span_s", 0) > 0:
        span = au["span_s"]
        dist = max(0.0, run0["sync_duration_s"] - au["burst_s"] - au.get("agree_s", 0)
                   - span)
    elif SPEC_SPAN_S:
        span = SPEC_SPAN_S
        dist = max(0.0, run0["sync_duration_s"] - SPEC_SPAN_S)
    elif run0["sync_duration_s"] > 0:
        # points taken back to back: each level's fit spans about its share of the sync (2.5
        # ms quiet for hca3/100/hull/10 on 2 ranks), and the check's read comes read_after_s
        # after the fit's end (54 us quiet: x 1.04; 10 us for 2.6 us round trips beside busy
        # processes, the read later against a span that was not longer)
        span = run0["sync_duration_s"] / levels
    for chk in run0["checks"]:
        extra = 1 + 2 * (dist + chk.get("read_after_s", 0)) / span if span else 1.0
        hw = chk.get("bound_half_width_s")
        inb = chk.get("truth_in_bounds")
        err = chk["true_max_abs_error_s"] * 1e9
        rtt = chk["rtt_min_s"] * 1e9
        if a.expect == "pass":
            # what the sync saw: on a busy machine its ping-pongs can all have waited for the
            # core (milliseconds) while the check's probes found a quiet moment
            rtt = max(rtt, run0["stalls"]["fit_rtt_max_s"] * 1e9)
        line = (f"seed={seed} after={chk['after_s']}s true_err={err:.0f}ns "
                f"half_width={'none' if hw is None else f'{hw * 1e9:.0f}ns'} rtt={rtt:.0f}ns "
                f"truth_in_bounds={inb}")
        width_cap = max(a.width_floor_ns,
                        a.width_factor * levels * (rtt + 2 * 4 * a.noise * 1e9) * extra)
        if (hw is None or inb is None) and au and au["estimator"] != "hull" and \
                a.expect == "pass":
            ok = err <= width_cap
            print(f"{'ok  ' if ok else 'FAIL'} {line}: auto chose {au['estimator']}, no bounds "
                  f"yet; true error within {width_cap:.0f} ns: {ok}")
            failed += not ok
            continue
        if hw is None or inb is None:
            print(f"FAIL {line}: no bounds reported ({' '.join(cmd)})")
            failed += 1
            continue
        if not inb:
            outside += 1
        if step_size and 2 * hw * 1e9 < step_size:
            narrow += 1
        if a.expect == "pass" and not inb:
            print(f"FAIL {line}: the truth lay outside the bounds ({' '.join(cmd)})")
            failed += 1
            continue
        # the cap is a quiet machine's relation (a corridor about a round trip wide): a sync
        # whose fit points' round trips were a scheduler slice (milliseconds) rests on few
        # clean ping-pongs, and its slope's uncertainty widens the bound beyond it (108 ms for
        # 8 ms round trips, auto's 4 points of 1 ping-pong, beside busy processes): said there,
        # not counted; the truth inside the bounds stays asserted
        # A continuous clock's bound right after the sync rests on its first exchanges, made
        # just after it: where the sync itself was slowed by stalls (slow_sync: the tool's own
        # warning; 2.6 s for a 0.2 s span beside two busy processes), those exchanges can all
        # have waited too, and the bound is then half their round trip (3.37 ms for a sync and
        # a check whose round trips were 6.6 us): said there, not counted
        fit_rtt = run0["stalls"]["fit_rtt_max_s"] * 1e9
        slowed = "cont(" in (a.sync or "") and run0.get("slow_sync")
        if a.expect == "pass" and chk["after_s"] == 0 and hw * 1e9 > width_cap and \
                (fit_rtt > BUSY_FIT_RTT_NS or slowed):
            why = (f"the sync rested on round trips of {fit_rtt:.0f} ns (over {BUSY_FIT_RTT_NS}"
                   f" ns: a busy machine's)" if fit_rtt > BUSY_FIT_RTT_NS else
                   f"the sync took {run0['sync_duration_s']:.2f} s for the "
                   f"{run0['planned_s']:g} s it planned (stalled: a busy machine), and "
                   f"the continuous clock's first exchanges came right after it")
            print(f"skip {line}: half-width above {width_cap:.0f} ns, but {why}; not counted")
            continue
        if a.expect == "pass" and chk["after_s"] == 0 and hw * 1e9 > width_cap:
            print(f"FAIL {line}: half-width above {width_cap:.0f} ns (the larger of "
                  f"{a.width_floor_ns:.0f} ns and {a.width_factor} x {levels} x (rtt + 8 noise)"
                  f" x {extra:.2f}, the slope's share after the fit's span: {span:.4f} s, read "
                  f"{dist + chk.get('read_after_s', 0):.4f} s after it)")
            failed += 1
            continue
        if a.expect == "pass" and err > hw * 1e9:
            print(f"FAIL {line}: error beyond the half-width")
            failed += 1
            continue
        print(f"ok   {line}")
if a.expect == "fail" and a.warn is None and outside == 0 and failed + nfail[0] == 0:
    if step_size and not narrow:
        print(f"skip: every bound was wider than the {step_size:.0f} ns step (a busy machine's "
              f"round trips), so the step could not show; not counted")
    else:
        print("FAIL: expected some check with the truth outside the bounds, none was")
        failed += 1
sys.exit(1 if failed + nfail[0] else 0)
