#!/usr/bin/env python3
"""cluster_test.py CASE HCLOCK BINDIR MPI [MPIFORT] - hclock on a cluster of hosts made of Linux
namespaces on this machine (scripts/cluster): each host its own network stack, host name and
CLOCK_MONOTONIC offset, MPI launched through its remote launcher. The offsets are known (the
hosts file), and CLOCK_REALTIME is shared: the truth of every clock.

CASE:
  check   hclock check on 2, 3 and 4 hosts (1-2 ranks each) with the default clock, h2, h3 and
          a flat spec: the node count by host name, the truth (--truth realtime) inside the
          bounds; the truth itself against the hosts' known offsets (--sync none); --truth
          (one machine's clock) refused there
  trace   hclock trace of a C and a Fortran program across 2 hosts with 2 ranks each
          (--event-truth=realtime): every rank's outputs, 0 inversions, every reading's truth
          inside its bounds, the processes named by their host
  align   the tracer's raw files recorded on the hosts' own clocks (--sync none) and the
          pcap captures of each host's link, through hclock align: at every event the truth
          (from the known offsets; pcap: CLOCK_REALTIME, the same on every host) inside the
          bounds align reports
  net     hclock check and hclock bench --placement spread over a link with a token bucket
          (tc tbf) on one host
  cleanup a run killed mid-way, then down: ip netns, ip link and the mounts as before
MPI is openmpi or mpich (scripts/cluster run --mpich). Exit 0 pass, 1 fail, 77 skip (no root,
no time namespaces).
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CLUSTER = os.path.join(ROOT, "scripts", "cluster")
case, hc, bindir, mpi = sys.argv[1:5]
mpifort = sys.argv[5] if len(sys.argv) > 5 else ""
MPICH = mpi == "mpich"
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)


def cluster(*args, timeout=60):
    return subprocess.run([CLUSTER] + list(args), capture_output=True, text=True,
                          timeout=timeout)


def up(n, seed, *extra):
    p = cluster("up", str(n), "--seed", str(seed), *extra)
    if p.returncode == 77:
        print("skip: " + p.stderr.strip())
        sys.exit(77)
    if p.returncode:
        print(f"FAIL scripts/cluster up {n}: {p.stderr.strip()}")
        cluster("down")
        sys.exit(1)
    hosts = [ln.split() for ln in open("/run/hclock-cluster/hosts").read().splitlines()]
    return {h[0]: int(h[2]) for h in hosts}  # name -> CLOCK_MONOTONIC offset, s


def run(args, per_host=1, timeout=180):
    opts = ["--per-host", str(per_host)] + (["--mpich"] if MPICH else [])
    try:
        return subprocess.run([CLUSTER, "run"] + opts + ["--"] + args, capture_output=True,
                              text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        return subprocess.CompletedProcess(e.cmd, 124, e.stdout or "", e.stderr or "")


def state():
    """what the machine has that a cluster could leave behind"""
    ns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    links = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True).stdout
    links = sorted(re.sub(r"^\d+: ", "", ln).split(":")[0] for ln in links.splitlines())
    mounts = sorted(ln.split()[1] for ln in open("/proc/self/mounts"))
    return ns.split(), links, mounts


def check_json(p, what):
    if p.returncode:
        check(False, f"{what}: exit {p.returncode} {p.stderr.strip()[-600:]}")
        return None
    try:
        return json.loads(p.stdout[p.stdout.index("{"):])
    except ValueError:
        check(False, f"{what}: no JSON in {p.stdout[-300:]!r}")
        return None


def case_check():
    for n, per, specs in ((2, 2, ["", "h3(hca3/100/hull/20/span=0.3,prop,prop)"]),
                          (3, 1, ["", "hca3/100/hull/20/span=0.3"]),
                          (4, 1, ["", "h2(hca3/50/hull/10/span=0.2,prop)"])):
        offs = up(n, n)
        for spec in specs:
            what = f"{n} hosts x {per}, sync {spec or 'default'}"
            args = [hc, "check", "--truth", "realtime", "--wait", "0,2", "--format", "json"]
            p = run(args + (["--sync", spec] if spec else []), per)
            j = check_json(p, what)
            if not j:
                continue
            r = j["runs"][0]
            hier = spec == "" or spec.startswith(("h2(", "h3("))
            check(j["nodes"] == n and j["nprocs"] == n * per,
                  f"{what}: {j['nodes']} nodes by host name of {j['nprocs']} processes")
            check(r["hierarchy"]["levels"] == (1 if not hier else 3 if spec.startswith("h3")
                                               else 2) and
                  r["hierarchy"]["nodes"] == (n if hier else 0),
                  f"{what}: hierarchy {r['hierarchy']}")
            for c in r["checks"]:
                check(c.get("truth_in_bounds") is True and
                      c["true_max_abs_error_s"] <= c["bound_half_width_s"],
                      f"{what}: after {c['after_s']} s the truth inside the bounds: true error "
                      f"{c['true_max_abs_error_s'] * 1e9:.0f} ns, half-width "
                      f"{c['bound_half_width_s'] * 1e9:.0f} ns")
        # the truth itself: without a sync the true error is the hosts' offset to node1
        p = run([hc, "check", "--truth", "realtime", "--sync", "none", "--wait", "0",
                 "--format", "json"], per)
        j = check_json(p, f"{n} hosts: --sync none")
        if j:
            want = max(abs(o - offs["node1"]) for o in offs.values()) * 1e9
            got = j["runs"][0]["checks"][0]["true_max_abs_error_s"] * 1e9
            check(abs(got - want) < 1e5, f"{n} hosts, --sync none: the true error {got:.0f} ns "
                  f"is the largest offset between the hosts' clocks, {want:.0f} ns (within "
                  "100 us: the check bites and the truth is right)")
        if n == 3:
            drift_case(offs)
        if n == 4:  # as a user types it: scripts/cluster run sets HCLOCK_TRUTH=realtime
            j = check_json(run([hc, "check", "--wait", "0", "--format", "json"], per),
                           "4 hosts: hclock check without options")
            c = j["runs"][0]["checks"][0] if j else {}
            check(j is not None and j["nodes"] == 4 and c.get("truth_in_bounds") is True,
                  f"4 hosts, hclock check as typed: 4 nodes, the true error "
                  f"{c.get('true_max_abs_error_s', 0) * 1e9:.0f} ns inside the bounds")
        if n == 2:
            p = run([hc, "check", "--truth", "--wait", "0"], per)
            lines = [ln for ln in p.stderr.splitlines() if ln.startswith("hclock check")]
            check(p.returncode != 0 and len(lines) == 1 and "--truth realtime" in lines[0],
                  f"--truth (one machine's clock) across hosts refused in one line naming "
                  f"--truth realtime: exit {p.returncode}, {lines}")
        cluster("down")


def has_align():
    return subprocess.run([hc, "align", "--help"], capture_output=True).returncode == 0


def drift_case(offs):
    """hclock drift across the hosts: on the raw clocks (--sync none) each process's true
    error is its host's offset to node1's and the measured offset agrees with it within half
    the round trip; on the default clock the truth inside the bounds at every probe"""
    j = check_json(run([hc, "drift", "--sync", "none", "--duration", "2", "--interval", "1",
                        "--format", "json"]), "drift --sync none")
    for r in (j or {}).get("ranks", [])[1:]:
        want = (offs[f"node{r['rank'] + 1}"] - offs["node1"]) * 1e9
        bad = [x for x in r["samples"] if x["true_error_ns"] is None or
               abs(x["true_error_ns"] - want) > 1e5 or
               abs(x["offset_ns"] + x["true_error_ns"]) > x["rtt_ns"] / 2 + 1000]
        check(not bad, f"drift --sync none, rank {r['rank']}: every probe's true error is the "
              f"hosts' offset ({want:.0f} ns) and the measured offset its opposite within half "
              f"the round trip ({len(bad)} of {len(r['samples'])} not)")
    j = check_json(run([hc, "drift", "--duration", "2", "--interval", "1", "--format",
                        "json"]), "drift on the default clock")
    for r in (j or {}).get("ranks", [])[1:]:
        bad = [x for x in r["samples"] if x["true_error_ns"] is None or
               x["bound_lo_ns"] is None or
               not (x["bound_lo_ns"] <= -x["true_error_ns"] <= x["bound_hi_ns"])]
        check(not bad, f"drift on the default clock, rank {r['rank']}: the truth inside the "
              f"bounds at every probe ({len(bad)} of {len(r['samples'])} not)")


def trace_one(prog, d, per, what):
    """PROG traced across the hosts into D; with hclock align built, its order repaired
    within the bounds (--repair-order): one timeline with no receive before its send"""
    repair = has_align()
    p = run([hc, "trace", "-o", d, "--event-truth=realtime"] +
            (["--repair-order"] if repair else []) + ["--"] + prog, per)
    check(p.returncode == 0, f"{what}: traced across hosts, exit {p.returncode}" +
          ("" if p.returncode == 0 else p.stderr[-600:]))
    m = re.search(r"true error of (\d+) global readings .*?; (\d+) outside the bounds", p.stderr)
    check(m is not None and int(m.group(1)) > 0 and m.group(2) == "0",
          f"{what}: every reading's truth (CLOCK_REALTIME) inside its bounds: "
          f"{m.group(0) if m else p.stderr[-300:]}")
    inv = re.search(r"(\d+) inversions", p.stderr)
    unproven = re.search(r"shown by the estimate only for (\d+)", p.stderr)
    if repair:
        check("repaired order" in p.stderr, f"{what}: the order repaired within the bounds")
        cv = subprocess.run([hc, "trace", "--convert", d], capture_output=True, text=True)
        inv = re.search(r"(\d+) inversions", cv.stderr)
        check(cv.returncode == 0 and inv is not None and inv.group(1) == "0",
              f"{what}: one timeline, 0 inversions in the repaired trace "
              f"({inv.group(0) if inv else cv.stderr[-300:]})")
    else:  # no repair without hclock align: an inversion only where the bounds prove nothing
        check(inv is not None and unproven is not None and
              int(inv.group(1)) <= int(unproven.group(1)),
              f"{what}: {inv.group(1) if inv else '?'} inversions, each among the "
              f"{unproven.group(1) if unproven else '?'} messages whose order the bounds do "
              "not prove (this build has no hclock align to repair them)")
    return p


def case_trace():
    up(2, 5)
    tmp = tempfile.mkdtemp(prefix="hclock-cluster-trace.")
    try:
        progs = [("C", [os.path.join(bindir, "allreduce_mini"), "300"])]
        if mpifort:
            exe = os.path.join(tmp, "allreduce_mini_f")
            c = subprocess.run([mpifort, "-o", exe, os.path.join(ROOT, "examples",
                                                                 "allreduce_mini.f90")],
                               capture_output=True, text=True)
            check(c.returncode == 0, f"Fortran program compiled ({c.stderr[-300:]})")
            progs.append(("Fortran", [exe, "300"]))
        for lang, prog in progs:
            d = os.path.join(tmp, lang)
            trace_one(prog, d, 2, f"{lang} on 2 hosts x 2")
            raw = sorted(os.listdir(os.path.join(d, "raw")))
            check([f"rank.{r}" for r in range(4)] == [x for x in raw if x.startswith("rank.")],
                  f"{lang}: every rank's raw file ({raw})")
            for f in ("traces.otf2", "trace.pftrace", "trace.json", "profile.json"):
                check(os.path.exists(os.path.join(d, f)), f"{lang}: {f} written")
            names = {}
            with open(os.path.join(d, "trace.json")) as f:
                for e in json.load(f)["traceEvents"]:
                    if e.get("ph") == "M" and e.get("name") == "process_name":
                        names[e["pid"]] = e["args"]["name"]
            want = {r: f"rank {r} (node{r // 2 + 1})" for r in range(4)}
            check(names == want, f"{lang}: processes named by their host {names}")
            g = subprocess.run(["otf2-print", "-G", os.path.join(d, "traces.otf2")],
                               capture_output=True, text=True)
            groups = dict(re.findall(r'^LOCATION_GROUP\s+(\d+)\s.*Parent: "node::([^"]*)"',
                                     g.stdout, re.M))
            check(g.returncode != 0 or groups == {str(r): f"node{r // 2 + 1}" for r in range(4)},
                  f"{lang}: traces.otf2's system tree puts each process under its host {groups}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        cluster("down")


def case_align():
    if not has_align():
        print("skip: this hclock was built without hclock align")
        sys.exit(77)
    offs = up(2, 7)
    tmp = tempfile.mkdtemp(prefix="hclock-cluster-align.")
    caps = []
    try:
        # each host's link captured with the kernel's timestamps (CLOCK_REALTIME)
        for h in ("node1", "node2"):
            f = os.path.join(tmp, f"{h}.pcap")
            log = open(os.path.join(tmp, f"{h}.log"), "w")
            caps.append((subprocess.Popen(
                [CLUSTER, "exec", h, "--", "tcpdump", "-i", "eth0", "-U", "-n",
                 "--time-stamp-precision=nano", "-w", f,
                 "tcp and not host 169.254.77.254"], stdout=log, stderr=log,
                start_new_session=True), f, log))
        for _, f, log in caps:
            for _ in range(100):
                if "listening on" in open(log.name).read():
                    break
                time.sleep(0.05)
        d = os.path.join(tmp, "t")
        p = run([hc, "trace", "-o", d, "--sync", "none", "--",
                 os.path.join(bindir, "allreduce_mini"), "200"], 1)
        check(p.returncode == 0, f"traced on the hosts' own clocks (--sync none), exit "
              f"{p.returncode} {p.stderr[-300:] if p.returncode else ''}")
        prev = None
        for _ in range(40):  # until both captures stop growing
            time.sleep(0.5)
            now = [os.path.getsize(f) if os.path.exists(f) else 0 for _, f, _ in caps]
            if now == prev:
                break
            prev = now
        for c, _, log in caps:  # tcpdump itself (the agent's unshare passes no signal on)
            os.killpg(c.pid, signal.SIGINT)
        for c, _, log in caps:
            c.wait(timeout=20)
            log.close()
        # the raw files: rank r ran on node r+1, its clock off by that host's offset
        raw = [os.path.join(d, "raw", f"rank.{r}") for r in (0, 1)]
        bounds = os.path.join(tmp, "raw.csv")
        al = subprocess.run([hc, "align"] + raw + ["--reference", "rank.0", "--out",
                                                   os.path.join(tmp, "al"), "--bounds", bounds],
                            capture_output=True, text=True)
        check(al.returncode == 0, f"hclock align of the hosts' raw files: exit {al.returncode} "
              f"{al.stderr.strip()[-300:]}")
        shift = (offs["node1"] - offs["node2"]) * 10**9  # node1's clock minus node2's
        judge_bounds(bounds, "rank.1", shift, "raw files")
        # the captures: both on CLOCK_REALTIME, so the truth is the capture's own time
        pb = os.path.join(tmp, "pcap.csv")
        al = subprocess.run([hc, "align", caps[0][1], caps[1][1], "--reference", "node1",
                             "--out", os.path.join(tmp, "alp"), "--bounds", pb],
                            capture_output=True, text=True)
        check(al.returncode == 0, f"hclock align of the hosts' captures: exit {al.returncode} "
              f"{al.stderr.strip()[-300:]}")
        judge_bounds(pb, "node2", 0, "pcap captures")
        if os.environ.get("KEEP"):
            print("kept", tmp); tmp = "/nonexistent"
    finally:
        for c, _, _ in caps:
            if c.poll() is None:
                os.killpg(c.pid, signal.SIGKILL)
        shutil.rmtree(tmp, ignore_errors=True)
        cluster("down")


def judge_bounds(csv, node, shift_ns, what):
    """every event of NODE in align's --bounds CSV: its truth (own time + shift_ns) inside
    [corrected - delta_minus, corrected + delta_plus]"""
    rows = [ln.split(",") for ln in open(csv).read().splitlines()[1:] if ln.startswith(node + ",")]
    outside, worst = 0, 0
    for _, t, c, dm, dp in rows:
        e = int(t) + shift_ns - int(c)
        worst = max(worst, abs(e))
        outside += not (-float(dm) <= e <= float(dp))
    check(len(rows) > 0 and outside == 0, f"{what}: the truth inside align's bounds at all "
          f"{len(rows)} events of {node} ({outside} outside; largest |truth - corrected| "
          f"{worst} ns)")


def case_net():
    up(2, 9, "--rate", "node2=100mbit")
    p = run([hc, "check", "--truth", "realtime", "--wait", "0,1", "--format", "json"], 1)
    j = check_json(p, "check over a 100 Mbit/s token bucket")
    if j:
        for c in j["runs"][0]["checks"]:
            check(c.get("truth_in_bounds") is True, f"rate-limited link: after {c['after_s']} s "
                  f"the truth inside the bounds ({c['true_max_abs_error_s'] * 1e9:.0f} ns, "
                  f"+-{c['bound_half_width_s'] * 1e9:.0f} ns)")
    p = run([hc, "bench", "--quick", "--placement", "spread", "--op", "allreduce,bcast",
             "--sizes", "8,65536", "--format", "json"], 2)
    j = check_json(p, "bench --placement spread across hosts")
    if j:
        check(len(j.get("results", [])) >= 4, f"bench across hosts: {len(j.get('results', []))}"
              " results")
    cluster("down")


def case_cleanup():
    before = state()
    up(2, 11)
    p = subprocess.Popen([CLUSTER, "run"] + (["--mpich"] if MPICH else []) +
                         ["--", hc, "check", "--wait", "0,30"], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, start_new_session=True)
    time.sleep(3)
    os.killpg(p.pid, signal.SIGKILL)  # the run and its launcher, as a killed job
    p.wait()
    d = cluster("down")
    check(d.returncode == 0, f"down after a killed run: exit {d.returncode} {d.stderr.strip()}")
    after = state()
    check(after == before, "ip netns, ip link and the mounts as before up"
          + ("" if after == before else f": before {before}, after {after}"))
    left = subprocess.run(["pgrep", "-f", "hclock check --wait 0,30"], capture_output=True,
                          text=True).stdout.split()
    check(not left, f"no process of the killed run left ({left})")


try:
    {"check": case_check, "trace": case_trace, "align": case_align, "net": case_net,
     "cleanup": case_cleanup}[case]()
finally:
    if case != "cleanup":
        cluster("down")
if failures:
    print(f"{len(failures)} check(s) failed")
    sys.exit(1)
print("all checks passed")
