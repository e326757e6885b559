#!/bin/sh
# bad_input.sh MPIRUN MPIEXEC HCLOCK - every bad input gets exactly one line on stderr from
# hclock (mpirun's own notice aside), a non-zero exit from every rank, and no hang.
mpirun=$1 mpiexec=$2 hclock=$3
fail=0
run() {
	expect=$1
	shift
	out=$(HCLOCK_TEST_TIMEOUT=60 "$mpirun" "$mpiexec" 2 "$hclock" "$@" 2>&1 >/dev/null)
	rc=$?
	lines=$(printf '%s\n' "$out" | grep -c '^hclock')
	if [ $rc -eq 0 ] || [ $rc -ge 124 ] || [ "$lines" -ne 1 ] ||
		! printf '%s\n' "$out" | grep '^hclock' | grep -q -- "$expect"; then
		echo "FAIL: hclock $* -> exit $rc, $lines hclock line(s), expected one naming '$expect':"
		printf '%s\n' "$out" | head -5
		fail=1
	else
		echo "ok: hclock $* -> exit $rc: $(printf '%s\n' "$out" | grep '^hclock')"
	fi
}
run "'hca4'" check --sync hca4/10/skampi/5
run "ends early" check --sync 'h2(hca3/10/skampi/5'
run "missing token" check --sync 'h2(,prop)'
run "'h4'" check --sync 'h4(hca3/10/skampi/5,prop)'
run "BUDGET" check --sync 'auto(0s)'
run "'horizon=H'" check --sync 'auto(0.3s,horizn=1)'
run "unknown option" check --bogus
run "--wait" check --wait 1,x
run "--wait" check --wait 5,1
run "--format" check --format xml
run "--sample" check --sample 0
run "'sekw'" check --emulate sekw=1e-6
run "skew" check --emulate skew=2
run "unexpected argument" check extra
run "unknown clock" check --clock sundial
run "prop refused" check --sync 'h2(hca3/10/skampi/5,prop)' --wait 0 --emulate skew=1e-4,nodes=2,topology=host
run "prop refused" check --clock wtime --sync 'h2(hca3/10/skampi/5,prop)' --wait 0
run "--truth" check --truth --clock wtime --sync none --wait 0
run "unknown subcommand" frobnicate
exit $fail
