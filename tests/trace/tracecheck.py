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
counters = {}  # load_pftrace: the counter samples per pid


def check(ok, what):
    global failed
    print(("ok   " if ok else "FAIL ") + what)
    failed += not ok


def launch(run, mpiexec, np_, args, timeout=120, cwd=None, env=None):
    """run args on np_ ranks; env: variables added for this launch"""
    env = dict(os.environ, HCLOCK_TEST_TIMEOUT=str(timeout), **(env or {}))
    return subprocess.run([run, mpiexec, str(np_)] + args, capture_output=True, text=True,
                          env=env, cwd=cwd)


def traced_truth(hc, run, mpiexec, np_, d, emu, prog, what, timeout=120):
    """PROG traced into D on NP_ ranks under --emulate EMU with --event-truth, its exit and
    truth line checked: (the launch, the summary's messages paired, the largest true error
    in ns or None)"""
    p = launch(run, mpiexec, np_, [hc, "trace", "-o", d, "--emulate", emu, "--event-truth",
                                   "--"] + prog, timeout)
    check(p.returncode == 0, f"{what}: traced run, exit {p.returncode}" +
          ("" if p.returncode == 0 else p.stderr[-400:]))
    m = re.search(r"p99.9 <= \d+ ns, max (\d+) ns", p.stderr)
    check(m is not None, f"{what}: the --event-truth line" + ("" if m else p.stderr[-300:]))
    return p, summary_num(p.stderr, "messages paired"), int(m.group(1)) if m else None


def slices(ev, name, pid=None):
    """the complete events (MPI calls) named NAME, of process PID (None: all)"""
    return sum(1 for e in ev if e.get("ph") == "X" and e["name"] == name and
               (pid is None or e.get("pid") == pid))


def gantt_bars(svg):
    """the operation's bars in an SVG of hclock gantt (both panels), or the parse error"""
    import xml.etree.ElementTree as ET
    try:
        root = ET.parse(svg).getroot()
    except Exception as e:  # noqa: BLE001 - any parse error is the finding
        return str(e)
    return sum(1 for e in root.iter("{http://www.w3.org/2000/svg}rect")
               if e.get("fill") == "#d62728")


def summary_num(err, what):
    """the number before WHAT in the summary on stderr (None: not there)"""
    m = re.search(r"(\d+) " + what, err)
    return int(m.group(1)) if m else None


def load(d):
    with open(os.path.join(d, "trace.json")) as f:
        return json.load(f)["traceEvents"]


def load_checked(d):
    """trace.json's events, or [] and a failed check when it does not parse; what parses is
    checked against Perfetto's import rules (perfetto_problems)"""
    try:
        ev = load(d)
    except Exception as e:  # noqa: BLE001 - any parse error is the finding
        check(False, f"trace.json parses: {e}")
        return []
    bad = perfetto_problems(ev)
    check(not bad, f"trace.json keeps Perfetto's import rules ({len(ev)} events): {bad[:5]}")
    if os.path.exists(os.path.join(d, "trace.pftrace")):
        check_pftrace_against_json(d, ev)
    elif "HCLOCK_TRACE_NEED_PFTRACE" in os.environ:
        check(False, "no trace.pftrace written")
    return ev


_pb = None


def pftrace_module():
    """the test's schema (pftrace.proto) compiled with protoc, imported"""
    global _pb
    if _pb is None:
        import importlib
        import tempfile
        here = os.path.dirname(os.path.abspath(__file__))
        import atexit
        import shutil
        out = tempfile.mkdtemp(prefix="hclock-pb-")
        atexit.register(shutil.rmtree, out, True)  # the module is loaded by then
        subprocess.run(["protoc", "-I", here, "--python_out", out,
                        os.path.join(here, "pftrace.proto")], check=True)
        sys.path.insert(0, out)
        try:
            import google.protobuf  # noqa: F401
        except ImportError:  # a Python of its own (pyenv): Debian's python3-protobuf
            sys.path.append("/usr/lib/python3/dist-packages")
        _pb = importlib.import_module("pftrace_pb2")
    return _pb


