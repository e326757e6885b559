#!/usr/bin/env python3
"""gen_ctf.py - LTTng-like kernel traces (CTF 1.8, written byte by byte) of simulated hosts
exchanging TCP segments, for hclock align's CTF reader tests.

Host k's clock reads  T0 + o_k + t + floor(s_k * t / 1e9)  ns at true time t (s_k in ppb):
the trace's clock has freq 1 GHz, offset_s/offset carry T0 + o_k. Segments go between host 0
and every other host (both directions), with lost segments, retransmissions (the same seq
twice), UDP and loopback packets, and a tracing window per host so that segments at the ends
have one side only. Layout "a": net_dev_queue/netif_receive_skb with IPv4 or IPv6 and TCP
headers (lttng-modules >= 2.9); layout "b": inet_sock_local_out/in with seq, ack_seq, flags,
and inet_connect/inet_accept giving each socket's connection (the old network add-ons):
conn="all" for every socket, "some" for the first connection's only, "none" for no socket
(the reader then matches on seq, ack_seq and flags only, and a segment seen on one side has
no known other side: it is no message).
Each host has 2 streams (CPUs) and other events (sched_switch). With overlap=True, the
packets of one stream overlap in time (old LTTng versions).

generate(out, ...) writes out/HOST/kernel/{metadata,chan_0,chan_1} and returns the truth:
{"hosts": [...], "s": [...], "o": [...], "T0", "events": {host: [[local, true], ...]},
 "pairs": {"a>b": [messages, unmatched_sends, unmatched_recvs]}, "other": TCP packets that are
 no messages, "nevents": {host: events of every kind}, "clock_uuid": {host: uuid}}.
"""
import os
import random
import struct
import uuid as uuidlib

U8 = "integer { size = 8; align = 8; signed = false; }"
U16 = "integer { size = 16; align = 8; signed = false; }"
U32 = "integer { size = 32; align = 8; signed = false; }"
U64 = "integer { size = 64; align = 8; signed = false; }"
BE8 = "integer { size = 8; align = 8; signed = false; byte_order = be; }"
BE16 = "integer { size = 16; align = 8; signed = false; byte_order = be; }"
BE32 = "integer { size = 32; align = 8; signed = false; byte_order = be; }"
CLK = "integer { size = 64; align = 8; signed = false; map = clock.monotonic.value; }"

TCP = f"""struct {{ {BE16} _source_port; {BE16} _dest_port; {BE32} _seq; {BE32} _ack_seq;
  integer {{ size = 4; align = 1; signed = false; byte_order = be; }} _data_offset;
  integer {{ size = 3; align = 1; signed = false; byte_order = be; }} _reserved;
  integer {{ size = 9; align = 1; signed = false; byte_order = be; }} _flags;
  {BE16} _window_size; {BE16} _checksum; {BE16} _urg_ptr; }}"""
UDP = f"struct {{ {BE16} _source_port; {BE16} _dest_port; {BE16} _len; {BE16} _check; }}"
TH = f"""enum : {U8} {{ "_unknown" = 0, "_tcp" = 1, "_udp" = 2, "_icmp" = 3 }} _transport_header_type;
  variant <_transport_header_type> {{ struct {{ }} _unknown; {TCP} _tcp; {UDP} _udp;
    struct {{ }} _icmp; }} _transport_header;"""
IPV4 = f"""struct {{ integer {{ size = 4; align = 8; signed = false; byte_order = be; }} _version;
  integer {{ size = 4; align = 1; signed = false; byte_order = be; }} _ihl;
  {BE8} _tos; {BE16} _tot_len; {BE16} _id; {BE16} _frag_off; {BE8} _ttl; {BE8} _protocol;
  {BE16} _checksum; {BE8} _saddr[4]; {BE8} _daddr[4]; {TH} }}"""
IPV6 = f"""struct {{ integer {{ size = 4; align = 8; signed = false; byte_order = be; }} _version;
  integer {{ size = 4; align = 1; signed = false; byte_order = be; }} _prio;
  {BE8} _flow_lbl[3]; {BE16} _payload_len; {BE8} _nexthdr; {BE8} _hop_limit;
  {BE16} _saddr[8]; {BE16} _daddr[8]; {TH} }}"""
DEV = f"""struct {{ {U64} _skbaddr; {U32} _len; string _name;
  enum : {U8} {{ "_unknown" = 0, "_ipv4" = 1, "_ipv6" = 2 }} _network_header_type;
  variant <_network_header_type> {{ struct {{ }} _unknown; {IPV4} _ipv4; {IPV6} _ipv6; }}
    _network_header; }}"""
