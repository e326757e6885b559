#!/bin/sh
# otf2_copy_gen.sh PYTHON GENERATOR OTF2_HEADER_DIR BUILT CC [CFLAG...] - the OTF2 copy
# callbacks (src/align/otf2_copy_gen.py, run by the build) against the installed OTF2:
#  1. the generator's output from these headers is the file the build compiled (BUILT), so
#     the library is not running callbacks made from other headers or an older generator;
#  2. it compiles with -Werror: a callback whose parameters do not match OTF2's typedef is
#     only an incompatible-pointer warning in C, which the ordinary build lets through.
set -eu
if [ $# -lt 5 ]; then
	echo "usage: otf2_copy_gen.sh PYTHON GENERATOR OTF2_HEADER_DIR BUILT CC [CFLAG...]" >&2
	exit 2
fi
py=$1 gen=$2 hdr=$3 built=$4 cc=$5
shift 5
tmp=$(mktemp -d /tmp/hclock_otf2_copy.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
"$py" "$gen" "$hdr" "$tmp/otf2_copy.c"
if ! cmp -s "$tmp/otf2_copy.c" "$built"; then
	echo "FAIL: $built is not what $gen makes from $hdr now (rebuild)"
	exit 1
fi
if ! "$cc" -Wall -Wextra -Werror "$@" -c "$tmp/otf2_copy.c" -o "$tmp/otf2_copy.o" \
	>"$tmp/cc.log" 2>&1; then
	head -20 "$tmp/cc.log"
	echo "FAIL: the generated otf2_copy.c does not compile cleanly against $hdr"
	exit 1
fi
echo "ok: otf2_copy.c ($(grep -c '^static OTF2_CallbackCode' "$built") callbacks) matches $hdr"