def load_pftrace(d):
    """DIR/trace.pftrace decoded and checked as Perfetto's importer reads it: per sequence,
    a packet that clears the incremental state before any that uses it, the incremental
    clock summed, names interned before use; every end of a slice closes a begin on its
    track (one begin per end, none left open), each flow id started at most once and ended
    at most once, on a slice; an instant event (where recording stopped) named. Returns
    (problems, slices {(pid, name): n}, flows with both ends, events, bytes, instants
    {(pid, name): n}); the counter samples (the clock's bound half-width) in the global
    counters {pid: [(ts, value)]}, each on a counter track; the launcher's wait-state marks
    (slices and instants on the tracks "wait states") in the global wait_marks
    {(pid, pattern title): n}, not among the slices and instants."""
    pb = pftrace_module()
    data = open(os.path.join(d, "trace.pftrace"), "rb").read()
    tr = pb.Trace()
    tr.ParseFromString(data)
    probs, seqs, tracks, pid_of, per_track, instants = [], {}, {}, {}, {}, {}
    global counters
    counters = {}
    for p in tr.packet:
        if p.HasField("track_descriptor"):
            td = p.track_descriptor
            if td.uuid in tracks:
                probs.append(f"track {td.uuid} described twice")
            tracks[td.uuid] = td
    for td in tracks.values():
        if td.HasField("process"):
            pid_of[td.uuid] = td.process.pid
    # the launcher's wait-state marks (a track "wait states" per process): the protobuf's
    # only, kept apart from the slices and instants that trace.json has too
    global wait_marks
    wait_marks = {}
    wait_tracks = {u for u, td in tracks.items() if td.name == "wait states"}
    for td in tracks.values():
        if not td.HasField("process"):
            if td.parent_uuid not in pid_of:
                probs.append(f"track {td.uuid}: parent {td.parent_uuid} not a process track")
            pid_of[td.uuid] = pid_of.get(td.parent_uuid, -1)
    events = 0
    for i, p in enumerate(tr.packet):
        sid = p.trusted_packet_sequence_id
        if p.sequence_flags & 1:
            seqs[sid] = {"clock": None, "inc": 0, "names": {}, "dnames": {}, "track": None}
        st = seqs.get(sid)
        if p.HasField("clock_snapshot"):
            for c in p.clock_snapshot.clocks:
                if c.is_incremental and st is not None:
                    st["inc"] = c.timestamp
        if p.HasField("trace_packet_defaults") and st is not None:
            st["clock"] = p.trace_packet_defaults.timestamp_clock_id
            st["track"] = p.trace_packet_defaults.track_event_defaults.track_uuid
            # a process's main thread (track (rank + 1) << 32 | 1) on sequence 1 + rank: one
            # byte a packet for up to 127 processes
            if st["track"] & 0xffffffff == 1 and sid != st["track"] >> 32:
                probs.append(f"sequence {sid}: the main thread of process {st['track'] >> 32}")
        if p.HasField("interned_data") and st is not None:
            for n in p.interned_data.event_names:
                # a process's own sequences count iids up in the order of first use (small
                # iids: one byte each); the launcher's order marks intern two at once
                if n.iid != len(st["names"]) + 1 and p.HasField("track_event"):
                    probs.append(f"sequence {sid}: name {n.name} interned as {n.iid}, not "
                                 f"{len(st['names']) + 1} (the next in first use)")
                st["names"][n.iid] = n.name
            for n in p.interned_data.debug_annotation_names:
                st["dnames"][n.iid] = n.name
        if not p.HasField("track_event"):
            continue
        events += 1
        if st is None:
            probs.append(f"packet {i}: sequence {sid} used before its state was cleared")
            continue
        if p.HasField("timestamp_clock_id") and p.timestamp_clock_id != st["clock"]:
            ts = p.timestamp
        else:
            st["inc"] += p.timestamp
            ts = st["inc"]
        te = p.track_event
        tk = te.track_uuid if te.HasField("track_uuid") else st["track"]
        if tk not in tracks:
            probs.append(f"packet {i}: track {tk} not described")
        name = None
        if te.type == 4:
            td = tracks.get(tk)
            if td is None or not td.HasField("counter"):
                probs.append(f"packet {i}: a counter value on track {tk}, no counter track")
            elif not te.HasField("counter_value") or te.counter_value < 0:
                probs.append(f"packet {i}: a counter event without a value >= 0")
            counters.setdefault(pid_of.get(tk, -1), []).append((ts, te.counter_value))
            continue
        if te.type == 3:
            iname = te.name or st["names"].get(te.name_iid)
            if not iname:
                probs.append(f"packet {i}: an instant event without a name (or interned one)")
            for a in te.debug_annotations:
                if not a.name and a.name_iid not in st["dnames"]:
                    probs.append(f"packet {i}: annotation name {a.name_iid} not interned")
            key = (pid_of.get(tk, -1), iname)
            into = wait_marks if tk in wait_tracks else instants
            into[key] = into.get(key, 0) + 1
        if te.type == 1:
            if te.name_iid not in st["names"]:
                probs.append(f"packet {i}: name {te.name_iid} not interned on sequence {sid}")
            name = st["names"].get(te.name_iid, "?")
        per_track.setdefault(tk, []).append((ts, i, te.type, name, list(te.flow_ids_old),
                                             list(te.terminating_flow_ids_old)))
    slices_n, starts, ends = {}, {}, {}
    for tk, evs in per_track.items():
        evs.sort(key=lambda e: (e[0], e[1]))
        stack = []
        for ts, i, typ, name, fl, tf in evs:
            if typ == 1:
                stack.append((ts, name))
                key = (pid_of.get(tk, -1), name)
                into = wait_marks if tk in wait_tracks else slices_n
                into[key] = into.get(key, 0) + 1
            elif typ == 2:
                if not stack:
                    probs.append(f"track {tk}: an end at {ts} without a begin")
                    continue
                stack.pop()
            for f in fl:
                starts[f] = starts.get(f, 0) + 1
            for f in tf:
                ends[f] = ends.get(f, 0) + 1
        if stack:
            probs.append(f"track {tk}: {len(stack)} slices never ended")
    probs += [f"flow {f} wider than 42 bits" for f in list(starts) + list(ends) if f >> 42]
    probs += [f"flow {f} started {n} times" for f, n in starts.items() if n > 1]
    probs += [f"flow {f} ended {n} times" for f, n in ends.items() if n > 1]
    both = sum(1 for f in starts if f in ends)
    return probs, slices_n, both, events, len(data), instants


