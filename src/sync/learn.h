/*
 * learn.h - what the model-learning algorithms (hca3, hca2, hca, jk; auto(...) through hca3)
 * share: a learner's settings, their spec arguments "/NFIT/OFF/N[/ri][/span=S][/paper]" with
 * their explain lines (learn_spec.c), and LEARN_CLOCK_MODEL of Hunold & Carpen-Amarie's
 * Alg. 2 (learn.c). An algorithm of them embeds struct learning_sync.
 */
#ifndef HCLOCK_SYNC_LEARN_H
#define HCLOCK_SYNC_LEARN_H

#include "sync/sync.h"

struct learner {
	struct offset_alg *oa;
	int nfit;       /* fit points per model */
	int ri;         /* recompute the intercept after the fit */
	double span_ns; /* spread the fit points over this much real time, ns (0: back to back) */
	double limit_ns; /* 0, or the time a model may take from the end of its first fit point,
	                    ns: no fit point starts that would end after it (at least
	                    LEARN_MIN_NFIT are made); set by auto(...), never by a spec */
	double slowest_point_ns; /* out: the longest a fit point took on this process, from its
	                            planned start to its end (a late wake-up included; the first
	                            from the model's start, a wait for a busy reference
	                            included), over the runs since it was zeroed, ns */
	int made_points; /* out: the fit points of the last model this process learned as a
	                    client (fewer than nfit where limit_ns cut them; 0: none) */
};
#define LEARN_MIN_NFIT 4
struct learning_sync {
	struct hclock_sync s;
	struct learner L;
};
#define LEARNER(sync) (&container_of(sync, struct learning_sync, s)->L)
#define LEARNER_ARGS "/NFIT/OFF/N[/ri][/span=S][/paper]"

/* ---- learn_spec.c: their arguments, destroy and explain hooks ---- */

/* Parse "/NFIT/OFF/N[/ri][/span=S][/paper]" after name (ri, span=S and paper in any order,
 * each at most once) and create a learning algorithm with ops. */
int learning_sync_parse(struct spec_parser *ps, const char *name, const struct sync_ops *ops,
                        struct hclock_sync **out);
void learning_sync_destroy(struct hclock_sync *s);
/* Their explain hook: the fit points, ping-pongs, estimator, span, ri and bounds. */
void learning_sync_explain(const struct hclock_sync *s, struct sync_explain *e);

/* ---- learn.c: the protocol ---- */

/*
 * LEARN_CLOCK_MODEL(comm, ref, client, clk) of Alg. 2: both ends call it; each uses its own
 * clk. On the client, *lm maps client clk time to the reference's clk time (identity
 * {0, 0, 0} after a failure) and, when bd is not NULL, *bd is its bound (numerics/bound.h):
 * unknown unless the learner is hull; relative to the reference's clk, or, with compose, to
 * whatever that clock estimates (its own bound added: its clk is a global clock). lm and bd
 * are only written on the client. Always completes the whole exchange; returns 0 or the
 * first error. A hull fit that fails (hulls intersect) leaves the fallback line, no bound
 * and a warning (sync_warn).
 */
int learn_model(struct hclock_sync *s, struct learner *L, MPI_Comm comm, int ref, int client,
                hclock_clock *clk, int compose, struct lm *lm, struct bound *bd);

#endif
