/*
 * cmd_specs.c - hclock specs: the families hclock is built from, printed from their tables
 * (sync algorithms, offset estimators, base clocks), as text or as the markdown tables of
 * docs/check.md; --explain SPEC: what one spec runs (sync_explain), and under mpirun what
 * its auto(...) parts measure and choose on that job (sync_plan). MPI only for the latter.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock/clock.h"
#include "offset/offset.h"
#include "sync/sync.h"
#include "tools/cmd.h"
#include "tools/mpitool.h"
#include "transport/comm.h"

#define USAGE "usage: hclock specs [--markdown]\n" \
              "       hclock specs --explain SPEC   (mpirun -np P hclock specs --explain SPEC)\n"

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

/* hclock specs --explain SPEC: without a launcher (or with one process) what the spec runs;
 * with 2 or more, its auto(...) parts measure their bursts on this job and say what they
 * would choose (nothing is synchronized) */
static int explain(int argc, char **argv, const char *spec)
{
	hclock_sync *s = NULL;
	struct sync_explain *e = calloc(1, sizeof(*e));
	int first = cmd_launched_rank() <= 0, has_auto = strstr(spec, "auto(") != NULL, rc = 0;
	if (!e) {
		fprintf(stderr, "hclock specs: out of memory\n");
		return 1;
	}
	if (hclock_sync_create(spec, &s)) {
		if (first)
			fprintf(stderr, "hclock specs: %s\n", hclock_last_error());
		free(e);
		return 2;
	}
	struct mpitool t = {.size = 1};
	int mpi = cmd_launched_rank() >= 0;
	if (mpi) {
		MPI_Comm c;
		mpitool_init(&t, "hclock specs", "", &argc, &argv);
		rc = mpitool_clock(&t, NULL, NULL);
		if (!rc && t.size > 1) {
			rc = comm_private(MPI_COMM_WORLD, &c);
			if (!rc)
				rc = sync_plan(s, c, t.base);
			rc = comm_agree(MPI_COMM_WORLD, rc);
			if (rc)
				mpitool_error(&t, "%s", hclock_last_error());
		}
	}
	if (!rc && t.rank == 0) {
		sync_explain(s, e);
		printf("%s", e->text);
		if (!has_auto)
			printf("nothing to measure: no auto(...) in this spec, whose parameters are all "
			       "given.\n");
		else if (t.size < 2)
			printf("not measured: one process. Under mpirun with 2 or more processes (mpirun "
			       "-np 2 hclock specs --explain '%s') each auto(...) measures its bursts on "
			       "that job and says what it would choose.\n", s->spec);
	}
	hclock_sync_free(s);
	free(e);
	return mpi ? mpitool_finish(&t, rc ? 1 : 0) : 0;
}

int cmd_specs(int argc, char **argv)
{
	int markdown = 0;
	const char *spec = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--markdown")) {
			markdown = 1;
		} else if (!strcmp(argv[i], "--explain") || !strncmp(argv[i], "--explain=", 10)) {
			spec = argv[i][9] == '=' ? argv[i] + 10 : i + 1 < argc ? argv[++i] : NULL;
			if (!spec || !*spec) {
				if (cmd_launched_rank() <= 0)
					fprintf(stderr, "hclock specs: --explain needs a sync spec, e.g. --explain "
					        "'auto(0.3s)' (hclock specs lists them)\n");
				return 2;
			}
		} else if (!strcmp(argv[i], "--help")) {
			printf(USAGE "The sync algorithms, offset estimators and base clocks, from their "
			       "tables.\n\n"
			       "  --markdown      the tables as markdown (docs/check.md's)\n"
			       "  --explain SPEC  what SPEC runs: algorithm, fit points, ping-pongs per "
			       "point,\n"
			       "                  span, estimator, levels, cont(...)'s keys with their "
			       "defaults,\n"
			       "                  auto(...)'s planning rules. Under mpirun with 2 or more\n"
			       "                  processes each auto(...) measures its bursts on that job "
			       "and\n"
			       "                  says what it would choose and the error it predicts\n"
			       "                  (nothing is synchronized)\n");
			return 0;
		} else {
			if (cmd_launched_rank() <= 0)
				fprintf(stderr, "hclock specs: unexpected argument '%s'; expected --markdown, "
				        "--explain SPEC or --help\n", argv[i]);
			return 2;
		}
	}
	if (spec && markdown) {
		if (cmd_launched_rank() <= 0)
			fprintf(stderr, "hclock specs: --explain and --markdown cannot be combined; give "
			        "one of them\n");
		return 2;
	}
	if (spec)
		return explain(argc, argv, spec);
	specs_print(stdout, markdown);
	return 0;
}
