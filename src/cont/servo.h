/*
 * servo.h - the continuous clock's servo: what one process learns from its exchanges with
 * its parent, without knowing how the exchanges travel (no MPI here; cont/engine.c runs the
 * exchanges over a transport/nblink.h link and feeds them in). The shape of linuxptp's
 * servo family: a base struct with a table of hooks, one implementation per file, one
 * factory.
 *
 * In: the ping-pongs of an exchange (this process's base send and receive times, the
 * parent's base receive and send times, the parent's current model and bound, as its pong
 * carried them), then the clock's current target when the exchange is complete.
 * Out: the new target model (this base -> the reference), its strict bound, the base time
 * they were fitted at, and the period until the next exchange (adaptive, after Liao,
 * Martonosi & Clark, "An Adaptive Globally-Synchronizing Clock Algorithm and its
 * Implementation on a Myrinet-based PC Cluster": halved when the old line mispredicts the
 * new offset beyond a threshold, doubled after a streak within it).
 *
 * Times are int64 ns of this process's base clock (x) or of the parent's (y); only
 * differences become doubles.
 */
#ifndef HCLOCK_CONT_SERVO_H
#define HCLOCK_CONT_SERVO_H

#include <stdint.h>

#include "numerics/bound.h"
#include "numerics/linreg.h"

enum servo_type {
	SERVO_TRACK, /* sliding-window hulls and regression (numerics/track.h), servo_track.c */
};

struct servo_cfg {
	int64_t window_ns;     /* the learning window, ns of this base */
	int64_t min_period_ns; /* limits of the exchange period, ns (equal: fixed) */
	int64_t max_period_ns;
	double threshold_ns;   /* projected - measured offset beyond which the period halves, ns
	                          (or beyond three times the window's scatter, when larger) */
	int streak;            /* exchanges within the threshold before the period doubles */
	double drift;          /* the bounds' drift allowance, dimensionless (5e-6) */
	double read_err_ns;    /* one message's read error allowance, ns (>= 0) */
	double prior_slope_se; /* standard error of the one-shot model's slope, dimensionless */
	int late_answers;      /* 1: answers may wait on the program (drive=progress): the prior
	                          and the late-answer rule are on (keep-inside-old always is) */
};

/* One exchange's result. */
struct servo_out {
	struct lm target;      /* this base -> the reference: y = x + offset(x), ns */
	struct bound bound;    /* its strict bound (unknown when the messages say nothing) */
	int64_t x_ns;          /* base time of the exchange's latest message, ns */
};

/* What the servo did (engine_stats passes these on in struct hclock_sync_stats). */
struct servo_stats {
	uint64_t halvings, doublings; /* adaptive period changes */
	uint64_t shrinks;      /* fits whose window shrank (hulls intersected, a step) */
	uint64_t kept_inside;  /* new estimates moved into the old bound, or the old kept */
	double last_dev_ns;    /* the last exchange's |projected - measured| beyond its excess
	                          round trip (what the period adapts on), ns */
	double noise_ns;       /* the window's offsets' robust scatter about its line, ns: three
	                          times it is the least deviation that halves the period */
	double rtt_ns;         /* the latest exchange's fastest round trip, ns */
};

struct servo;

struct servo_ops {
	void (*destroy)(struct servo *s);
	/* One ping-pong of exchange exch (numbered in increasing order, the ping-pongs of one
	 * exchange fed together): t1 send and t4 receive on this base, t2 receive and t3 send
	 * on the parent's, ns; tp, bp: the parent's model (its base -> the reference) and
	 * bound when it answered. 0, HCLOCK_EINVAL (times out of order) or HCLOCK_ENOMEM. */
	int (*sample)(struct servo *s, uint32_t exch, int64_t t1_ns, int64_t t2_ns,
	              int64_t t3_ns, int64_t t4_ns, const struct lm *tp, const struct bound *bp);
	/* The exchange is complete. cur, cur_b: the clock's current target and bound. Fills
	 * *out; returns 0, 1 (no estimate yet: nothing sampled) or HCLOCK_ENOMEM. */
	int (*finish)(struct servo *s, const struct lm *cur, const struct bound *cur_b,
	              struct servo_out *out);
	/* An exchange given up (its answers did not come). Optional. */
	void (*lost)(struct servo *s);
	/* The period until the next exchange starts, ns. */
	int64_t (*period_ns)(const struct servo *s);
	void (*stats)(const struct servo *s, struct servo_stats *st);
};

struct servo {
	const struct servo_ops *ops;
};

/* A new servo of the given type. 0, HCLOCK_EINVAL (a bad cfg: the line says which field)
 * or HCLOCK_ENOMEM. The caller frees it with servo_destroy. */
int servo_create(enum servo_type type, const struct servo_cfg *cfg, struct servo **out);
void servo_destroy(struct servo *s);
int servo_sample(struct servo *s, uint32_t exch, int64_t t1_ns, int64_t t2_ns, int64_t t3_ns,
                 int64_t t4_ns, const struct lm *tp, const struct bound *bp);
int servo_finish(struct servo *s, const struct lm *cur, const struct bound *cur_b,
                 struct servo_out *out);
void servo_lost(struct servo *s);
int64_t servo_period_ns(const struct servo *s);
void servo_stats(const struct servo *s, struct servo_stats *st);

/* the implementations (one file each) */
int servo_track_create(const struct servo_cfg *cfg, struct servo **out);

#endif
