/* mpitool.h - what every MPI subcommand shares: start-up, agreeing on errors, option values. */
#ifndef HCLOCK_TOOLS_MPITOOL_H
#define HCLOCK_TOOLS_MPITOOL_H

#include <stdint.h>

#include <mpi.h>

#include "hclock.h"

/* The sync spec every MPI subcommand uses unless --sync says otherwise (README explains). */
#define HCLOCK_DEFAULT_SYNC "h2(hca3/100/skampi/20/span=0.3,prop)"

struct mpitool {
	const char *name; /* "hclock check" */
	int rank, size;
	hclock_emu *emu;  /* from --emulate or HCLOCK_EMULATE, or NULL */
	hclock_clock *base;
};

/* MPI_Init and rank/size. */
void mpitool_init(struct mpitool *t, const char *name, int *argc, char ***argv);
/* Print one error line on rank 0 (all ranks call it with the same message). */
void mpitool_error(const struct mpitool *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Collective: the worst (lowest) rc of all ranks; if nonzero and this rank's rc was 0,
 * nothing is printed here (the failing rank printed). */
int mpitool_agree(const struct mpitool *t, int rc);
/* Collective: set up emulation and the base clock; on failure one line and non-zero. */
int mpitool_clock(struct mpitool *t, const char *emulate, const char *clock);
/* Collective: create the sync algorithm of spec (*s) and the clock (mpitool_clock); on
 * failure one line on rank 0, nothing left allocated, and non-zero. */
int mpitool_sync_setup(struct mpitool *t, const char *spec, const char *emulate,
                       const char *clock, hclock_sync **s);
/* Free the clock and emulation, MPI_Finalize, and return the exit code. */
int mpitool_finish(struct mpitool *t, int code);

/* Output formats of the MPI subcommands. */
enum tool_format { FMT_TABLE, FMT_JSON, FMT_CSV };

/* Option values. Return 0 or -1 (and print nothing). */
/* "table", "json" or "csv" */
int opt_format(const char *s, enum tool_format *out);
int opt_double(const char *s, double lo, double hi, double *out);
int opt_long(const char *s, long lo, long hi, long *out);
/* "0,1,10" -> ascending list of at most max values in [lo, hi]; returns count or -1 */
int opt_double_list(const char *s, double lo, double hi, double *out, int max);

#endif
