#!/bin/sh
# layers_test.sh CHECK_LAYERS - scripts/check-layers on small made-up trees: a clean one
# passes; one with upward includes, circles of files, a circle of folders, an unknown
# folder, an include of no file, a stale and a malformed allow line, and the library's MPI
# around its door (a bare MPI_ call below tools/, <mpi.h> included there) fails with one line
# for each, and so does a circle of calls between two files; a call in a comment or string,
# MPI_USER(...), tools/, a member named like a function and a callback handed down are no
# problem.
set -u
check=${1:?usage: layers_test.sh CHECK_LAYERS}
tmp=$(mktemp -d /tmp/hclock_layers.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0
put() { # put FILE INCLUDED...: FILE below $tmp/t/src including each INCLUDED
	f=$tmp/t/src/$1
	shift
	mkdir -p "$(dirname "$f")"
	: >"$f"
	for i in "$@"; do echo "#include \"$i\"" >>"$f"; done
}
want() { # want PATTERN: a line of the output matches
	grep -q -- "$1" "$tmp/out" || { echo "FAIL: no line like '$1' in:"; cat "$tmp/out"; fail=1; }
}

mkdir -p "$tmp/t/include"
: >"$tmp/t/include/hclock.h"
put util/a.h
put util/a.c util/a.h hclock.h
put sync/s.h util/a.h
put tools/t.c sync/s.h a_local.h
put tools/a_local.h
put util/pmpi.h
echo '#include <mpi.h>' >>"$tmp/t/src/util/pmpi.h"
printf '%s\n' '/* MPI_Send(x) in a comment */' 'int f(void) { return PMPI_Barrier(c) +' \
	'  MPI_USER(Bcast)(b) + g("MPI_Recv(") + h(MPI_COMM_WORLD, MPI_SUM); }' >>"$tmp/t/src/util/a.c"
printf '%s\n' '#include <mpi.h>' 'int main(void) { return MPI_Init(0, 0); }' >>"$tmp/t/src/tools/t.c"
# calls: p.c calls q.c's q_fn; q.c names p_fn only as a member and hands a callback down
put util/p.h
put util/q.h
echo 'int p_fn(void);' >>"$tmp/t/src/util/p.h"
echo 'int q_fn(int (*cb)(void));' >>"$tmp/t/src/util/q.h"
put util/p.c util/p.h util/q.h
printf '%s\n' 'static int mine(void) { return 1; }' 'int p_fn(void)' '{' \
	'	return q_fn(mine);' '}' >>"$tmp/t/src/util/p.c"
put util/q.c util/q.h
printf '%s\n' 'int q_fn(int (*cb)(void)) { return cb() + s->p_fn + t.p_fn; }' >>"$tmp/t/src/util/q.c"
"$check" --root "$tmp/t" --allow /nonexistent --graph >"$tmp/out" 2>&1
rc=$?
[ $rc -eq 0 ] || { echo "FAIL: clean tree: exit $rc"; cat "$tmp/out"; fail=1; }
want '^ *tools -> sync  *1$'
want '^check-layers: ok'

put util/b.h util/c.h
put util/c.h util/b.h
put util/a.h sync/s.h
put sync/s.h util/a.h tools/a_local.h
put odd/o.c
put tools/u.c missing.h
printf '%s\n' '#include <mpi.h>' 'void s(void) {' '	MPI_Send (b, 1);' '}' >>"$tmp/t/src/sync/s.h"
printf '%s\n' 'int q2(void) { /* p_fn() */ return p_fn(); }' >>"$tmp/t/src/util/q.c"
cat >"$tmp/allow" <<'END'
# a comment line
util/a.c -> util/gone.h  # stale
util/a.c -> util/a.h
END
"$check" --root "$tmp/t" --allow "$tmp/allow" >"$tmp/out" 2>&1
rc=$?
[ $rc -eq 1 ] || { echo "FAIL: bad tree: exit $rc, want 1"; fail=1; }
want '^src/util/a.h:1: includes sync/s.h, a higher layer'
want '^src/sync/s.h:2: includes tools/a_local.h, a higher layer'
want '^include circle between files: util/b.h -> util/c.h -> util/b.h$'
want '^include circle between files: sync/s.h -> util/a.h -> sync/s.h$'
want '^include circle between folders: sync -> tools -> sync (sync/s.h -> tools/a_local.h; tools/t.c -> sync/s.h), and circles through util$'
want "^src/odd/o.c: folder 'odd' is not a layer"
want '^src/tools/u.c:1: includes "missing.h", which is no file'
want "allow:2: src/util/a.c does not include util/gone.h any more: remove the line"
want 'allow:3: want "FILE -> INCLUDED  # why"'
want '^src/sync/s.h:3: includes <mpi.h>; below tools/ the MPI door is "util/pmpi.h"$'
want '^src/sync/s.h:5: calls MPI_Send: below tools/ the library.s own MPI calls are PMPI_Send'
want "^circle of calls between files: src/util/p.c -> src/util/q.c -> src/util/p.c (util/p.c's p_fn calls q_fn; util/q.c's q2 calls p_fn)"
n=$(grep -c . "$tmp/out")
[ "$n" -eq 13 ] || { echo "FAIL: $n lines, want 12 problems and the count:"; cat "$tmp/out"; fail=1; }
[ $fail -eq 0 ] && echo "ok: check-layers catches each problem once"
exit $fail
