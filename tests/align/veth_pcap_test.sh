#!/bin/bash
# veth_pcap_test.sh - a real pcap pair: two network namespaces joined by a veth pair, TCP
# traffic between them, one tcpdump capture in each namespace. One capture is shifted with
# editcap -t by a known amount; hclock align must recover the shift within the bounds it
# reports (and the pcap reader's own offset interval must contain it).
#
# usage: veth_pcap_test.sh HCLOCK [PCAP_OFFSET]
#   HCLOCK       build/bin/hclock
#   PCAP_OFFSET  the tests/align/pcap_offset helper (optional second opinion)
# Exit 0 pass, 1 fail, 77 skip (not root, no ip netns, no tcpdump/editcap/python3).
#
# Only addresses of the two namespaces created here (10.231.0.1, 10.231.0.2) are used; the
# namespaces are deleted on exit.

set -u
HCLOCK=${1:?usage: veth_pcap_test.sh HCLOCK [PCAP_OFFSET]}
PCAP_OFFSET=${2:-}
SHIFT=12.345678901           # seconds added to host b's capture
SHIFT_NS=12345678901
PORT=47311
MESSAGES=300

skip() { echo "SKIP: $*"; exit 77; }
die() { echo "FAIL: $*"; exit 1; }

[ "$(id -u)" = 0 ] || skip "needs root for network namespaces"
command -v ip >/dev/null || skip "iproute2 (ip) not installed"
command -v tcpdump >/dev/null || skip "tcpdump not installed"
command -v editcap >/dev/null || skip "editcap (tshark packages) not installed"
command -v python3 >/dev/null || skip "python3 not installed"
ip netns list >/dev/null 2>&1 || skip "ip netns unavailable"

NSA=hclk-a-$$
NSB=hclk-b-$$
VA=hca$$
VB=hcb$$
TMP=$(mktemp -d /tmp/hclock_veth.XXXXXX)
PIDS=()

cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	ip netns del "$NSA" 2>/dev/null
	ip netns del "$NSB" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

ip netns add "$NSA" 2>/dev/null || skip "cannot create a network namespace"
ip netns add "$NSB" || skip "cannot create a network namespace"
ip link add "$VA" type veth peer name "$VB" || skip "cannot create a veth pair"
ip link set "$VA" netns "$NSA" && ip link set "$VB" netns "$NSB" || die "moving veth ends"
ip -n "$NSA" addr add 10.231.0.1/24 dev "$VA" || die "address a"
ip -n "$NSB" addr add 10.231.0.2/24 dev "$VB" || die "address b"
ip -n "$NSA" link set lo up; ip -n "$NSB" link set lo up
ip -n "$NSA" link set "$VA" up && ip -n "$NSB" link set "$VB" up || die "link up"

# one capture per host; -U so that every packet reaches the file before tcpdump is stopped
for side in a b; do
	ns=$NSA; dev=$VA
	[ $side = b ] && ns=$NSB && dev=$VB
	ip netns exec "$ns" tcpdump -i "$dev" -U -n --time-stamp-precision=nano \
		-w "$TMP/host$side.pcap" "tcp port $PORT" 2>"$TMP/tcpdump_$side.log" &
	PIDS+=($!)
done
for side in a b; do
	for _ in $(seq 100); do
		grep -q "listening on" "$TMP/tcpdump_$side.log" 2>/dev/null && break
		sleep 0.05
	done
	grep -q "listening on" "$TMP/tcpdump_$side.log" || die "tcpdump $side did not start: $(cat "$TMP/tcpdump_$side.log")"
done

# bounded request/reply traffic: MESSAGES small messages each answered, 1 ms apart, 20 s max
ip netns exec "$NSB" timeout 20 python3 -c '
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("10.231.0.2", int(sys.argv[1]))); s.listen(1); s.settimeout(15)
c, _ = s.accept(); c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
while True:
    d = c.recv(4096)
    if not d: break
    c.sendall(d)
' $PORT &
SERVER=$!
PIDS+=($SERVER)
sleep 0.3
ip netns exec "$NSA" timeout 20 python3 -c '
import socket, sys, time
n = int(sys.argv[2])
for attempt in range(50):
    try:
        s = socket.create_connection(("10.231.0.2", int(sys.argv[1])), timeout=5); break
    except OSError:
        time.sleep(0.1)
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
for i in range(n):
    m = b"%05d" % i * 20
    s.sendall(m)
    got = b""
    while len(got) < len(m):
        got += s.recv(4096)
    time.sleep(0.001)
