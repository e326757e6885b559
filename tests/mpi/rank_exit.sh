#!/bin/sh
# rank_exit.sh FAULT RANKENV CMD... - run CMD as one MPI rank with HCLOCK_FAULT=FAULT (if not
# empty) and, if RANKENV is "R:VAR=VALUE", VAR=VALUE on rank R only (a per-rank environment);
# then report this rank's exit code on stderr as "rank-exit R CODE" and exit 0 (Open MPI's
# mpirun kills the other ranks as soon as one exits non-zero, before they could report).
r=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-unknown}}
[ -n "$1" ] && export HCLOCK_FAULT="$1"
if [ -n "$2" ] && [ "${2%%:*}" = "$r" ]; then
	export "${2#*:}"
fi
shift 2
"$@"
c=$?
echo "rank-exit $r $c" >&2
exit 0
