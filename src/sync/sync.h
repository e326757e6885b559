/*
 * sync.h - the sync algorithm family. Every algorithm embeds struct hclock_sync as its first
 * member, provides struct sync_ops, and has one constructor listed in sync_create().
 * run() is collective over comm: on return *out is this process's clock on the time scale
 * of rank 0 of comm, stacked on clk (the input clock: a base clock, or the global clock of
 * an upper level in a hierarchy).
 */
#ifndef HCLOCK_SYNC_SYNC_H
#define HCLOCK_SYNC_SYNC_H

#include <stdint.h>

#include <mpi.h>

#include "hclock.h"
#include "numerics/linreg.h"
#include "offset/offset.h"
#include "sync/spec.h"
#include "util/err.h"

struct sync_ops {
	const char *name;
	int (*run)(struct hclock_sync *s, MPI_Comm comm, hclock_clock *clk, hclock_clock **out);
	void (*destroy)(struct hclock_sync *s); /* may be NULL: free(s) */
};

struct hclock_sync {
	const struct sync_ops *ops;
	char spec[256];      /* canonical spec */
	uint64_t pingpongs;  /* exchanges this process took part in (last run) */
	uint64_t rounds;     /* sequential pairwise steps of the schedule (last run) */
};

/* Factory: one line per algorithm. */
int sync_create(const struct sync_spec *sp, struct hclock_sync **out);
/* Run any algorithm (used by the hierarchical ones for their levels). */
int sync_run(struct hclock_sync *s, MPI_Comm comm, hclock_clock *clk, hclock_clock **out);

/* Shared by the model-learning algorithms (hca*, jk): LEARN_CLOCK_MODEL of Alg. 2. */
struct learner {
	struct offset_alg *oa;
	int nfit; /* fit points per model */
	int ri;   /* recompute the intercept after the fit */
	double span_ns; /* spread the fit points over this much real time, ns (0: back to back) */
};
/* The model-learning algorithms share their state and life cycle. */
struct learning_sync {
	struct hclock_sync s;
	struct learner L;
};
#define LEARNER(sync) (&container_of(sync, struct learning_sync, s)->L)
/* Create an algorithm with ops whose state is a struct learning_sync (hca3, hca2, hca, jk). */
int learning_sync_create(const struct sync_spec *sp, const struct sync_ops *ops,
                         struct hclock_sync **out);
void learning_sync_destroy(struct hclock_sync *s);
/*
 * LEARN_CLOCK_MODEL(comm, ref, client, clk): both ends call it; each uses its own clk. On
 * the client, *lm maps client clk time to the reference's clk time. Returns 0 or an error.
 */
int learn_model(struct hclock_sync *s, struct learner *L, MPI_Comm comm, int ref, int client,
                hclock_clock *clk, struct lm *lm);
/* One offset measurement between ref and client with oa (client: *smp filled). */
int measure_pair(struct hclock_sync *s, struct offset_alg *oa, MPI_Comm comm, int ref,
                 int client, hclock_clock *clk, struct offset_sample *smp);
/* Rank 0 measures the offset of every other rank in turn (O(p) rounds); on ranks > 0 *smp
 * receives their own estimate. */
int measure_all(struct hclock_sync *s, struct offset_alg *oa, MPI_Comm comm, hclock_clock *clk,
                struct offset_sample *smp);
/* Wrap clk in the linear model lm (a new reference in *out). */
int clock_from_lm(hclock_clock *clk, const struct lm *lm, hclock_clock **out);
/* The result of a sync whose reference is rank 0: clk itself there, else clk wrapped in lm. */
int finish_lm(MPI_Comm comm, hclock_clock *clk, const struct lm *lm, hclock_clock **out);

/* floor(log2(p)) for p >= 1 */
int ilog2(int p);

int sync_none_create(const struct sync_spec *sp, struct hclock_sync **out);
int sync_hca3_create(const struct sync_spec *sp, struct hclock_sync **out);
int sync_hca2_create(const struct sync_spec *sp, struct hclock_sync **out);
int sync_hca_create(const struct sync_spec *sp, struct hclock_sync **out);
int sync_jk_create(const struct sync_spec *sp, struct hclock_sync **out);
int sync_skampi_create(const struct sync_spec *sp, struct hclock_sync **out);
int sync_dunigan_create(const struct sync_spec *sp, struct hclock_sync **out);
int sync_prop_create(const struct sync_spec *sp, struct hclock_sync **out);
int sync_hier_create(const struct sync_spec *sp, struct hclock_sync **out);

/* HCA2's inverted binomial tree (shared with HCA): on return *lm is this process's model
 * relative to rank 0's clk (identity on rank 0). */
int hca2_tree(struct hclock_sync *s, struct learner *L, MPI_Comm comm, hclock_clock *clk,
              struct lm *lm);

#endif
