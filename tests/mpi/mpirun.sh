#!/bin/sh
# mpirun.sh MPIEXEC NP PROGRAM ARGS... - start NP processes with Open MPI or MPICH the way this
# 2-core machine needs: as root, oversubscribed, yielding when idle (Open MPI), and never for
# more than HCLOCK_TEST_TIMEOUT seconds (default 120), hclock's own waits for half of that
# (HCLOCK_TIMEOUT, unless set). The flavor is read from --version.
# MPICH's processes are bound to cores (Open MPI binds by default when there are enough), so
# that a timing test does not measure process migration; with more ranks than cores too,
# round-robin (unbound, in one cgroup, whole launches had every round trip at 46 us instead of
# 0.75 us: 14 of 16 launches once, 2 of 12 another time; bound, 0 of 28).
# HCLOCK_MPIEXEC_ARGS adds launcher arguments (measurements: bench/oversub-accuracy --args;
# a -bind-to there replaces this one); HCLOCK_NO_CGROUP=1 leaves MPICH's ranks ungrouped.
# HCLOCK_TEST_NET=tcp runs the ranks' messages over the kernel's TCP stack instead of shared
# memory (Open MPI: --mca pml ob1 --mca btl tcp,self; round trips of ~8-30 us with a jittery
# tail instead of ~1 us; MPICH, whose ch4 device here is UCX: UCX_TLS=tcp,self, round trips
# of ~8 us): the test bed of the MPI-over-TCP tests (mpi_tcp_*).
# mpirun.sh --grouping MPIEXEC prints how MPICH's ranks would share cores: "cgroup DIR",
# "autogroup off", "not root-grouped" (all fine) or "sessions" (each rank its own scheduling
# group; see below); CMake picks the MPICH floors by it.
#
# Why a cgroup for MPICH: its launcher (hydra) starts every rank in a session of its own
# (setsid). With the kernel's autogroup scheduling (/proc/sys/kernel/sched_autogroup_enabled)
# every session is a scheduling group, and sched_yield() only yields within the caller's
# group, so a rank waiting for its partner keeps the core the partner needs until the
# scheduler's time slice ends (bench/yield_pingpong: a yielding round trip on one core with one
# busy process beside it takes 43 us median and 4 ms at p99 from two sessions, 1.3 us from
# one). Open MPI's ranks stay in the launching session. So when MPICH's ranks share cores they
# run in one cpu cgroup of their own (autogroup leaves tasks outside the root group alone),
# if this process may create one (root, cgroup v1 cpu controller or v2 with cpu enabled).

# cpu_group_root: the cgroup directory to make the group in, if the ranks need one
cpu_group_root() {
	[ "$(cat /proc/sys/kernel/sched_autogroup_enabled 2>/dev/null)" = 1 ] || {
		echo "autogroup off"
		return 1
	}
	while read -r _ dir type opts _; do
		case "$type" in
		cgroup)
			case ",$opts," in *,cpu,*) ;; *) continue ;; esac
			# already in a cpu group below the root: autogroup does not apply
			grep -qE '^[0-9]+:([^:]*,)?cpu(,[^:]*)?:/.' /proc/self/cgroup && {
				echo "not root-grouped"
				return 1
			} ;;
		cgroup2)
			grep -qw cpu "$dir/cgroup.subtree_control" 2>/dev/null || continue
			grep -q '^0::/.' /proc/self/cgroup && {
				echo "not root-grouped"
				return 1
			} ;;
		*) continue ;;
		esac
		[ -w "$dir/cgroup.procs" ] && echo "$dir" && return 0
	done </proc/mounts
	echo "sessions"
	return 1
}

if [ "$1" = --grouping ]; then
	if "$2" --version 2>&1 | grep -q -i -E 'open ?mpi|openrte'; then
		echo "one session"
	elif root=$(cpu_group_root); then
		echo "cgroup $root"
	else
		echo "$root"
	fi
	exit 0
fi

mpiexec=$1 np=$2
shift 2
t=${HCLOCK_TEST_TIMEOUT:-120}
# hclock's own waits end (one line naming the rank and the step) well before the launch is
# killed: half of it
export HCLOCK_TIMEOUT=${HCLOCK_TIMEOUT:-$((t / 2))}
if "$mpiexec" --version 2>&1 | grep -q -i -E 'open ?mpi|openrte'; then
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
	net="--mca btl self,vader,tcp"
	[ "$HCLOCK_TEST_NET" = tcp ] && net="--mca pml ob1 --mca btl tcp,self"
	exec timeout -k 5 "$t" "$mpiexec" --oversubscribe --mca mpi_yield_when_idle 1 \
		$net $HCLOCK_MPIEXEC_ARGS -np "$np" "$@"
fi
[ "$HCLOCK_TEST_NET" = tcp ] && export UCX_TLS=tcp,self
bind="-bind-to core"
case " $HCLOCK_MPIEXEC_ARGS " in *" -bind-to "* | *" -binding "*) bind= ;; esac
if [ "$np" -gt "$(nproc)" ] && [ -z "$HCLOCK_NO_CGROUP" ] && root=$(cpu_group_root); then
	# groups left behind by runs that were killed (their shell is gone)
	for d in "$root"/hclock-mpirun-*; do
		[ -d "$d" ] && ! kill -0 "${d##*-}" 2>/dev/null && rmdir "$d" 2>/dev/null
	done
	cg="$root/hclock-mpirun-$$"
	if mkdir "$cg" 2>/dev/null && echo $$ >"$cg/cgroup.procs" 2>/dev/null; then
		# not exec'd (the group is removed afterwards): pass a termination on
		timeout -k 5 "$t" "$mpiexec" $bind $HCLOCK_MPIEXEC_ARGS -n "$np" "$@" <&0 &
		pid=$!
		trap 'kill -TERM $pid 2>/dev/null' HUP INT TERM
		while :; do
			wait $pid
			rc=$?
			kill -0 $pid 2>/dev/null || break
		done
		echo $$ >"$root/cgroup.procs"
		rmdir "$cg" 2>/dev/null
		exit $rc
	fi
	rmdir "$cg" 2>/dev/null
	echo "mpirun.sh: could not run the ranks in one cpu cgroup ($cg): timing on shared" \
		"cores will be poor" >&2
fi
exec timeout -k 5 "$t" "$mpiexec" $bind $HCLOCK_MPIEXEC_ARGS -n "$np" "$@"
