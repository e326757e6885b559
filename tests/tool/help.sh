#!/bin/sh
# help.sh HCLOCK - hclock and every subcommand answer --help on stdout with exit 0.
set -e
h=$1
$h --help | grep -q "usage: hclock"
$h --version | grep -q "^hclock "
for sub in $($h --help | awk '/^  [a-z]/ {print $1}'); do
	case $sub in
	align) $h $sub --help | grep -q "usage" ;;
	*) OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 60 $h $sub --help | grep -q "usage" ;;
	esac
	echo "ok: hclock $sub --help"
done
