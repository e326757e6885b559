#!/usr/bin/env python3
"""rounds.py HCLOCK MPIRUN MPIEXEC NP NODES: h2 needs fewer ping-pong rounds (and fewer
ping-pongs on the busiest rank) than flat HCA3 with the same parameters on NODES emulated
nodes of NP ranks; both counted by hclock check itself. With the key paper: no retakes, whose
ping-pongs (a busy machine's stalls) would make the counts depend on the run's luck."""
import json, math, subprocess, sys

hc, mpirun, mpiexec, np, nodes = sys.argv[1:6]
np, nodes = int(np), int(nodes)
def run(spec):
    p = subprocess.run([mpirun, mpiexec, str(np), hc, "check", "--sync", spec, "--wait", "0",
                        "--emulate", f"offset=1,skew=1e-4,nodes={nodes},seed=3", "--format", "json"],
                       capture_output=True, text=True)
    if p.returncode:
        sys.exit(f"FAIL {spec}: {p.stderr}")
    return json.loads(p.stdout)["runs"][0]
flat = run("hca3/10/skampi/5/paper")
h2 = run("h2(hca3/10/skampi/5/paper,prop)")
want_flat = math.ceil(math.log2(np))
want_h2 = math.ceil(math.log2(nodes))
print(f"np={np} nodes={nodes}: hca3 rounds={flat['rounds']} (expect {want_flat}) "
      f"pingpongs_max={flat['pingpongs_max']}; h2 rounds={h2['rounds']} (expect {want_h2}) "
      f"pingpongs_max={h2['pingpongs_max']}")
ok = flat["rounds"] == want_flat and h2["rounds"] == want_h2 and h2["rounds"] < flat["rounds"] \
    and h2["pingpongs_max"] < flat["pingpongs_max"]
sys.exit(0 if ok else 1)
