/*
 * scheme.h - measurement schemes: how repetitions of an operation are started and timed.
 *
 * One family, one table: every scheme is one file that defines a const struct scheme_type
 * scheme_type_NAME (its name, usage, help line, create/measure/destroy hooks) and one line
 * SCHEME_TYPE(NAME) in bench/schemes.def. The factory, --help, the error lines that list
 * the valid schemes and the report's wording all read that table. A scheme with state of
 * its own embeds struct bench_scheme as its first member and recovers itself with
 * container_of.
 * Each scheme's file says what it does (docs/bench.md has all of them, and how to add one).
 *
 * Every scheme measures one operation at one size for one time slice or until max_reps
 * valid repetitions (or the RSE stop rule), after warmup repetitions that are not kept.
 * All its decisions (stop, valid) are agreed on by all ranks, so every rank records the
 * same number of repetitions. Schemes are MPI code: they know nothing of output formats.
 *
 * Errors: every function here returns 0 or a negative HCLOCK_E* (HCLOCK_EMPI when an MPI
 * call failed, HCLOCK_ENOMEM, HCLOCK_EINVAL for a bad spec), with hclock_last_error()
 * naming what failed. A rank that fails in a collective loop keeps taking part until the
 * next agreement, so that no rank is left waiting; the caller agrees on the result.
 */
#ifndef HCLOCK_BENCH_SCHEME_H
#define HCLOCK_BENCH_SCHEME_H

#include <stddef.h>
#include <stdint.h>

#include "util/pmpi.h"

#include "bench/op.h"
#include "numerics/stats.h"
#include "hclock.h"

/* When a scheme has no common start time, common_ns holds this. */
#define BENCH_NO_COMMON INT64_MIN

/* The repetitions of one (scheme, op, size) as recorded by this rank. */
struct bench_series {
	size_t n, cap;        /* repetitions recorded (warm-up excluded); the same on all ranks */
	int64_t *start_ns;    /* this rank's call entry, global clock, ns */
	int64_t *end_ns;      /* this rank's call exit, global clock, ns */
	int64_t *common_ns;   /* the agreed start of the repetition, global clock, ns, or
	                         BENCH_NO_COMMON (barrier, none) */
	unsigned char *valid; /* 1: valid on every rank; 0: late or overlong somewhere */
	size_t nvalid;
	int64_t window_ns;    /* window scheme: final window width, ns (0 otherwise) */
	int64_t slack_ns;     /* window, roundtime: start slack used, ns (0 otherwise) */
};

void bench_series_init(struct bench_series *s);
void bench_series_free(struct bench_series *s);
/* Append one repetition: 0 or HCLOCK_ENOMEM. */
int bench_series_add(struct bench_series *s, int64_t common_ns, int64_t start_ns,
                     int64_t end_ns, int valid);

struct bench_params {
	MPI_Comm comm;
	hclock_clock *clk;     /* the global clock */
	int64_t time_slice_ns; /* per (op, size), ns, > 0 */
	long max_reps;         /* valid repetitions to stop at; 0: no limit */
	long warmup;           /* repetitions run first and not kept */
	double rse;            /* stop when the relative standard error of the mean latency
	                          falls below this (0: off); checked from 10 valid reps on */
	struct stats_running *rse_acc; /* the measurement's valid latencies over its passes so
	                          far, which the rse rule judges and this call adds to (NULL:
	                          this call's own) */
	double slack_factor;   /* B of Alg. 5: start slack = B x bcast_lat_ns */
	int64_t bcast_lat_ns;  /* measured MPI_Bcast latency (at launch), ns */
	int64_t slack_lat_ns;  /* the latency an adaptive slack is made of: bench_slack_latency's
	                          figure, taken right before this measurement, ns (0: none,
	                          bcast_lat_ns) */
	int64_t min_slack_ns;  /* lower bound of the slack, ns */
};

struct bench_scheme;

/* One scheme: its line in the table (bench/schemes.def). */
struct scheme_type {
	const char *name;  /* what --scheme calls it: "window" */
	const char *usage; /* its spec's form for --help and errors: "window[/batch=N]" */
	const char *help;  /* one line for --help */
	int common_start;  /* 1: repetitions start at agreed times on the global clock and the
	                      latency counts from there; 0: from the first process's entry */
	/* Parse args (what follows the name in the spec: "" or "/key=value/...", each
	 * argument parsed here, in the scheme's own file) and create a scheme of type t (this
	 * entry) in *out. Returns 0, HCLOCK_EINVAL (scheme_arg_bad: the bad argument and what
	 * is right) or HCLOCK_ENOMEM. scheme_create_plain for a scheme without arguments. */
	int (*create)(const struct scheme_type *t, const char *args, struct bench_scheme **out);
	/* Collective over p->comm: measure b's operation into out (initialized, empty).
	 * Returns 0 or a negative HCLOCK_E* on the ranks that failed; every rank returns. */
	int (*measure)(struct bench_scheme *s, const struct bench_params *p, struct bench_buf *b,
	               struct bench_series *out);
	void (*destroy)(struct bench_scheme *s); /* may be NULL: free(s) */
};

