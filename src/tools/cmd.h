/* cmd.h - the subcommands of the hclock tool. Each takes argv[0] = its own name. */
#ifndef HCLOCK_TOOLS_CMD_H
#define HCLOCK_TOOLS_CMD_H

struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
};

int cmd_check(int argc, char **argv);
int cmd_align(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_imbalance(int argc, char **argv);
int cmd_specs(int argc, char **argv);
int cmd_drift(int argc, char **argv);
int cmd_trace(int argc, char **argv);
int cmd_gantt(int argc, char **argv);
int cmd_waits(int argc, char **argv);

/* This process's rank as its launcher (mpirun, mpiexec, srun) put it in the environment
 * (OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK), -1 without a launcher: who reports bad input
 * before MPI is started. */
int cmd_launched_rank(void);

#include <stdio.h>
/* The sync, offset and clock tables as text (for --help) or markdown (docs/check.md's). */
void specs_print(FILE *f, int markdown);

#endif
