/*
 * main.c - the hclock command's entry point: hclock SUBCOMMAND [OPTIONS]
 * Each subcommand lives in its own cmd_*.c and is listed in the table below.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/cmd.h"
#include "hclock.h"

static const struct cmd cmds[] = {
	{"check", cmd_check, "synchronize, then measure the global clock's accuracy (Alg. 6)"},
	{"bench", cmd_bench, "latency of MPI collectives on the global clock (Round-Time, Alg. 5)"},
	{"imbalance", cmd_imbalance, "exit imbalance of a barrier (or any collective) started "
	                             "at one common time"},
	{"drift", cmd_drift, "every rank's offset to rank 0 over time, with linear fits (Fig. 2)"},
	{"specs", cmd_specs, "the sync specs' parts; --explain SPEC: what one runs (measured under mpirun)"},
#ifdef HCLOCK_HAVE_TRACE
	{"trace", cmd_trace, "run an unmodified MPI program traced on the global clock"},
	{"gantt", cmd_gantt, "per-rank bars of one MPI call from a trace (global and raw clocks)"},
#endif
#if defined(HCLOCK_HAVE_TRACE) && defined(HCLOCK_HAVE_OTF2)
	{"waits", cmd_waits, "wait states (late sender, wait at barrier, ...) of any OTF2 archive"},
#endif
#ifdef HCLOCK_HAVE_ALIGN
	{"align", cmd_align, "put traces recorded on separate machines on one timeline"},
#endif
	{NULL, NULL, NULL},
};

int cmd_launched_rank(void)
{
	static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"};
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		const char *v = getenv(vars[i]);
		if (v && *v)
			return atoi(v);
	}
	return -1;
}

/* Under mpirun, only the first rank reports a wrong subcommand (MPI is not started yet). */
static int first_rank(void)
{
	return cmd_launched_rank() <= 0;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: hclock SUBCOMMAND [OPTIONS]   (hclock SUBCOMMAND --help for its options)\n\n");
	for (const struct cmd *c = cmds; c->name; c++)
		fprintf(f, "  %-10s %s\n", c->name, c->help);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		if (first_rank())
			usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("hclock %s\n", HCLOCK_VERSION_STRING);
		return 0;
	}
	for (const struct cmd *c = cmds; c->name; c++)
		if (!strcmp(argv[1], c->name))
			return c->fn(argc - 1, argv + 1);
	if (first_rank()) {
		fprintf(stderr, "hclock: unknown subcommand '%s'; expected one of:", argv[1]);
		for (const struct cmd *c = cmds; c->name; c++)
			fprintf(stderr, " %s", c->name);
		fprintf(stderr, "\n");
	}
	return 2;
}
