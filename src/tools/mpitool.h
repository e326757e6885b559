/* mpitool.h - what every MPI subcommand shares: start-up, agreeing on errors, option values. */
#ifndef HCLOCK_TOOLS_MPITOOL_H
#define HCLOCK_TOOLS_MPITOOL_H

#include <getopt.h>
#include <stddef.h>
#include <stdint.h>

#include <mpi.h>

#include "check/truth.h"
#include "hclock.h"

struct mpitool {
	const char *name; /* "hclock check" */
	const char *default_sync; /* the sync spec without --sync */
	int rank, size;
	hclock_emu *emu;  /* from --emulate or HCLOCK_EMULATE, or NULL */
	hclock_clock *base;
};

/* MPI_Init and rank/size. */
void mpitool_init(struct mpitool *t, const char *name, const char *default_sync, int *argc,
                  char ***argv);
/* What the continuous clock's exchanges did over all processes of the run (rank 0's copy). */
struct mpitool_cont {
	int have;              /* 1 for a continuous sync (else the rest is 0) */
	uint64_t exchanges_min, exchanges_max; /* over the processes that exchange with a parent */
	uint64_t timeouts;     /* summed over all processes */
	double thread_cpu_max_s; /* the busiest background thread's CPU time, s (-1: none) */
	int failed;            /* processes whose exchanges all timed out: they ran on the
	                          one-shot model, bounds going stale */
	int failed_rank;       /* the first of them (MPI_COMM_WORLD rank), -1 none */
	double rtt_max_ns;     /* the largest of the processes' latest exchange's fastest round
	                          trip, ns (0: not known) */
	double noise_max_ns;   /* the largest of their link's noise (hclock_sync_stats), ns */
};
/* Collective over MPI_COMM_WORLD, after the sync's stop: gather hclock_sync_stats; on rank 0
 * fill *c and, when a process's exchanges all failed, print one warning line naming it. A
 * one-shot sync: c->have = 0, nothing printed. */
void mpitool_cont_report(const struct mpitool *t, const hclock_sync *s, struct mpitool_cont *c);
/* Its parts: *c from the statistics of n processes at hand, all[MPITOOL_CONT_N r ..] process
 * r's {exchanges, timeouts, thread CPU s (-1: no thread), 1 for a continuous sync (else 0),
 * the latest exchange's fastest round trip ns, the link's noise ns (0: not known)};
 * and the warning line, "NAME: warning: ..." on stderr when c->failed. */
#define MPITOOL_CONT_N 6
void mpitool_cont_sum(int n, const double *all, struct mpitool_cont *c);
void mpitool_cont_warn(const char *name, const struct mpitool_cont *c);
/* What *c says in words ("N-M exchanges per process, T timeouts, thread CPU X s at most", or
 * "0 exchanges (none made: ...)" when no process made or tried one), and as one line on stderr,
 * "NAME: continuous clock: ...", for a continuous sync (nothing otherwise). */
void mpitool_cont_text(char *buf, size_t len, const struct mpitool_cont *c);
void mpitool_cont_line(const char *name, const struct mpitool_cont *c);
/* Print this rank's warnings of the last sync (hclock_sync_warnings), one
 * "NAME: warning: ..." line each on stderr (every rank its own). */
void mpitool_warnings(const struct mpitool *t, const hclock_sync *s);
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
/* --truth not given (*truth 0): the environment's HCLOCK_TRUTH (shared or realtime, as
 * --truth's value; scripts/cluster run sets realtime) into *truth and *mode. NULL, or the
 * line that says what was wrong. */
const char *mpitool_truth_env(int *truth, enum truth_mode *mode);
/* Collective, after mpitool_clock without emulation: the truth of the base clock (--truth
 * [realtime], check/truth.h) set up and tried once; on failure one line and non-zero. */
int mpitool_truth_setup(struct mpitool *t, enum truth_mode mode, int64_t *width_ns);
/* Free the clock and emulation, MPI_Finalize, and return the exit code. */
int mpitool_finish(struct mpitool *t, int code);

/* Output formats of the MPI subcommands. */
enum tool_format { FMT_TABLE, FMT_JSON, FMT_CSV };

/* Options every MPI subcommand takes. */
struct mpitool_opts {
	const char *sync;     /* --sync SPEC; the tool's default_sync unless given */
	const char *emulate;  /* --emulate SPEC, or NULL (then HCLOCK_EMULATE, if set) */
	const char *clock;    /* --clock NAME, or NULL (monotonic) */
	enum tool_format fmt; /* --format table|json|csv; table unless given */
	int help;             /* --help given */
};

/* Their getopt_long entries (option codes 's', 'e', 'c', 'f', 'h'), for a tool's table. */
#define MPITOOL_LONGOPTS                                                                  \
	{"sync", required_argument, 0, 's'}, {"emulate", required_argument, 0, 'e'},       \
	{"clock", required_argument, 0, 'c'}, {"format", required_argument, 0, 'f'},       \
	{"help", no_argument, 0, 'h'}

/* A tool's own option c with argument arg (NULL for flags): NULL, or the error line. */
typedef const char *(*mpitool_optfn)(int c, const char *arg, void *ctx);

/*
 * Parse argv against longopts (which holds MPITOOL_LONGOPTS and the tool's own options):
 * the common options land in *o (set to their defaults first), every other one goes to
 * own(c, optarg, ctx). Returns NULL, or the first error line: own's, or one written to buf
 * for a bad --format, an unknown option or missing value, or an extra argument, each
 * pointing to `NAME --help`. Prints nothing.
 */
const char *mpitool_parse(int argc, char **argv, const struct mpitool *t, const struct option *longopts,
                          struct mpitool_opts *o, mpitool_optfn own, void *ctx, char *buf,
                          size_t len);

/* Option values. Return 0 or -1 (and print nothing). */
/* "table", "json" or "csv" */
int opt_format(const char *s, enum tool_format *out);
int opt_double(const char *s, double lo, double hi, double *out);
int opt_long(const char *s, long lo, long hi, long *out);
/* Options several tools share, each with one range and one error line: NULL, or the line. */
const char *opt_warmup(const char *arg, long *reps);      /* --warmup N: 0 to 1000000 */
const char *opt_slack_factor(const char *arg, double *b); /* --slack-factor B: 1 to 1e6 */
const char *opt_root(const char *arg, long *rank);        /* --root R: a rank >= 0 */
const char *opt_seed(const char *arg, long *seed);        /* --seed N: 0 to LONG_MAX */
const char *opt_pingpongs(const char *arg, long *n);      /* --pingpongs N: 1 to 1000000 */
/* "0,1,10m" -> ascending list of at most max durations in s (util/parse.h: a bare number is
 * seconds) within [lo, hi]; returns the count or -1 */
int opt_duration_list(const char *s, double lo, double hi, double *out, int max);

#endif