s.close()
' $PORT $MESSAGES || die "TCP client failed"
wait $SERVER 2>/dev/null
# tcpdump stopped by SIGINT drops what it has not read from the kernel yet: on a busy machine
# it lags by seconds (43 of 600 packets on file 0.3 s after the traffic, beside two busy
# processes and a build); stop it once both files have stopped growing for half a second
prev=""
for _ in $(seq 40); do
	sleep 0.5
	now=$(stat -c %s "$TMP/hosta.pcap" "$TMP/hostb.pcap" 2>/dev/null | tr '\n' ' ')
	[ "$now" = "$prev" ] && break
	prev=$now
done
for p in "${PIDS[@]}"; do kill -INT "$p" 2>/dev/null; done
wait 2>/dev/null
PIDS=()
for side in a b; do
	[ -s "$TMP/host$side.pcap" ] || die "capture $side empty: $(cat "$TMP/tcpdump_$side.log")"
done

# shift host b: its clock now reads SHIFT seconds ahead (editcap writes pcapng by default)
mkdir -p "$TMP/in" "$TMP/out"
cp "$TMP/hosta.pcap" "$TMP/in/hosta.pcap"
editcap -t "$SHIFT" "$TMP/hostb.pcap" "$TMP/in/hostb.pcapng" || die "editcap"

status=0
if [ -n "$PCAP_OFFSET" ]; then
	read -r lo hi up down < <("$PCAP_OFFSET" "$TMP/in/hosta.pcap" "$TMP/in/hostb.pcapng") ||
		die "pcap_offset failed"
	echo "pcap reader: offset of hostb in [$lo, $hi] ns from $up + $down segments; true $SHIFT_NS"
	[ "$up" -gt 100 ] && [ "$down" -gt 100 ] || { echo "FAIL: too few matched segments"; status=1; }
	[ "$lo" -le "$SHIFT_NS" ] && [ "$SHIFT_NS" -le "$hi" ] ||
		{ echo "FAIL: true shift outside the message interval"; status=1; }
fi

if "$HCLOCK" align --help >/dev/null 2>&1; then
	"$HCLOCK" align "$TMP/in/hosta.pcap" "$TMP/in/hostb.pcapng" --reference hosta \
		--out "$TMP/out" --format json --bounds "$TMP/bounds.csv" >"$TMP/report.json" \
		2>"$TMP/align.err" || die "hclock align failed: $(cat "$TMP/align.err")"
	cat "$TMP/report.json"
	# every hostb event: the true reference time (local time - SHIFT) lies within the bounds
	python3 - "$TMP/bounds.csv" "$SHIFT_NS" <<'PY' || status=1
import csv, sys
from decimal import Decimal as D
shift = int(sys.argv[2]); n = 0; worst = 0
for r in csv.DictReader(open(sys.argv[1])):
    if r["node"] != "hostb": continue
    t = int(r["time_ns"]) - shift
    c, lo, hi = D(r["corrected_ns"]), D(r["delta_minus_ns"]), D(r["delta_plus_ns"])
    if not (c - lo <= t <= c + hi):
        print("FAIL: hostb at %s: true %d outside [%d, %d]" % (r["time_ns"], t, c - lo, c + hi))
        sys.exit(1)
    worst = max(worst, abs(c - t)); n += 1
if n < 100:
    print("FAIL: only %d hostb events in the bounds file" % n); sys.exit(1)
print("hclock align: true shift within the bounds at all %d hostb events; "
      "largest estimate error %s ns" % (n, worst))
PY
	[ -s "$TMP/out/hosta.pcap" ] && [ -s "$TMP/out/hostb.pcap" ] ||
		{ echo "FAIL: corrected captures missing"; status=1; }
else
	echo "note: $HCLOCK has no align command yet; checked the pcap reader only"
	[ -n "$PCAP_OFFSET" ] || skip "neither hclock align nor pcap_offset available"
fi
[ $status = 0 ] && echo "PASS"
exit $status