def check_pftrace_against_json(d, ev):
    """trace.pftrace keeps the import rules and has the slices and arrows of trace.json"""
    try:
        probs, sl, flows, events, nbytes, inst = load_pftrace(d)
    except Exception as e:  # noqa: BLE001 - any decoding error is the finding
        check(False, f"trace.pftrace decodes with the schema from Perfetto's .proto: {e}")
        return
    js = {}
    for e in ev:
        if e.get("ph") in ("X", "b"):
            k = (e["pid"] + 1, e["name"])
            js[k] = js.get(k, 0) + 1
    ids = {}
    for e in ev:
        if e.get("ph") in ("s", "f"):
            ids.setdefault(e["id"], set()).add(e["ph"])
    jflows = sum(1 for v in ids.values() if v == {"s", "f"})
    jinst = {}
    for e in ev:
        if e.get("ph") == "i":
            jinst[(e["pid"] + 1, e["name"])] = jinst.get((e["pid"] + 1, e["name"]), 0) + 1
    diff = {k: (sl.get(k), js.get(k)) for k in set(sl) | set(js) if sl.get(k) != js.get(k)}
    # the launcher's marks of message order are in the protobuf only
    inst = {k: v for k, v in inst.items() if not k[1].startswith("order ")}
    if inst != jinst:
        diff["instants"] = (inst, jinst)
    jc = {}
    for e in ev:
        if e.get("ph") == "C":
            jc[e["pid"] + 1] = jc.get(e["pid"] + 1, []) + [e["args"]["ns"]]
    pc = {k: [v for _, v in sorted(x)] for k, x in counters.items()}
    if {k: sorted(v) for k, v in pc.items()} != {k: sorted(v) for k, v in jc.items()}:
        diff["counters"] = ({k: len(v) for k, v in pc.items()}, {k: len(v) for k, v in jc.items()})
    check(not probs and not diff and flows == jflows,
          f"trace.pftrace decodes ({nbytes} bytes, {events} track events) and keeps Perfetto's "
          f"import rules: {probs[:4]}; the slices of trace.json per process and name "
          f"{'' if not diff else list(diff.items())[:4]}, {flows} flows with both ends "
          f"(trace.json {jflows})")


