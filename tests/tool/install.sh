#!/bin/sh
# install.sh BUILD_DIR MPIRUN MPIEXEC - `cmake --install` into a temporary prefix, build the
# example against the installed header and pkg-config file, and run it on 2 ranks.
set -e
build=$1 mpirun=$2 mpiexec=$3
src=$(cd "$(dirname "$0")/../.." && pwd)
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
test -x "$prefix/bin/hclock"
test -f "$prefix/include/hclock.h"
test -f "$prefix/include/hclock_api.h"
for p in hclock hclock-check hclock-bench hclock-imbalance hclock-drift hclock-specs; do
	test -f "$prefix/share/man/man1/$p.1" || { echo "FAIL: man page $p.1 not installed"; exit 1; }
done
pc=$(find "$prefix" -name hclock.pc)
test -n "$pc"
export PKG_CONFIG_PATH=$(dirname "$pc")
case "$mpiexec" in *mpich*) cc=mpicc.mpich ;; *) cc=mpicc ;; esac
$cc "$src/examples/hello_global.c" $(pkg-config --cflags --libs hclock) -o "$prefix/hello"
out=$(LD_LIBRARY_PATH=$(dirname "$(find "$prefix" -name 'libhclock.so' | head -1)") \
	HCLOCK_EMULATE=skew=1e-4,offset=1,seed=3 "$mpirun" "$mpiexec" 2 "$prefix/hello")
echo "$out"
echo "$out" | grep -q "rank 1: global time .* true error"
