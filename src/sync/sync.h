/*
 * sync.h - the sync algorithm family. Every algorithm embeds struct hclock_sync as its first
 * member, provides struct sync_ops, and is described by one struct sync_type (name, usage,
 * help, its own argument parser) listed once in sync/types.def: adding an algorithm is one
 * new file and one line there (and the file in src/CMakeLists.txt's source list).
 *
 * run() is collective over comm (hclock's private communicator): on return *out is this
 * process's clock on the time scale of rank 0 of comm, stacked on clk (the input clock: a
 * base clock, or the global clock of an upper level in a hierarchy).
 *
 * The no-hang rule: run() never leaves its schedule early. A process that fails (no memory,
 * an MPI error, an injected fault) keeps taking part in every exchange and collective of
 * the schedule with dummy values and returns its first error at the end; the callers agree
 * on the error (comm_agree) so every rank returns the same one.
 */
#ifndef HCLOCK_SYNC_SYNC_H
#define HCLOCK_SYNC_SYNC_H

#include <stdint.h>

#include "util/pmpi.h"

#include "hclock.h"
#include "numerics/bound.h"
#include "numerics/linreg.h"
#include "offset/offset.h"
#include "sync/spec.h"
#include "util/err.h"

struct learner;
struct sync_explain;

struct sync_ops {
	int (*run)(struct hclock_sync *s, MPI_Comm comm, hclock_clock *clk, hclock_clock **out);
	void (*destroy)(struct hclock_sync *s); /* may be NULL: free(s) */
	/* a sync that keeps running after run() (cont): collective stop, and the application's
	 * progress call; NULL for the one-shot ones */
	int (*stop)(struct hclock_sync *s);
	int (*progress)(struct hclock_sync *s);
	/* base time at which progress next has work (NULL: INT64_MAX, never) */
	int64_t (*progress_due)(const struct hclock_sync *s);
	/* hclock_sync_stats (NULL: HCLOCK_EUNSUPP) */
	int (*stats)(const struct hclock_sync *s, struct hclock_sync_stats *st);
	/* hclock_sync_auto_choice (NULL: HCLOCK_EUNSUPP) */
	int (*auto_choice)(const struct hclock_sync *s, struct hclock_sync_auto *out);
	/* the lines of sync_explain below the first (NULL: none) */
	void (*explain)(const struct hclock_sync *s, struct sync_explain *e);
	/* sync_plan (NULL: nothing to choose, 0) */
	int (*plan)(struct hclock_sync *s, MPI_Comm comm, hclock_clock *clk);
};

struct hclock_sync {
	const struct sync_ops *ops;
	const struct sync_type *type;
	char spec[256];      /* canonical spec */
	uint64_t pingpongs;  /* exchanges this process took part in (last run) */
	uint64_t rounds;     /* sequential pairwise steps of the schedule (last run) */
	uint64_t retakes;    /* offset measurements this process retook as a client because they
	                        went through a stall (offset_measure; last run) */
	uint64_t unclean;    /* models this process fitted with fewer than half of their fit
	                        points clean (a warning each; last run) */
	double fit_rtt_max_ns; /* the largest round trip of the measurements this process's
	                          clock rests on as a client (fit points kept, offsets), ns;
	                          0: none (last run) */
	double fit_span_min_ns; /* the shortest span (first to last, local ns) of the points a
	                           model of this process was fitted through; INFINITY: it fitted
	                           none (last run) */
	int bounded;         /* some model is learned with hulls: rank 0's result carries the
	                        exact bound (hclock_sync_run) */
	int parent;          /* last run: the rank of the run's comm this process's clock was
	                        learned against, -1 for none (rank 0); the continuous clock keeps
	                        learning against it (the same tree) */
	int shares;          /* ... and 1 when it copied that rank's clock (prop): same time
	                        source, it follows without traffic */
	double planned_s;    /* the real time the last run's spec planned its measurements to
	                        take on this process (the fit points' span per model, auto's
	                        budget; summed over levels), s; 0: back to back */
	struct hclock_sync_topology topo; /* the hierarchy the last run found (the same on
	                                     every process; levels 1 for a flat spec) */
	char warnings[1024]; /* this process's warnings of the last run, one per line */
};

/* A measurement with round trip rtt_ns that this process's clock rests on (fit_rtt_max_ns). */
static inline void sync_note_rtt(struct hclock_sync *s, double rtt_ns)
{
	if (rtt_ns > s->fit_rtt_max_ns)
		s->fit_rtt_max_ns = rtt_ns;
}
/* A model of this process fitted through points spanning span_ns (fit_span_min_ns). */
static inline void sync_note_span(struct hclock_sync *s, double span_ns)
{
	if (span_ns < s->fit_span_min_ns)
		s->fit_span_min_ns = span_ns;
}
/* Fold a lower level's (or an inner sync's) counts of the last run into s. */
void sync_take_quality(struct hclock_sync *s, const struct hclock_sync *inner);

