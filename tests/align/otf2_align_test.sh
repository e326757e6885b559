#!/bin/bash
# otf2_align_test.sh - hclock align on an OTF2 archive of known clocks (tests/align/otf2_gen):
# every event's true reference time lies within the reported bounds, and the corrected
# archive passes otf2-print -Werror, has no ClockOffset, and is monotonic on every location.
#
# usage: otf2_align_test.sh HCLOCK OTF2_GEN [RANKS] [MESSAGES] [SEED]
# Exit 0 pass, 1 fail, 77 skip (no otf2-print or python3).
set -u
HCLOCK=${1:?usage: otf2_align_test.sh HCLOCK OTF2_GEN [RANKS] [MESSAGES] [SEED]}
GEN=${2:?usage: otf2_align_test.sh HCLOCK OTF2_GEN [RANKS] [MESSAGES] [SEED]}
RANKS=${3:-5}
MESSAGES=${4:-3000}
SEED=${5:-11}

[ -x "$HCLOCK" ] || { echo "SKIP: $HCLOCK not built"; exit 77; }
command -v otf2-print >/dev/null || { echo "SKIP: otf2-print (otf2-tools) not installed"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 not installed"; exit 77; }
TMP=$(mktemp -d /tmp/hclock_otf2_align.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
die() { echo "FAIL: $*"; exit 1; }

"$GEN" "$TMP/run" --ranks "$RANKS" --messages "$MESSAGES" --seed "$SEED" || die "otf2_gen"
mkdir "$TMP/out"
"$HCLOCK" align "$TMP/run" --out "$TMP/out" --reference MPI_Rank_0 --format json \
	--bounds "$TMP/bounds.csv" >"$TMP/report.json" 2>"$TMP/err" || die "hclock align: $(cat "$TMP/err")"
cat "$TMP/report.json"; echo
OUT=$TMP/out/run/traces.otf2
[ -f "$OUT" ] || die "no corrected archive at $OUT"
otf2-print -Werror --silent "$OUT" >/dev/null 2>"$TMP/print.err" || die "otf2-print rejects the output: $(head -3 "$TMP/print.err")"
otf2-print -C "$OUT" 2>/dev/null | grep -q CLOCK_OFFSET && die "ClockOffset left in the output"
otf2-print -C "$TMP/run/traces.otf2" 2>/dev/null | grep -q CLOCK_OFFSET || die "the input had no ClockOffset to drop"
# monotonic per location
otf2-print "$OUT" | awk 'NR > 5 && $3 ~ /^[0-9]+$/ { if (($2 in last) && $3 < last[$2]) bad++; last[$2] = $3 }
	END { if (bad) { print "FAIL: " bad " events step back"; exit 1 } }' || exit 1
python3 - "$TMP/bounds.csv" "$TMP/run/truth.csv" <<'PY'
import csv, sys
from decimal import Decimal as D
truth = {r["node"]: (int(r["offset_ns"]), int(r["skew_ppb"])) for r in csv.DictReader(open(sys.argv[2]))}
n = bad = 0; worst = D(0); bound = D(0)
for r in csv.DictReader(open(sys.argv[1])):
    off, skew = truth[r["node"]]
    t = (D(r["time_ns"]) - off) * 10**9 / (10**9 + skew)   # true (= reference) time
    c, lo, hi = D(r["corrected_ns"]), D(r["delta_minus_ns"]), D(r["delta_plus_ns"])
    if not (c - lo - 1 <= t <= c + hi + 1):               # 1 ns: integer rounding of times
        bad += 1
        if bad < 5: print("outside: %s %s true %.1f corrected %s [-%s, +%s]" % (r["node"], r["time_ns"], t, c, lo, hi))
    worst = max(worst, abs(c - t)); bound = max(bound, lo, hi); n += 1
print("%d events, %d outside their bounds; largest error %.1f ns, largest bound %.1f ns" % (n, bad, worst, bound))
sys.exit(1 if bad or n == 0 else 0)
PY
[ $? = 0 ] || die "true time outside the bounds"
echo PASS
