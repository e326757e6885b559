#!/bin/sh
# readme_specs.sh HCLOCK PAGE - the spec tables of PAGE (docs/check.md) are exactly what the
# family tables print (hclock specs --markdown), so adding an algorithm updates help, errors
# and the user guide from one line (regenerate the block between the markers when this fails).
h=$1 page=$2
want=$($h specs --markdown)
have=$(sed -n '/hclock specs --markdown: begin/,/hclock specs --markdown: end/p' "$page" |
	sed '1d;$d')
if [ "$want" != "$have" ]; then
	echo "FAIL: $page's spec tables differ from 'hclock specs --markdown':"
	printf '%s\n' "$want" >/tmp/readme_specs.want.$$
	printf '%s\n' "$have" | diff /tmp/readme_specs.want.$$ - | head -20
	rm -f /tmp/readme_specs.want.$$
	exit 1
fi
# and --help shows every sync algorithm's form
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 60 $h check --help >/tmp/readme_specs.help.$$
for form in $($h specs --markdown | sed -n 's/^| `\([^`]*\)` |.*/\1/p'); do
	grep -qF -- "$form" /tmp/readme_specs.help.$$ || { echo "FAIL: '$form' missing from hclock check --help"; rm -f /tmp/readme_specs.help.$$; exit 1; }
done
rm -f /tmp/readme_specs.help.$$
echo "ok: $page spec tables and hclock check --help come from the tables"