/* Append a warning line of this process (truncated when full). */
void sync_warn(struct hclock_sync *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* One line of the family's table (the table and its parser: sync/spec.h). */
struct sync_type {
	const char *name;  /* the spec's first token: "hca3" */
	const char *usage; /* the spec's form: "hca3/NFIT/OFF/N[/ri][/span=S]" */
	const char *help;  /* one line for --help, error lines and `hclock specs` */
	int level_only;    /* only as a lower level of h2/h3 (prop) */
	/* Parse the arguments after the name (ps is just past it), create the algorithm and
	 * write its canonical spec into (*out)->spec. On error *out may hold a partly built
	 * algorithm, which the caller frees. */
	int (*parse)(struct spec_parser *ps, struct hclock_sync **out);
};

/* Allocate an algorithm of size bytes (>= sizeof(struct hclock_sync)) with ops. */
int sync_alloc(size_t size, const struct sync_ops *ops, struct hclock_sync **out);
/* Write the canonical spec (printf style). */
void sync_set_spec(struct hclock_sync *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Run any algorithm (the hierarchical ones run their levels with it). */
int sync_run(struct hclock_sync *s, MPI_Comm comm, hclock_clock *clk, hclock_clock **out);
/* Collective over comm, as sync_run is, but only what an auto(...) measures and chooses (its
 * bursts), alone or inside cont/h2/h3, with no sync: hclock_sync_auto_choice then gives the
 * choice. 0 at once for a spec with nothing to choose. */
int sync_plan(struct hclock_sync *s, MPI_Comm comm, hclock_clock *clk);

/* What a spec runs, in lines of text (hclock specs --explain): each algorithm adds its own
 * lines (ops->explain), nested ones one level deeper. */
struct sync_explain {
	char text[8192]; /* the lines so far, each ending in a newline (truncated when full) */
	int depth;       /* indentation: two spaces a level */
};
/* Append one line at e's depth (printf style). */
void sync_explain_line(struct sync_explain *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* s's canonical spec and its algorithm's help, then its own lines one level deeper. */
void sync_explain(const struct hclock_sync *s, struct sync_explain *e);

/* ---- offset measurements and the clocks a run leaves ---- */

/* One offset measurement between ref and client with oa (client: *smp filled). */
int measure_pair(struct hclock_sync *s, struct offset_alg *oa, MPI_Comm comm, int ref,
                 int client, hclock_clock *clk, struct offset_sample *smp);
/* Rank 0 measures the offset of every other rank in turn (O(p) rounds); on ranks > 0 *smp
 * receives their own estimate. */
int measure_all(struct hclock_sync *s, struct offset_alg *oa, MPI_Comm comm, hclock_clock *clk,
                struct offset_sample *smp);
/* hclock_measure_offset on hclock's private communicator c (the check uses it). */
int measure_offset_on(MPI_Comm c, hclock_clock *clk, int ref, int client, int npingpongs,
                      double *offset_ns, double *rtt_ns);
/* The same, and on the client *local_ns (if not NULL): its clock's time the estimate refers to
 * (the reference's time then is *local_ns + *offset_ns). */
int measure_offset_at(MPI_Comm c, hclock_clock *clk, int ref, int client, int npingpongs,
                      double *offset_ns, double *rtt_ns, int64_t *local_ns);
/* Wrap clk in the linear model lm with bound bd (NULL: unknown) (a new reference in *out). */
int clock_from_lm(hclock_clock *clk, const struct lm *lm, const struct bound *bd,
                  hclock_clock **out);
/* The result of a sync whose reference is rank 0: clk itself there, else clk wrapped in lm
 * with bound bd (NULL: unknown). rc: the run's error so far; on error *out is a reference to
 * clk (a usable dummy). */
int finish_lm(MPI_Comm comm, hclock_clock *clk, const struct lm *lm, const struct bound *bd,
              int rc, hclock_clock **out);

/* Real oscillators are off by up to a few hundred ppm (NTP tolerates 500 ppm); the emulation
 * allows at most 600 ppm per node over 100 s (emu.c), so two clocks differ by at most about
 * 1.2e-3. A fitted slope beyond 2e-3 comes from stalled exchanges, not from a clock:
 * measured, MPICH ping-pongs on shared cores shift their delay asymmetry by 1-2 us within
 * 20 fit points taken in 250 us, which fits a 1% slope and leaves the model 9 ms off 0.8 s
 * later. */
#define MAX_PLAUSIBLE_SLOPE 2e-3

/* floor(log2(p)) for p >= 1 */
int ilog2(int p);

/* HCA3's schedule (Alg. 1) for process r of p: in round i = floor(log2 p)..1 every r with
 * r mod 2^i == 0 is the reference of r + 2^(i-1); then the ranks beyond the largest power of
 * two learn from r - 2^floor(log2 p). Calls pair(ctx, ref, client) for every pair r is in, in
 * that order (r is ref or client); returns the first error (the later pairs still run).
 * hca3_rounds(p): the schedule's rounds. */
int hca3_pairs(int p, int r, int (*pair)(void *ctx, int ref, int client), void *ctx);
int hca3_rounds(int p);

/* HCA2's inverted binomial tree (shared with HCA): on return *lm is this process's model
 * relative to rank 0's clk (identity on rank 0) and *bd its bound, composed with rank 0's
 * clk's own (unknown unless hull). */
int hca2_tree(struct hclock_sync *s, struct learner *L, MPI_Comm comm, hclock_clock *clk,
              struct lm *lm, struct bound *bd);

#endif