def flow_mismatches(ev):
    """(pairs, problems): every message flow of trace.json joined by its id; a problem where
    the two ends disagree on what the message was (sender, receiver, tag, bytes: the send's
    arguments against the receive's status) or an id has not exactly one start and one end"""
    starts, ends, bad = {}, {}, []
    for e in ev:
        if e.get("ph") == "s" and e.get("cat") == "p2p":
            if e["id"] in starts:
                bad.append(f"id {e['id']}: two starts")
            starts[e["id"]] = e
        elif e.get("ph") == "f" and e.get("cat") == "p2p":
            if e["id"] in ends:
                bad.append(f"id {e['id']}: two ends")
            ends[e["id"]] = e
    for i in set(starts) ^ set(ends):
        bad.append(f"id {i}: {'no end' if i in starts else 'no start'}")
    for i in set(starts) & set(ends):
        s, f = starts[i], ends[i]
        a, b = s.get("args", {}), f.get("args", {})
        if (s["pid"], a.get("to"), a.get("tag"), a.get("bytes")) != \
                (b.get("from"), f["pid"], b.get("tag"), b.get("bytes")):
            bad.append(f"id {i}: sent {s['pid']}->{a.get('to')} tag {a.get('tag')} "
                       f"{a.get('bytes')} B, received {b.get('from')}->{f['pid']} tag "
                       f"{b.get('tag')} {b.get('bytes')} B")
    return len(set(starts) & set(ends)), bad


def perfetto_problems(ev):
    """What ui.perfetto.dev's JSON importer would drop or count as an error in these events
    (its rules as read in its trace processor: json_trace_parser_impl.cc, slice_tracker.cc,
    flow_tracker.cc): every event has a phase, an integer pid and tid; an instant event ('i')
    a name and a scope ("s": "t", "p" or "g"); a complete event ('X')
    a numeric ts and a dur >= 0; complete events on one thread nest or are disjoint (a
    partial overlap is dropped; intervals closed on the left, open on the right); an async
    pair ('b'/'e') has a cat and an id, one end per begin, not before it; a flow start ('s')
    and a flow end bound to its enclosing slice ('f', "bp":"e") lie inside a complete event
    of their thread (else the arrow has no slice to leave or reach), each flow id at most once each
    (one end alone: its partner is not in the trace, and Perfetto leaves the arrow undrawn)."""
    import bisect
    probs = []

    def ns(t):
        return round(float(t) * 1000)

    tracks, flows, asyncs = {}, {}, {}
    for e in ev:
        ph = e.get("ph")
        if not isinstance(ph, str) or not isinstance(e.get("pid"), int) or \
                not isinstance(e.get("tid"), int):
            probs.append(f"no phase, pid or tid: {e}")
            continue
        if ph == "M":
            continue
        if not isinstance(e.get("ts"), (int, float)):
            probs.append(f"no numeric ts: {e}")
            continue
        key = (e["pid"], e["tid"])
        if ph == "X":
            if not isinstance(e.get("dur"), (int, float)) or e["dur"] < 0:
                probs.append(f"complete event without a dur >= 0: {e}")
                continue
            tracks.setdefault(key, []).append((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), e["name"]))
        elif ph in ("b", "e"):
            if not e.get("cat") or "id" not in e:
                probs.append(f"async event without cat or id: {e}")
                continue
            asyncs.setdefault((e["pid"], e["cat"], e["id"], e.get("name")), []).append((ph, ns(e["ts"])))
        elif ph == "C":
            if not e.get("name") or not isinstance(e.get("args"), dict) or \
                    not all(isinstance(v, (int, float)) for v in e["args"].values()):
                probs.append(f"counter event without a name or numeric args: {e}")
        elif ph == "i":
            if not e.get("name") or e.get("s") not in ("t", "p", "g"):
                probs.append(f"instant event without a name or scope: {e}")
        elif ph in ("s", "f"):
            if "id" not in e:
                probs.append(f"flow event without id: {e}")
                continue
            if ph == "f" and e.get("bp") != "e":
                probs.append(f"flow end not bound to its enclosing slice: {e}")
            flows.setdefault((e.get("cat"), e.get("name"), e["id"]), []).append((ph, key, ns(e["ts"])))
        else:
            probs.append(f"phase {ph!r} not written by hclock: {e}")
    starts = {}
    for key, sl in tracks.items():
        sl.sort(key=lambda x: (x[0], -x[1]))
        stack = []
        for s, t, name in sl:
            while stack and (stack[-1][1] < s or (stack[-1][1] == s and not (stack[-1][0] == t == s))):
                stack.pop()
            if stack and s < stack[-1][1] < t:
                probs.append(f"rank {key[0]}: {name} [{s}, {t}] ns overlaps {stack[-1][2]} "
                             f"[{stack[-1][0]}, {stack[-1][1]}] partly")
            stack.append((s, t, name))
        starts[key] = [x[0] for x in sl]
    for k, v in asyncs.items():
        b = sorted(t for ph, t in v if ph == "b")
        e = sorted(t for ph, t in v if ph == "e")
        if len(b) != len(e) or any(y < x for x, y in zip(b, e)):
            probs.append(f"async {k}: {len(b)} begins, {len(e)} ends")
    for k, v in flows.items():
        # one end alone (its partner filtered out, or lost with a process that died) is a
        # flow Perfetto leaves undrawn; two of one kind would join the wrong slices
        if sorted(ph for ph, _, _ in v) not in (["f", "s"], ["s"], ["f"]):
            probs.append(f"flow {k}: {[ph for ph, _, _ in v]} (at most one s and one f expected)")
            continue
        for ph, key, t in v:
            sl, st = tracks.get(key, []), starts.get(key, [])
            i = bisect.bisect_right(st, t) - 1
            j = i
            while j >= 0 and i - j < 64 and sl[j][1] < t:
                j -= 1
            if j < 0 or i - j >= 64 or sl[j][1] < t:
                probs.append(f"flow {k}: its {ph} at {t} ns on rank {key[0]} is in no slice")
    return probs


