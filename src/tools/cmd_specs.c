/*
 * cmd_specs.c - hclock specs: the families hclock is built from, printed from their tables
 * (sync algorithms, offset estimators, base clocks), as text or as the markdown tables of
 * docs/check.md. No MPI.
 */
#include <stdio.h>
#include <string.h>

#include "clock/clock.h"
#include "offset/offset.h"
#include "sync/sync.h"
#include "tools/cmd.h"
#include "tools/mpitool.h"

void specs_print(FILE *f, int markdown)
{
	if (markdown) {
		fprintf(f, "| spec | algorithm |\n|---|---|\n");
		for (size_t i = 0; sync_types[i]; i++)
			fprintf(f, "| `%s` | %s |\n", sync_types[i]->usage, sync_types[i]->help);
		fprintf(f, "\n| OFF | offset estimator |\n|---|---|\n");
		for (size_t i = 0; offset_types[i]; i++)
			fprintf(f, "| `%s` | %s |\n", offset_types[i]->name, offset_types[i]->help);
		fprintf(f, "\n| clock | base clock |\n|---|---|\n");
		for (size_t i = 0; clock_types[i]; i++)
			if (clock_types[i]->help)
				fprintf(f, "| `%s` | %s |\n", clock_types[i]->name, clock_types[i]->help);
		return;
	}
	fprintf(f, "sync specs (--sync):\n");
	for (size_t i = 0; sync_types[i]; i++)
		fprintf(f, "  %-30s %s\n", sync_types[i]->usage, sync_types[i]->help);
	fprintf(f, "offset estimators (OFF):\n");
	for (size_t i = 0; offset_types[i]; i++)
		fprintf(f, "  %-30s %s\n", offset_types[i]->name, offset_types[i]->help);
	fprintf(f, "base clocks (--clock):\n");
	for (size_t i = 0; clock_types[i]; i++)
		if (clock_types[i]->help && !clock_types[i]->emulation)
			fprintf(f, "  %-30s %s\n", clock_types[i]->name, clock_types[i]->help);
}

int cmd_specs(int argc, char **argv)
{
	int markdown = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--markdown")) {
			markdown = 1;
		} else if (!strcmp(argv[i], "--help")) {
			printf("usage: hclock specs [--markdown]\nThe sync algorithms, offset estimators "
			       "and base clocks, from their tables.\n");
			return 0;
		} else {
			fprintf(stderr, "hclock specs: unexpected argument '%s'; expected --markdown or "
			        "--help\n", argv[i]);
			return 2;
		}
	}
	specs_print(stdout, markdown);
	return 0;
}