SOCK = f"struct {{ {U64} _sk; {BE32} _seq; {BE32} _ack_seq; {BE16} _check; {BE16} _window; " \
       f"{BE16} _flags; }}"
CONN = f"struct {{ {U64} _sk; {U32} _saddr; {U32} _daddr; {U16} _sport; {U16} _dport; }}"
SCHED = f"struct {{ string _prev_comm; {U32} _prev_tid; string _next_comm; {U32} _next_tid; }}"

EVENTS = {"sched_switch": (0, SCHED), "net_dev_queue": (1, DEV), "netif_receive_skb": (2, DEV),
          "inet_sock_local_out": (3, SOCK), "inet_sock_local_in": (4, SOCK),
          "inet_connect": (5, CONN), "inet_accept": (6, CONN)}


def metadata(host, trace_uuid, clock_uuid, offset_s, offset):
    ev = "".join(f'event {{ name = "{n}"; id = {i}; stream_id = 0; fields := {f}; }};\n'
                 for n, (i, f) in EVENTS.items())
    return f"""/* CTF 1.8 */
trace {{ major = 1; minor = 8; uuid = "{trace_uuid}"; byte_order = le;
  packet.header := struct {{ {U32} magic; {U8} uuid[16]; {U32} stream_id; }}; }};
env {{ hostname = "{host}"; domain = "kernel"; tracer_name = "lttng-modules";
  tracer_major = 2; tracer_minor = 13; }};
clock {{ name = "monotonic"; uuid = "{clock_uuid}"; description = "Monotonic Clock";
  freq = 1000000000; precision = 1; offset_s = {offset_s}; offset = {offset};
  absolute = false; }};
stream {{ id = 0;
  packet.context := struct {{ {CLK} timestamp_begin; {CLK} timestamp_end;
    {U64} content_size; {U64} packet_size; {U64} events_discarded; {U32} cpu_id; }};
  event.header := struct {{ {U32} id; {CLK} timestamp; }}; }};
{ev}"""


def s_(text):
    return text.encode() + b"\0"


def tcp_bytes(sport, dport, seq, ack, flags):
    return struct.pack(">HHIIHHHH", sport, dport, seq, ack, (5 << 12) | flags, 512, 0, 0)


def dev_payload(p):
    """net_dev_queue / netif_receive_skb payload of packet p (a dict)."""
    b = struct.pack("<QI", 0xffff000012340000, 60) + s_(p.get("dev", "eth0"))
    if p["proto"] == "tcp":
        th = bytes([1]) + tcp_bytes(p["sport"], p["dport"], p["seq"], p["ack"], p["flags"])
    else:
        th = bytes([2]) + struct.pack(">HHHH", p["sport"], p["dport"], 8, 0)
    if p["v6"]:
        sa = b"".join(struct.pack(">H", w) for w in p["saddr"])
        da = b"".join(struct.pack(">H", w) for w in p["daddr"])
        nh = bytes([2, 0x60, 0, 0, 0]) + struct.pack(">HBB", 20, 6, 64) + sa + da + th
    else:
        nh = bytes([1, 0x45, 0]) + struct.pack(">HHHBB", 40, 0, 0, 64, 6) + \
            struct.pack(">H", 0) + bytes(p["saddr"]) + bytes(p["daddr"]) + th
    return b + nh


def sock_payload(p):
    return struct.pack("<Q", p["sk"]) + struct.pack(">IIHHH", p["seq"], p["ack"], 0, 512,
                                                    p["flags"])


def write_stream(path, trace_uuid, cpu, events, overlap):
    """events: [(cycles, id, payload)] in time order; packets of 40 events. With overlap, every
    second packet starts before the previous one ends (their events interleave in time)."""
    chunks = [events[i:i + 40] for i in range(0, len(events), 40)]
    if overlap:  # swap events between neighbouring packets so that their times interleave
        for a, b in zip(chunks[0::2], chunks[1::2]):
            if len(a) > 4 and len(b) > 4:
                a[-1], b[0] = b[0], a[-1]
                a.sort(key=lambda e: e[0])
                b.sort(key=lambda e: e[0])
    out = bytearray()
    for ch in chunks:
        body = b"".join(struct.pack("<IQ", i, c) + pl for c, i, pl in ch)
        head = struct.pack("<I", 0xC1FC1FC1) + uuidlib.UUID(trace_uuid).bytes + \
            struct.pack("<I", 0)
        ctx_len = 8 * 5 + 4
        size = (len(head) + ctx_len + len(body)) * 8
        ctx = struct.pack("<QQQQQI", ch[0][0], ch[-1][0], size, size, 0, cpu)
        out += head + ctx + body
    with open(path, "wb") as f:
        f.write(out)


