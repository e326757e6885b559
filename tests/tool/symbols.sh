#!/bin/sh
# symbols.sh LIB HEADER... - the functions (and any data) a shared library exports must be
# exactly those its public headers declare with HCLOCK_API: lists the library's exported
# defined symbols (nm -D --defined-only), the names the headers mark HCLOCK_API, and fails
# naming every extra or missing one.
set -eu
if [ $# -lt 2 ]; then
	echo "usage: symbols.sh LIB HEADER..." >&2
	exit 2
fi
lib=$1
shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# exported and defined: text (T), weak (W), indirect functions (i), data (D, B, R, V)
nm -D --defined-only "$lib" | awk 'NF == 3 && $2 ~ /^[TWiDBRV]$/ { print $3 }' |
	sed 's/@.*//' | sort -u >"$tmp/exported"

# declared: in each header, without comments and preprocessor lines, every statement (up to
# ';' or '{') that contains the word HCLOCK_API; the name is the identifier before its first
# '(' (a function), or its last identifier (data)
for h in "$@"; do
	cat "$h"
	echo
done | awk '
	{ text = text $0 "\n" }
	END {
		gsub(/\/\*([^*]|\*+[^*\/])*\*+\//, " ", text)   # /* comments */
		n = split(text, lines, "\n")
		code = ""
		for (i = 1; i <= n; i++) {
			line = lines[i]
			sub(/\/\/.*/, "", line)
			if (line ~ /^[ \t]*#/) continue
			code = code " " line
		}
		m = split(code, stmts, /[;{}]/)
		for (i = 1; i <= m; i++) {
			s = stmts[i]
			p = match(s, /(^|[^A-Za-z0-9_])HCLOCK_API[^A-Za-z0-9_]/)
			if (!p) continue
			s = substr(s, p + RLENGTH)
			if (index(s, "(")) s = substr(s, 1, index(s, "(") - 1)
			k = split(s, w, /[^A-Za-z0-9_]+/)
			while (k > 0 && w[k] == "") k--
			if (k > 0) print w[k]
		}
	}' | sort -u >"$tmp/declared"

extra=$(comm -23 "$tmp/exported" "$tmp/declared")
missing=$(comm -13 "$tmp/exported" "$tmp/declared")
count=$(wc -l <"$tmp/exported")
if [ -n "$extra" ] || [ -n "$missing" ]; then
	[ -z "$extra" ] || echo "exported by $lib but not declared HCLOCK_API:" $extra
	[ -z "$missing" ] || echo "declared HCLOCK_API but not exported by $lib:" $missing
	exit 1
fi
echo "ok: $lib exports exactly the $count symbols its headers declare HCLOCK_API"