struct bench_scheme {
	const struct scheme_type *type;
	char *spec; /* as given to bench_scheme_create, e.g. "window/batch=8" (owned) */
};

/*
 * Factory: the scheme of spec "NAME[/ARG...]" (NAME one of the table's, ARG what that
 * scheme takes). Returns 0, HCLOCK_EINVAL (unknown name, listing the valid ones, or a bad
 * argument) or HCLOCK_ENOMEM; hclock_last_error() says which. Free with bench_scheme_free.
 */
int bench_scheme_create(const char *spec, struct bench_scheme **out);
void bench_scheme_free(struct bench_scheme *s);
/* The spec it was created from ("roundtime", "window/batch=8"). */
const char *bench_scheme_spec(const struct bench_scheme *s);
/* Collective: s->type->measure (see struct scheme_type). */
int bench_scheme_measure(struct bench_scheme *s, const struct bench_params *p,
                         struct bench_buf *b, struct bench_series *out);

/* The table, in bench/schemes.def order, NULL-terminated (scheme.c). */
extern const struct scheme_type *const scheme_types[];
/* The scheme called name (n characters), or NULL. */
const struct scheme_type *scheme_type_find(const char *name, size_t n);
/* Its length, and its entry i (0 <= i < bench_scheme_count(); NULL beyond). */
size_t bench_scheme_count(void);
const struct scheme_type *bench_scheme_type(size_t i);
/* The names joined by ", ": all (common < 0), or those whose common_start is common
 * ("barrier, none, window, roundtime"; static storage). */
const char *bench_scheme_names(int common);

/* ---- for the schemes' create hooks ------------------------------------------------- */

/* A scheme without state of its own: a bench_scheme of type t. 0 or HCLOCK_ENOMEM. */
int scheme_new(const struct scheme_type *t, struct bench_scheme **out);

/* One argument of a spec: "key=value" (val after '=') or a bare "key" (val NULL). */
struct scheme_arg {
	const char *tok; /* the argument, tok[0..len) */
	size_t len;
	const char *val; /* the value after '=', val[0..vlen), or NULL */
	size_t vlen;
};
/* Take the next "/ARG" off *args: 1, or 0 when none is left. */
int scheme_arg_next(const char **args, struct scheme_arg *a);
/* 1 when a's key (the part before '=', or all of it) is key. */
int scheme_arg_is(const struct scheme_arg *a, const char *key);
/* err_set(HCLOCK_EINVAL): "scheme NAME: bad argument 'ARG' (why); the form is USAGE" (or
 * "NAME takes no arguments"). */
int scheme_arg_bad(const struct scheme_type *t, const struct scheme_arg *a, const char *why);
/* The create hook of a scheme without arguments or state: refuses any argument. */
int scheme_create_plain(const struct scheme_type *t, const char *args,
                        struct bench_scheme **out);

/* ---- shared by the schemes (scheme.c) --------------------------------------------- */

/* The start slack of p: max(B x bcast latency, min_slack_ns), ns. */
int64_t scheme_slack_ns(const struct bench_params *p);

/*
 * The start slack in use. Alg. 5 keeps B x latency fixed; when processes share cores (or
 * the machine is loaded) a broadcast can take a scheduler hand-off longer than measured,
 * and then every round would be late. So the slack doubles when 3 of the last 8 rounds
 * were late, up to max_ns, and halves (not below base_ns) after 16 rounds in a row on
 * time. Late rounds stay invalid either way; this only keeps them rare. Fed with agreed
 * flags, it evolves identically on every rank.
 */
/* Defaults of the tools that start operations at common times (bench, imbalance): B of
 * Alg. 5, and the least slack whatever the measured MPI_Bcast latency, ns. */
#define BENCH_DEFAULT_SLACK_FACTOR 4.0
#define BENCH_MIN_SLACK_NS 2000

struct bench_slack {
	int64_t base_ns; /* B x MPI_Bcast latency (at least the minimum slack), ns */
	int64_t cur_ns;  /* the slack for the next round, ns */
	int64_t max_ns;  /* upper limit, ns */
	int streak;      /* rounds on time in a row */
	unsigned hist;   /* lateness of the last 8 rounds, one bit each */
};
void slack_init(struct bench_slack *sl, int64_t base_ns, int64_t max_ns);
void slack_update(struct bench_slack *sl, int late);