def inversions_in_bounds(d):
    """the receives before their sends in d's trace.json, as (sender pid, receiver pid, ns
    early), those of them beyond what the two processes' largest sampled bound half-widths
    allow, and those half-widths per pid (ns)"""
    ev = load(d)
    hw = {}
    for e in ev:
        if e.get("ph") == "C" and e.get("name") == "clock bound half-width":
            hw[e["pid"]] = max(hw.get(e["pid"], 0), e["args"]["ns"])
    flows = {}
    for e in ev:
        if e.get("cat") == "p2p" and e.get("ph") in ("s", "f"):
            flows.setdefault(e["id"], {})[e["ph"]] = e
    inv = [(f["s"]["pid"], f["f"]["pid"], round((float(f["s"]["ts"]) - float(f["f"]["ts"])) * 1000))
           for f in flows.values() if len(f) == 2 and float(f["f"]["ts"]) < float(f["s"]["ts"])]
    beyond = [(a, b, ns, hw.get(a, 0) + hw.get(b, 0)) for a, b, ns in inv
              if ns > hw.get(a, 0) + hw.get(b, 0)]
    return inv, beyond, hw


def check_inversions(err, d):
    """The tracer's summary err and trace.json in d: a receive before its send on the global
    clock only where the two processes' bound half-widths cover it (the estimate's error,
    which the bounds allow), and (--event-truth) the truth inside the bounds the message
    records carry at every reading, so that the allowance is no excuse."""
    n = summary_num(err, "inversions")
    inv, beyond, hw = inversions_in_bounds(d) if n else ([], [], {})
    if n:
        print(f"note {n} inversions (receive before send by {sorted(x[2] for x in inv)[:20]} "
              f"ns), bound half-widths up to {hw} ns")
    check(n is not None and len(inv) == n and not beyond,
          f"summary: {n} inversions, none beyond what the two processes' bound half-widths "
          f"allow ({beyond[:3]})")
    m = re.search(r"(\d+) outside the bounds their message records would carry", err)
    check(m is not None and int(m.group(1)) == 0,
          f"--event-truth: the truth inside the bounds the message records carry "
          f"({m.group(0) if m else 'no true error line'})")


def check_exits(plain, traced):
    """the untraced and the traced launch both exited 0"""
    check(plain.returncode == 0 and traced.returncode == 0,
          f"exit codes untraced {plain.returncode}, traced {traced.returncode}: "
          f"{traced.stderr[-800:]}")