def generate(out, hosts=2, layout="a", seed=1, msgs=400, duration_s=20, v6=False,
             overlap=False, others=200, conn="all"):
    rnd = random.Random(seed)
    by_addr = layout == "a" or conn == "all"  # one-sided segments: other side known
    T0 = 1_700_000_000_000_000_000
    names = [f"host{k}" for k in range(hosts)]
    s = [0] + [rnd.randint(-60000, 60000) for _ in range(hosts - 1)]
    o = [0] + [rnd.randint(-3 * 10**9, 3 * 10**9) for _ in range(hosts - 1)]
    dur = int(duration_s * 1e9)
    # tracing windows: host 0 the whole time, the others start late and stop early
    win = [(0, dur)] + [(rnd.randint(0, dur // 20), dur - rnd.randint(0, dur // 20))
                        for _ in range(hosts - 1)]
    addr = [([10, 0, 0, k + 1] if not v6 else [0xfd00, 0, 0, 0, 0, 0, 0, k + 1])
            for k in range(hosts)]
    ev = [[] for _ in range(hosts)]  # (true t, cpu, event id, payload, is a TCP packet)
    pairs = {}
    other = 0  # TCP packets that are no messages

    def emit(k, t, eid, payload, net):
        if win[k][0] <= t <= win[k][1]:
            ev[k].append((t, rnd.randrange(2), eid, payload, net))
            return True
        return False

    def segment(a, b, t, lat, p, sk_a, sk_b):
        """one copy of segment p from a to b sent at t, lost if lat is None"""
        if layout == "a":
            pl = dev_payload(p)
            sent = emit(a, t, 1, pl, True)
            got = lat is not None and emit(b, t + lat, 2, pl, True)
        else:
            sent = emit(a, t, 3, sock_payload(dict(p, sk=sk_a)), True)
            got = lat is not None and emit(b, t + lat, 4, sock_payload(dict(p, sk=sk_b)), True)
        return sent, got

    conn_id = 0
    for peer in range(1, hosts):
        for direction in ((0, peer), (peer, 0)):
            a, b = direction
            conn_id += 1
            sport, dport = 40000 + conn_id, 5000 + conn_id
            sk_a, sk_b = 0xffff888000000000 + conn_id * 64, 0xffff888100000000 + conn_id * 64
            if layout == "b" and (conn == "all" or conn == "some" and conn_id == 1):
                # the connection, as tracing starts
                emit(a, win[a][0], 5, struct.pack("<QIIHH", sk_a, int.from_bytes(bytes(addr[a]), "big"),
                                          int.from_bytes(bytes(addr[b]), "big"), sport, dport),
                     False)
                emit(b, win[b][0], 6, struct.pack("<QIIHH", sk_b, int.from_bytes(bytes(addr[b]), "big"),
                                          int.from_bytes(bytes(addr[a]), "big"), dport, sport),
                     False)
            seq, ack = rnd.getrandbits(32), rnd.getrandbits(32)
            key = f"{names[a]}>{names[b]}"
            stat = pairs.setdefault(key, [0, 0, 0])
            times = sorted(rnd.randrange(0, dur) for _ in range(msgs))
            for i, t in enumerate(times):
                p = {"proto": "tcp", "v6": v6, "saddr": addr[a], "daddr": addr[b],
                     "sport": sport, "dport": dport, "seq": seq, "ack": ack,
                     "flags": 0x18}
                seq = (seq + rnd.randint(1, 1400)) & 0xffffffff
                lat = 30000 + int(rnd.expovariate(1 / 20000))
                mid = dur // 10 < t < dur - dur // 10
                r = rnd.random()
                if r < 0.05 and mid:  # lost, then retransmitted 1 ms later
                    segment(a, b, t, None, p, sk_a, sk_b)
                    segment(a, b, t + 10**6, lat, p, sk_a, sk_b)
                    stat[0] += 1  # the receive pairs with the first copy: valid, looser
                    stat[1] += 1
                elif r < 0.08 and mid:  # retransmitted although both arrive
                    segment(a, b, t, lat, p, sk_a, sk_b)
                    segment(a, b, t + 10**6, lat, p, sk_a, sk_b)
                    stat[0] += 2
                elif r < 0.10 and mid:  # lost for good
                    segment(a, b, t, None, p, sk_a, sk_b)
                    stat[1] += 1
                else:
                    sent, got = segment(a, b, t, lat, p, sk_a, sk_b)
                    stat[0] += sent and got
                    stat[1] += sent and not got
                    stat[2] += got and not sent
            if not by_addr:  # one-sided segments are no messages
                other += stat[1] + stat[2]
                stat[1] = stat[2] = 0
    # noise: UDP between the hosts, loopback TCP, scheduler events
    if layout == "a":
        for k in range(hosts):
            for _ in range(20):
                t = rnd.randrange(0, dur)
                u = {"proto": "udp", "v6": v6, "saddr": addr[k], "daddr": addr[(k + 1) % hosts],
                     "sport": 53, "dport": 53}
                emit(k, t, 1, dev_payload(u), False)  # not kept: no TCP
                emit((k + 1) % hosts, t + 40000, 2, dev_payload(u), False)
                lo = {"proto": "tcp", "v6": v6, "saddr": addr[k], "daddr": addr[k], "sport": 1,
                      "dport": 2, "seq": rnd.getrandbits(32), "ack": 0, "flags": 0x10,
                      "dev": "lo"}
                other += emit(k, t + 5, 1, dev_payload(lo), True)
                other += emit(k, t + 9, 2, dev_payload(lo), True)
    for k in range(hosts):
        for i in range(others):
            emit(k, rnd.randrange(0, dur), 0, s_("a") + struct.pack("<I", i) + s_("b") +
                 struct.pack("<I", i + 1), False)
    truth = {"hosts": names, "s": s, "o": o, "T0": T0, "events": {}, "pairs": pairs,
             "other": other, "nevents": {}, "clock_uuid": {}}
    for k in range(hosts):
        d = os.path.join(out, names[k], "kernel")
        os.makedirs(d, exist_ok=True)
        tu, cu = str(uuidlib.UUID(int=rnd.getrandbits(128))), \
            str(uuidlib.UUID(int=rnd.getrandbits(128)))
        base = T0 + o[k]
        off_s, off = base // 10**9, base % 10**9
        with open(os.path.join(d, "metadata"), "w") as f:
            f.write(metadata(names[k], tu, cu, off_s, off))
        ev[k].sort(key=lambda e: e[0])
        rows = []
        for cpu in (0, 1):
            evs = []
            for t, c, eid, pl, net in ev[k]:
                if c != cpu:
                    continue
                local = t + (s[k] * t) // 10**9  # cycles since the clock's offset
                evs.append((local, eid, pl))
                if net:
                    rows.append([base + local, t])
            write_stream(os.path.join(d, f"chan_{cpu}"), tu, cpu, evs, overlap)
        truth["events"][names[k]] = rows
        truth["nevents"][names[k]] = len(ev[k])
        truth["clock_uuid"][names[k]] = cu
    return truth


def check(truth, bounds_csv, reference):
    """(rows, rows outside their bounds, largest |error|): the true reference reading of
    every event against the bounds, 1 ns for the integer clocks."""
    r = truth["hosts"].index(reference)
    T0, s, o = truth["T0"], truth["s"], truth["o"]
    true_t = {(h, lt): t for h, rows in truth["events"].items() for lt, t in rows}
    n = out = 0
    worst = 0
    with open(bounds_csv) as f:
        next(f)
        for line in f:
            host, lt, c, dm, dp = line.strip().split(",")
            t = true_t[(host, int(lt))]
            expect = T0 + o[r] + t + (s[r] * t) // 10**9
            d = expect - int(c)
            n += 1
            worst = max(worst, abs(d))
            if not -int(dm) - 1 <= d <= int(dp) + 1:
                out += 1
    return n, out, worst


if __name__ == "__main__":
    import argparse
    import json
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--hosts", type=int, default=2)
    ap.add_argument("--layout", choices=["a", "b"], default="a")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--msgs", type=int, default=400, help="segments per direction and pair")
    ap.add_argument("--v6", action="store_true")
    ap.add_argument("--overlap", action="store_true")
    ap.add_argument("--conn", choices=["all", "some", "none"], default="all",
                    help="layout b: the sockets with an inet_connect/inet_accept event")
    a = ap.parse_args()
    t = generate(a.out, a.hosts, a.layout, a.seed, a.msgs, v6=a.v6, overlap=a.overlap,
                 conn=a.conn)
    print(json.dumps(t["pairs"]))