/*
 * Stop rule state: the time slice (started by stop_begin on this rank's global clock), the
 * valid-repetition limit and the RSE rule, fed with agreed latencies only, so that every
 * rank reaches the same decision from the same data once out_of_time is agreed.
 */
struct bench_stop {
	int64_t t0_ns;        /* global clock at the start of the slice, ns */
	int64_t slice_ns;
	long max_reps;
	double rse;
	size_t nvalid;
	struct stats_running own; /* of this call's valid latencies, ns */
	struct stats_running *lat; /* what the rse rule judges: own, or bench_params' rse_acc */
};
void stop_begin(struct bench_stop *st, const struct bench_params *p);
/* 1 when this rank's slice is over (local view; agree on it before acting). */
int stop_out_of_time(const struct bench_stop *st, hclock_clock *clk);
/* Feed one agreed valid latency (ns); returns 1 when max_reps or the RSE rule is met. */
int stop_add_valid(struct bench_stop *st, double lat_ns);
/* Whether the valid latencies lat meet the rse rule (rse > 0, 10 of them at least, the
 * relative standard error of their mean at most rse): a measurement of several passes that
 * met it is done, and its later passes leave it out. */
int stop_rse_reached(const struct stats_running *lat, double rse);

/*
 * Agree on k repetitions (collective): in: this rank's late/overlong flags (nonzero =
 * invalid), starts and ends; out (every rank): invalid[i] = any rank flagged it,
 * first_start[i] = min start, last_end[i] = max end; *out_of_time = any rank's flag.
 * One MPI_Allreduce of 3k + 1 int64. 0, HCLOCK_EMPI (then *out_of_time = 1) or
 * HCLOCK_ENOMEM (k > 64 only).
 */
int scheme_agree(MPI_Comm comm, int k, const int64_t *flags, const int64_t *start,
                 const int64_t *end, int out_of_time_in, int64_t *invalid,
                 int64_t *first_start, int64_t *last_end, int *out_of_time);

/*
 * The loop of the schemes without a common start (barrier, none): repetitions in batches
 * of up to 32 timed on this rank's global clock, before(s, comm) (may be NULL) called ahead
 * of each; the batch is then agreed on (scheme_agree, outside the timed region) and its
 * latencies (last exit minus first entry) fed to the stop rule. Every repetition is valid.
 * before returns 0 or a negative HCLOCK_E*.
 */
int scheme_local_batches(struct bench_scheme *s, const struct bench_params *p,
                         struct bench_buf *b, struct bench_series *out,
                         int (*before)(struct bench_scheme *s, MPI_Comm comm));

/* Run the operation warm-up times back to back (all of them, even after a failure), then
 * one barrier: 0 or HCLOCK_EMPI. */
int scheme_warmup(const struct bench_params *p, struct bench_buf *b);

/* Measure the MPI_Bcast latency of one int64 on the global clock (collective): rank 0
 * broadcasts its clock reading, each rank takes its receive time minus that, the slowest
 * rank counts; the median of tries in *lat_ns (>= 1). 0, HCLOCK_EMPI or HCLOCK_ENOMEM (all
 * tries are made either way). */
int bench_bcast_latency(MPI_Comm comm, hclock_clock *clk, int tries, int64_t *lat_ns);

/*
 * The MPI_Bcast latency a start slack is made of, measured once more (collective; the
 * median of SLACK_RETRIES tries, as bench_bcast_latency) right before a measurement: the
 * smaller of that and first_ns (the launch's figure, ns) in *lat_ns. A figure measured
 * through a stall of the machine (a scheduler hand-off, other jobs on the cores) is a
 * thousand times the latency, and a slack made of it makes every round wait for it; two
 * figures taken apart in time are rarely both stalled, and a figure too low only costs the
 * first late rounds, after which the slack doubles (struct bench_slack). 0, HCLOCK_EMPI or
 * HCLOCK_ENOMEM (every try made either way; *lat_ns is then first_ns or less).
 */
#define SLACK_RETRIES 7
int bench_slack_latency(MPI_Comm comm, hclock_clock *clk, int64_t first_ns, int64_t *lat_ns);

/* The start slack of p (scheme_slack_ns), ns: made of p->slack_lat_ns when adaptive is 1
 * and there is one, of p->bcast_lat_ns alone otherwise (Alg. 5's one measurement). */
int64_t scheme_slack_base(const struct bench_params *p, int adaptive);

/* The communicator to measure on (collective over parent): a duplicate of parent whose MPI
 * errors return (MPI_ERRORS_RETURN) and become HCLOCK_EMPI instead of aborting the job.
 * 0 or HCLOCK_EMPI; free it with MPI_Comm_free. */
int bench_comm_create(MPI_Comm parent, MPI_Comm *out);

#endif
