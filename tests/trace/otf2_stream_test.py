#!/usr/bin/env python3
"""otf2_stream_test.py HELPER - the OTF2 writer on records made by hand
(tests/trace/test_otf2_stream.c): otf2-print reads DIR/traces.otf2 without an error and
finds exactly the events expected, location by location in time order: a send held until
its call's enter, a bound sample (Metric) taken just after a call's enter written after that
Enter (never moving the Enter later) and after the sends made at that enter (never moving
them later: a send's record carries its call's enter time), a persistent send after its MPI_Start's record written inside that call,
a receive and a nonblocking collective's completion before the leave of the call that
completed them, the request at its start call's enter, a blocking collective's begin and
end, a cut file's last send, a second thread's own location, a nonblocking collective started
there and completed by the first thread with its Request and Complete (one request id) on
the starting thread's location, the Complete inside the call that thread was in then, two
samples that came while a call's end was held (a call that blocked for long: at its enter and
its leave) both written, another process's function
numbering and communicator mapped to the global ones, an empty location for a rank with no
records. The comparison bites: the expected list with two events swapped must differ."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tracecheck  # noqa: E402
from tracecheck import check  # noqa: E402

W, C = "MPI_COMM_WORLD", "comm 0000000000000abc"
EXPECTED = [  # (kind, location, time, region or communicator)
    ("ENTER", 0, 100, "MPI_Send"), ("METRIC", 0, 102, None), ("MPI_SEND", 0, 110, W),
    ("LEAVE", 0, 120, "MPI_Send"),
    ("ENTER", 0, 200, "MPI_Start"), ("MPI_SEND", 0, 200, W), ("METRIC", 0, 201, None),
    ("LEAVE", 0, 210, "MPI_Start"),
    ("ENTER", 0, 300, "MPI_Iallreduce"), ("NON_BLOCKING_COLLECTIVE_REQUEST", 0, 300, None),
    ("LEAVE", 0, 310, "MPI_Iallreduce"),
    ("ENTER", 0, 400, "MPI_Allreduce"), ("MPI_COLLECTIVE_BEGIN", 0, 400, None),
    ("METRIC", 0, 403, None),
    ("MPI_COLLECTIVE_END", 0, 450, C), ("LEAVE", 0, 450, "MPI_Allreduce"),
    ("ENTER", 0, 500, "MPI_Waitall"), ("MPI_RECV", 0, 520, W),
    ("NON_BLOCKING_COLLECTIVE_COMPLETE", 0, 520, W), ("LEAVE", 0, 520, "MPI_Waitall"),
    ("ENTER", 0, 800, "MPI_Wait"), ("LEAVE", 0, 820, "MPI_Wait"),
    ("MPI_SEND", 0, 900, W),
    ("ENTER", 1, 105, "MPI_Wait"), ("LEAVE", 1, 115, "MPI_Wait"),
    ("ENTER", 1, 700, "MPI_Iallreduce"), ("NON_BLOCKING_COLLECTIVE_REQUEST", 1, 700, None),
    ("LEAVE", 1, 710, "MPI_Iallreduce"), ("ENTER", 1, 790, "MPI_Waitall"),
    ("NON_BLOCKING_COLLECTIVE_COMPLETE", 1, 820, W), ("LEAVE", 1, 850, "MPI_Waitall"),
    ("ENTER", 1024, 130, "MPI_Send"), ("MPI_SEND", 1024, 130, C), ("METRIC", 1024, 132, None),
    ("LEAVE", 1024, 140, "MPI_Send"),
    ("ENTER", 1024, 150, "MPI_Wait"), ("METRIC", 1024, 152, None), ("LEAVE", 1024, 300, "MPI_Wait"),
    ("METRIC", 1024, 302, None),
]


def events(out):
    """otf2-print's event lines as (kind, location, time, region or communicator), sorted
    by location, then in their order"""
    ev = []
    for line in out.splitlines():
        w = line.split(None, 3)
        if len(w) < 3 or not w[0].isupper() or not w[1].isdigit() or not w[2].isdigit():
            continue
        m = re.search(r'(?:Region|Communicator): "([^"]*)"', w[3] if len(w) > 3 else "")
        ev.append((w[0], int(w[1]), int(w[2]), m.group(1) if m else None))
    return sorted(ev, key=lambda e: e[1])  # stable: each location's own order kept


helper = sys.argv[1]
tmp = tempfile.mkdtemp(prefix="hclock-otf2-stream.")
h = subprocess.run([helper, tmp], capture_output=True, text=True)
check(h.returncode == 0, f"the writer and the assembly succeed ({h.returncode}) {h.stderr}")
pr = subprocess.run(["otf2-print", os.path.join(tmp, "traces.otf2")], capture_output=True,
                    text=True)
got = events(pr.stdout)
want = sorted(EXPECTED, key=lambda e: e[1])
diff = [(a, b) for a, b in zip(got, want) if a != b]
check(pr.returncode == 0 and not pr.stderr and got == want,
      f"otf2-print reads the archive ({pr.returncode}) and finds the {len(want)} events "
      f"expected ({len(got)}; first differences {diff[:3]}) {pr.stderr[-300:]}")
tracecheck.check_otf2_nbc(pr.stdout.splitlines(), 2, "traces.otf2")
swapped = list(want)
swapped[1], swapped[2] = swapped[2], swapped[1]
check(swapped != got, "the comparison finds two events swapped")
g = subprocess.run(["otf2-print", "-G", os.path.join(tmp, "traces.otf2")],
                   capture_output=True, text=True)
locs = re.findall(r"^LOCATION\s+(\d+)\s.*# Events: (\d+)", g.stdout, re.M)
check(g.returncode == 0 and not g.stderr and
      sorted((int(a), int(b)) for a, b in locs) == [(0, 23), (1, 8), (1024, 8), (2048, 0)],
      f"locations with their event counts: {locs} (expected 0: 23, 1: 8, 1024: 8, 2048: 0) "
      f"{g.stderr[-300:]}")
# the host of each process as a node of the system tree (rank 0's part says hostA, rank 1's
# none, rank 2 has no part): under the machine's node, the others under the machine itself
tree = dict(re.findall(r'^SYSTEM_TREE_NODE\s+(\d+)\s+Name: "([^"]*)"', g.stdout, re.M))
groups = dict(re.findall(r'^LOCATION_GROUP\s+(\d+)\s.*Parent: "node::([^"]*)"', g.stdout,
                         re.M))
check(tree == {"0": "machine", "1": "hostA"} and
      groups == {"0": "hostA", "1": "machine", "2": "machine"},
      f"the hosts in the system tree: nodes {tree}, the processes' parents {groups}")
parts = sorted(os.listdir(os.path.join(tmp, "parts"))) if os.path.isdir(
    os.path.join(tmp, "parts")) else []
check(not parts, f"the parts are gone once in the archive ({parts})")
if tracecheck.failed:
    print(f"files kept in {tmp}")
    sys.exit(1)
shutil.rmtree(tmp, ignore_errors=True)