def check_align(hc, otf2, out, nodes, err=""):
    """hclock align reads OTF2 back: NODES nodes, 0 inversions (a build without hclock align,
    HCLOCK_ALIGN=OFF, still writes OTF2: skipped there). Where the trace itself holds
    receives before their sends (counted by its summary in ERR, the launch's stderr; the
    tracer's clock inside its bounds, which check_inversions holds: 24 in a busy run's LAMMPS
    trace, bounds up to 2.3 ms wide), no line may separate a pair's hulls: align then falls
    back with its warning, and its inversions are said, not counted"""
    h = subprocess.run([hc, "align", "--help"], capture_output=True, text=True)
    if h.returncode != 0:
        print(f"skip hclock align reads traces.otf2 back: not built ({h.stderr.strip()[-100:]})")
        return
    al = subprocess.run([hc, "align", otf2, "--out", out, "--format", "json"],
                        capture_output=True, text=True)
    inverted, fell = summary_num(err, "inversions") or 0, []
    try:
        rep = json.loads(al.stdout)
        inv = sum(nd["inversions"] for nd in rep["nodes"])
        ok = al.returncode == 0 and len(rep["nodes"]) == nodes
        fell = [nd["node"] for nd in rep["nodes"] if nd.get("quality") == "fallback"]
    except Exception as e:  # noqa: BLE001 - any parse error is the finding
        ok, inv = False, str(e)
    if ok and inv and inverted and fell and "hulls intersect" in al.stderr:
        print(f"skip hclock align reads traces.otf2 back with 0 inversions: the trace holds "
              f"{inverted} receives before their sends (inside its bounds), so no line "
              f"separates the hulls of {fell}: align fell back with its warning, {inv} "
              f"inversions; not counted")
        return
    check(ok and inv == 0, f"hclock align reads traces.otf2 back: {inv} inversions "
          f"{al.stderr.strip()[-300:]}")


