#!/bin/sh
# mpirun.sh MPIEXEC NP PROGRAM ARGS... - start NP processes with Open MPI or MPICH the way this
# 2-core machine needs: as root, oversubscribed, yielding when idle (Open MPI), and never for
# more than HCLOCK_TEST_TIMEOUT seconds (default 120). The flavor is read from --version.
# MPICH's processes are bound to cores when there are enough (Open MPI binds by default), so
# that a timing test does not measure process migration.
mpiexec=$1 np=$2
shift 2
t=${HCLOCK_TEST_TIMEOUT:-120}
if "$mpiexec" --version 2>&1 | grep -q -i -E 'open ?mpi|openrte'; then
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
	exec timeout -k 5 "$t" "$mpiexec" --oversubscribe --mca mpi_yield_when_idle 1 \
		--mca btl self,vader,tcp -np "$np" "$@"
else
	bind=
	[ "$np" -le "$(nproc)" ] && bind="-bind-to core"
	exec timeout -k 5 "$t" "$mpiexec" $bind -n "$np" "$@"
fi