def otf2_scan(lines):
    """otf2-print's event lines (KIND LOCATION TIME ...): (counts per kind, per location its
    counts per kind and per entered region, the first events found before their location's
    previous one, per (rank, MPI_SEND or MPI_RECV) the times)"""
    kinds, locs, back, last, times = {}, {}, [], {}, {}
    for line in lines:
        w = line.split(None, 3)
        if len(w) < 3 or not w[0].isupper() or not w[1].isdigit() or not w[2].isdigit():
            continue
        kind, loc, t = w[0], int(w[1]), int(w[2])
        kinds[kind] = kinds.get(kind, 0) + 1
        per = locs.setdefault(loc, {})
        per[kind] = per.get(kind, 0) + 1
        if kind == "ENTER" and len(w) > 3:
            m = re.search(r'Region: "([^"]*)"', w[3])
            if m:
                per[m.group(1)] = per.get(m.group(1), 0) + 1
        if t < last.get(loc, 0) and len(back) < 5:
            back.append(line.strip())
        last[loc] = max(t, last.get(loc, 0))
        if kind in ("MPI_SEND", "MPI_RECV"):
            times.setdefault((loc // 1024, kind), []).append(t)
    return kinds, locs, back, times


def otf2_nbc_unpaired(lines):
    """otf2-print's NonBlockingCollectiveRequest/Complete lines paired per location by request
    id, as OTF2's readers pair them: (pairs, the lines left unpaired or completed before their
    request)"""
    open_, pairs, bad = {}, 0, []
    for line in lines:
        w = line.split(None, 3)
        if len(w) < 4 or not w[0].startswith("NON_BLOCKING_COLLECTIVE_"):
            continue
        m = re.search(r"Request: (\d+)", w[3])
        key = (int(w[1]), m.group(1) if m else None)
        if w[0].endswith("_REQUEST"):
            open_[key] = line.strip()
        elif open_.pop(key, None) is None:
            bad.append(line.strip())
        else:
            pairs += 1
    return pairs, bad + list(open_.values())


def check_otf2_nbc(lines, n, what):
    """N nonblocking collectives, each one's Request and Complete on one location with one
    request id (and the check bites: a Complete moved to another location is found)"""
    pairs, bad = otf2_nbc_unpaired(lines)
    check(pairs == n and not bad, f"{what}: {pairs} nonblocking collectives of {n} with their "
          f"Request and Complete on one location; unpaired: {bad[:3]}")
    moved = ["NON_BLOCKING_COLLECTIVE_REQUEST 0 5  Request: 5",
             "NON_BLOCKING_COLLECTIVE_COMPLETE 1 6  Operation: BARRIER, Request: 5"]
    check(otf2_nbc_unpaired(moved)[1], "the pairing check finds a Complete on another location")


def otf2_time_mismatches(times, ev):
    """OTF2's MpiSend/MpiRecv times per rank against trace.json's flow starts/ends (ns since
    the job's origin): the (rank, kind)s whose sorted times differ by more than one constant
    (the origin) or in number"""
    bad = []
    for (rank, kind), ts in sorted(times.items()):
        ph = "s" if kind == "MPI_SEND" else "f"
        js = sorted(round(float(e["ts"]) * 1000) for e in ev
                    if e.get("ph") == ph and e.get("pid") == rank and e.get("cat") == "p2p")
        diffs = {a - b for a, b in zip(sorted(ts), js)}
        if len(ts) != len(js) or len(diffs) > 1:
            bad.append((rank, kind, len(ts), len(js), len(diffs)))
    return bad


def check_otf2_times(times, ev):
    """every MpiSend/MpiRecv at its record's time (trace.json's), and the check bites"""
    bad = otf2_time_mismatches(times, ev)
    check(times and not bad, f"traces.otf2: every MpiSend and MpiRecv at the time of its "
          f"trace.json flow end ({len(times)} rank/kind lists; off: {bad[:3]})")
    k = next(iter(times), None)
    if k:
        moved = dict(times)
        moved[k] = sorted(times[k])[:-1] + [sorted(times[k])[-1] + 7]
        check(otf2_time_mismatches(moved, ev) or len(times[k]) < 2,
              "the time check finds one message moved by 7 ns")


def otf2_read(path):
    """otf2-print on PATH, streamed through otf2_scan: (exit code, its stderr's end, scan)"""
    pr = subprocess.Popen(["otf2-print", path], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True)
    scan = otf2_scan(pr.stdout)
    err = pr.stderr.read()
    return pr.wait(), err[-300:], scan


def otf2_checked(path, ev):
    """otf2_read, then every location in time order and every MpiSend/MpiRecv at its
    trace.json time: (exit code, its stderr's end, (counts, locations))"""
    code, perr, (cnt, locs, back, times) = otf2_read(path)
    check_otf2_order(back, "traces.otf2")
    check_otf2_times(times, ev)
    return code, perr, (cnt, locs)


def check_otf2_order(back, what):
    """every location's events in time order (and the check bites: a swapped pair is found)"""
    check(not back, f"{what}: every location's events in time order ({back[:2]})")
    _, _, b, _ = otf2_scan(["ENTER 0 20 Region: \"a\"", "LEAVE 0 10 Region: \"a\""])
    check(len(b) == 1, "the time order check finds a location's event before its previous one")


def finish(tmp):
    """exit: 1 if a check failed (the files kept in TMP for a look), else 0 (TMP removed: an
    HPCC trace takes 220 MB)"""
    if failed:
        print(f"files kept in {tmp}")
    else:
        shutil.rmtree(tmp, ignore_errors=True)
    sys.exit(1 if failed else 0)


# examples/waits_mini's late parts per round on 4 ranks, each waiting D (its header)
WAITS_MINI_INJECTED = {"late_sender": 3, "late_receiver": 1, "wait_nxn": 2 * 3, "wait_barrier": 3,
                       "late_broadcast": 3, "early_reduce": 1, "wrong_order": 1}


def waits_injected(ws, d_ms, rounds, what):
    """the known answers of examples/waits_mini D_MS ROUNDS on 4 ranks in WS (a wait_states
    object with the truth: profile.json's, or hclock waits --json's): each pattern with at
    least half its injected instances, each with its truth, and a true total of at least half its
    late parts times D (a waiting process preempted for D/2 in every one would be needed to
    miss it) inside the totals' [proven, upper] (how much is proven depends on the clock's
    bounds, which a starved process may lose for a while: printed, not asserted)"""
    pats = {p["pattern"]: p for p in ws["patterns"]}
    d_ns = d_ms * 1e6
    for name, k in WAITS_MINI_INJECTED.items():
        p = pats.get(name)
        if p is None:
            check(False, f"{what}: pattern {name} in the report")
            continue
        n = k * rounds
        tr = p.get("truth", {})
        # a waiter itself starved past the late part's D does not wait (once, MPICH at
        # nice 19 beside a load of 8: 4 Late Broadcasts of 6): at least half of them
        check(2 * p["instances"] >= n and tr.get("instances") == p["instances"],
              f"{what}: {name}: {p['instances']} instances (at least half the {n} injected), "
              f"{p['proven']} proven, {tr.get('instances')} with their truth")
        upper = p["upper_ns"] if p["upper_ns"] is not None else float("inf")
        ok = (tr.get("true_lo_ns", -1) >= 0.5 * n * d_ns
              and tr.get("true_hi_ns", -1) >= p["proven_ns"] and tr.get("true_lo_ns", 0) <= upper)
        check(ok, f"{what}: {name}: true total [{tr.get('true_lo_ns', 0) / 1e6:.3f}, "
              f"{tr.get('true_hi_ns', 0) / 1e6:.3f}] ms, proven {p['proven_ns'] / 1e6:.3f} ms, "
              f"estimate {p['time_ns'] / 1e6:.3f} ms, upper {upper / 1e6:.3f} ms, for {n} "
              f"injected waits of {d_ms} ms (at least half of {n * d_ms} ms, inside "
              f"[proven, upper])")


def check_profile(d, ev, err):
    """DIR/profile.json (summed from the counters) against the trace's events ev: per function
    and process the calls equal the slices and the total their durations (within rounding),
    the functions' totals and largest calls agree, the shares sum to <= 100 %, the size
    histogram counts the messages sent; the summary has the profile's table."""
    with open(os.path.join(d, "profile.json")) as f:
        prof = json.load(f)
    check(os.path.getsize(os.path.join(d, "profile.txt")) > 0, "profile.txt written")
    xs = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "mpi"]
    per = {}  # (rank, name) -> [slices, total ns, largest ns]
    for e in xs:
        v = per.setdefault((e["pid"], e["name"]), [0, 0.0, 0.0])
        ns = e["dur"] * 1000
        v[0] += 1
        v[1] += ns
        v[2] = max(v[2], ns)
    ranks = sorted({r for r, _ in per})
    # per process: the counters in parts/rank.R.stats
    bad = []
    for r in ranks:
        got = {}
        with open(os.path.join(d, "parts", f"rank.{r}.stats")) as f:
            for line in f:
                w = line.split()
                if w and w[0] == "func":
                    got[w[1]] = (int(w[2]), int(w[3]))
        want = {n: v for (q, n), v in per.items() if q == r}
        for n in set(got) | set(want):
            g, t = got.get(n, (0, 0)), want.get(n, [0, 0.0])
            if g[0] != t[0] or abs(g[1] - t[1]) > 1 + 1e-9 * t[1]:
                bad.append(f"rank {r} {n}: profile {g}, trace {t[:2]}")
    check(not bad, f"per process and function: the counters' calls equal the trace's slices and "
          f"the totals agree ({len(per)} pairs) {bad[:4]}")
    funcs = {f["name"]: f for f in prof["functions"]}
    bad = []
    for n in {n for _, n in per} | set(funcs):
        mine = [v for (q, m), v in per.items() if m == n]
        calls, tot = sum(v[0] for v in mine), sum(v[1] for v in mine)
        most = max((v[1] for v in mine), default=0)
        big = max((v[2] for v in mine), default=0)
        f = funcs.get(n, {})
        if (f.get("calls") != calls or abs(f.get("total_ns", 0) - tot) > len(mine) + 1e-9 * tot
                or abs(f.get("most_ns", 0) - most) > 1 + 1e-9 * most
                or abs(f.get("max_ns", 0) - big) > 1 or not 0 <= f.get("imbalance", -1) < 1):
            bad.append(f"{n}: profile {f}, trace {calls} slices {tot} ns most {most} max {big}")
    check(prof["processes"] == len(ranks) and not bad,
          f"profile.json: {len(funcs)} functions, calls, totals, most and largest call as in the "
          f"trace ({len(xs)} slices) {bad[:3]}")
    share = sum(f["share"] for f in prof["functions"])
    check(0 < share <= 1.0 + 1e-9 and abs(share - prof["mpi_share"]) < 1e-4,
          f"the functions' shares sum to {100 * share:.3f} % (<= 100 %, the time in MPI "
          f"{100 * prof['mpi_share']:.3f} %)")
    outside = [p for p in prof["ranks"] if p["outside_ns"] < 0 or
               p["outside_ns"] + p["mpi_ns"] != p["run_ns"]]
    check(not outside, f"per process: time in MPI plus outside is the run ({outside[:2]})")
    sends = sum(1 for e in ev if e.get("ph") == "s")
    hist = sum(b["count"] for b in prof["messages"]["sizes"])
    nbytes = sum(e["args"]["bytes"] for e in ev if e.get("ph") == "s")
    check(hist == prof["messages"]["count"] == sends and prof["messages"]["bytes"] == nbytes,
          f"the size histogram counts {hist} messages, {prof['messages']['bytes']} bytes "
          f"(the trace sent {sends}, {nbytes} bytes)")
    check("top MPI functions" in err and "profile.txt" in err,
          "the summary has the profile's table")
