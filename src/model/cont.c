/*
 * cont.c - the continuous clock's published read function (a seqlock) and the clock layer
 * that reads it (model/cont.h).
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/cont.h"
#include "util/err.h"
#include "util/fault.h"

/* The read function; every field is 8 bytes, copied word by word with atomic loads. */
struct cont_fn {
	int64_t xu_ns;    /* base reading at the last update, ns */
	int64_t vu_ns;    /* the clock's reading there (the old function's), ns */
	int64_t slew_ns;  /* D: base ns after xu until the correction is in (0: none) */
	double slope;     /* the target's rate minus 1 relative to the base clock */
	double corr_ns;   /* target(xu) - vu: the correction slewed in over D, ns */
	double crate;     /* corr_ns / D, dimensionless (|crate| <= the slew rate) */
	int64_t b_at_ns;  /* the target's bound (numerics/bound.h): anchor, ns */
	double b_lo_ns;   /* truth - target at the anchor >= b_lo_ns, ns (-inf: none) */
	double b_hi_ns;   /* ... <= b_hi_ns, ns */
	double b_rate;    /* widening per ns from the anchor */
	int64_t last_ns;  /* base time of the exchange the target comes from, ns */
	int64_t stale_ns; /* status stale after last_ns + stale_ns (0: never), ns */
	int64_t status;   /* enum hclock_bounds_status while fresh */
};

#define FN_WORDS (sizeof(struct cont_fn) / sizeof(uint64_t))
_Static_assert(offsetof(struct cont_fn, xu_ns) == 0 && offsetof(struct cont_fn, vu_ns) == 8 &&
               offsetof(struct cont_fn, slew_ns) == 16 && offsetof(struct cont_fn, slope) == 24 &&
               offsetof(struct cont_fn, corr_ns) == 32 && offsetof(struct cont_fn, crate) == 40,
               "cont_state_now reads these six words by position");

struct cont_state {
	uint64_t seq; /* odd while the writer writes */
	uint64_t w[FN_WORDS];
};

size_t cont_state_size(void)
{
	return sizeof(struct cont_state);
}

static void load_fn(const struct cont_state *st, struct cont_fn *f)
{
	uint64_t w[FN_WORDS];
	for (size_t i = 0; i < FN_WORDS; i++)
		w[i] = __atomic_load_n(&st->w[i], __ATOMIC_RELAXED);
	memcpy(f, w, sizeof(*f));
}

/* The writer's section: open it (seq odd; returns the even seq it found), write, close. */
static uint64_t write_open(struct cont_state *st)
{
	uint64_t s = __atomic_load_n(&st->seq, __ATOMIC_RELAXED);
	__atomic_store_n(&st->seq, s + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return s;
}

static void write_close(struct cont_state *st, uint64_t s, const struct cont_fn *f)
{
	uint64_t w[FN_WORDS];
	memcpy(w, f, sizeof(w));
	for (size_t i = 0; i < FN_WORDS; i++)
		__atomic_store_n(&st->w[i], w[i], __ATOMIC_RELAXED);
	__atomic_store_n(&st->seq, s + 2, __ATOMIC_RELEASE);
}

static void store_fn(struct cont_state *st, const struct cont_fn *f)
{
	write_close(st, write_open(st), f);
}

/* One consistent copy of the function; with base, a base reading *x taken inside its
 * window (what makes readings monotonic across threads, model/cont.h). */
static void read_fn(const struct cont_state *st, hclock_clock *base, struct cont_fn *f,
                    int64_t *x)
{
	for (;;) {
		uint64_t s1 = __atomic_load_n(&st->seq, __ATOMIC_ACQUIRE);
		if (s1 & 1)
			continue; /* the writer is in its few stores */
		load_fn(st, f);
		if (base)
			*x = base->ops->now(base);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&st->seq, __ATOMIC_RELAXED) == s1)
			return;
	}
}

/* v(x) from the function's first six fields, and the correction still to come at x (resid:
 * target(x) - v(x) before rounding; may be NULL) */
static inline int64_t fn_value(int64_t xu, int64_t vu, int64_t slew, double slope, double corr,
                               double crate, int64_t x, double *resid)
{
	int64_t d = diff_ns(x, xu);
	double in = slew && d < slew ? crate * (double)d : corr;
	if (resid)
		*resid = corr - in;
	return vu + d + round_ns(slope * (double)d + in);
}

static int64_t fn_eval(const struct cont_fn *f, int64_t x, double *resid)
{
	return fn_value(f->xu_ns, f->vu_ns, f->slew_ns, f->slope, f->corr_ns, f->crate, x, resid);
}

static void fn_set_bound(struct cont_fn *f, const struct bound *bd)
{
	f->b_at_ns = bd->at_ns;
	f->b_lo_ns = bd->lo_ns;
	f->b_hi_ns = bd->hi_ns;
	f->b_rate = bd->rate;
}

void cont_state_init(struct cont_state *st, const struct lm *target, const struct bound *bd,
                     int status)
{
	struct cont_fn f = {0};
	int64_t x = target->x0_ns;
	f.xu_ns = x;
	f.vu_ns = x + round_ns(target->intercept_ns);
	f.corr_ns = target->intercept_ns - (double)round_ns(target->intercept_ns);
	f.slope = target->slope;
	fn_set_bound(&f, bd);
	f.last_ns = x;
	f.status = status;
	st->seq = 0;
	store_fn(st, &f);
}

double cont_state_update(struct cont_state *st, hclock_clock *base, const struct lm *target,
                         const struct bound *bd, double slew, int step, int64_t last_ns,
                         int64_t stale_ns, int64_t *x_ns)
{
	struct cont_fn f;
	load_fn(st, &f); /* the writer's own state: no retry needed */
	/* open the write section before reading xu: a reader that sees the old function read
	 * its base time before this, one that sees the new one after */
	uint64_t s = write_open(st);
	int64_t x = base->ops->now(base);
	int64_t v = fn_eval(&f, x, NULL);
	/* target(x) - v, from differences only */
	double corr = (double)diff_ns(x, v) + target->intercept_ns +
	              target->slope * (double)diff_ns(x, target->x0_ns);
	struct cont_fn n = f;
	n.xu_ns = x;
	n.slope = target->slope;
	if (step || !(slew > 0)) {
		n.vu_ns = v + round_ns(corr);
		n.corr_ns = corr - (double)round_ns(corr);
		n.slew_ns = 0;
		n.crate = 0;
	} else {
		n.vu_ns = v;
		n.corr_ns = corr;
		double D = ceil(fabs(corr) / slew);
		n.slew_ns = D >= 1 ? (int64_t)D : 0;
		n.crate = n.slew_ns ? corr / (double)n.slew_ns : 0;
	}
	fn_set_bound(&n, bd);
	n.last_ns = last_ns;
	n.stale_ns = stale_ns;
	write_close(st, s, &n);
	if (x_ns)
		*x_ns = x;
	return corr;
}

void cont_state_set_status(struct cont_state *st, int status)
{
	struct cont_fn f;
	load_fn(st, &f); /* the writer's own state: no retry needed */
	f.status = status;
	store_fn(st, &f);
}

void cont_state_target(const struct cont_state *st, struct lm *target, struct bound *bd)
{
	struct cont_fn f;
	read_fn(st, NULL, &f, NULL);
	/* target(x) = vu + corr + (x - xu)(1 + slope) */
	target->x0_ns = f.xu_ns;
	target->intercept_ns = (double)diff_ns(f.vu_ns, f.xu_ns) + f.corr_ns;
	target->slope = f.slope;
	*bd = (struct bound){f.b_at_ns, f.b_lo_ns, f.b_hi_ns, f.b_rate};
}

static void fill_reading(const struct cont_fn *f, int64_t x, int64_t v, double resid,
                         hclock_reading *r)
{
	struct bound b = {f->b_at_ns, f->b_lo_ns, f->b_hi_ns, f->b_rate};
	r->now_ns = v;
	if (!bound_known(&b)) {
		r->earliest_ns = INT64_MIN;
		r->latest_ns = INT64_MAX;
		r->status = HCLOCK_BOUNDS_NONE;
		return;
	}
	double lo, hi;
	/* the bound belongs to the target's reading v + resid; evaluated at v it must allow for
	 * the rate over |resid|, and for the rounding of v (half a ns) */
	bound_at(&b, v, &lo, &hi);
	double slack = 0.5 + b.rate * fabs(resid);
	r->earliest_ns = v + (int64_t)floor(lo + resid - slack);
	r->latest_ns = v + (int64_t)ceil(hi + resid + slack);
	r->status = (int)f->status;
	if (r->status == HCLOCK_BOUNDS_LIVE && f->stale_ns > 0 &&
	    diff_ns(x, f->last_ns) > f->stale_ns)
		r->status = HCLOCK_BOUNDS_STALE;
}

static inline double word_f64(uint64_t w)
{
	double v;
	memcpy(&v, &w, sizeof(v));
	return v;
}

/* A bare reading (hclock_now, base given) or a mapping of base time x (base NULL):
 * read_fn's protocol on the first six words only, loaded straight into registers (the
 * generic copy of all thirteen through the stack cost a third more) */
static inline int64_t state_value(const struct cont_state *st, hclock_clock *base, int64_t x)
{
	const uint64_t *w = st->w;
	int64_t xu, vu, slew;
	uint64_t slope, corr, crate;
	for (;;) {
		uint64_t s1 = __atomic_load_n(&st->seq, __ATOMIC_ACQUIRE);
		if (s1 & 1)
			continue;
		xu = (int64_t)__atomic_load_n(&w[0], __ATOMIC_RELAXED);
		vu = (int64_t)__atomic_load_n(&w[1], __ATOMIC_RELAXED);
		slew = (int64_t)__atomic_load_n(&w[2], __ATOMIC_RELAXED);
		slope = __atomic_load_n(&w[3], __ATOMIC_RELAXED);
		corr = __atomic_load_n(&w[4], __ATOMIC_RELAXED);
		crate = __atomic_load_n(&w[5], __ATOMIC_RELAXED);
		if (base)
			x = base->ops->now(base);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&st->seq, __ATOMIC_RELAXED) == s1)
			break;
	}
	return fn_value(xu, vu, slew, word_f64(slope), word_f64(corr), word_f64(crate), x, NULL);
}

static int64_t cont_state_now(const struct cont_state *st, hclock_clock *base)
{
	return state_value(st, base, 0);
}

int64_t cont_state_read(const struct cont_state *st, hclock_clock *base, hclock_reading *r)
{
	struct cont_fn f;
	int64_t x;
	double resid;
	if (!r)
		return cont_state_now(st, base);
	read_fn(st, base, &f, &x);
	int64_t v = fn_eval(&f, x, &resid);
	if (r)
		fill_reading(&f, x, v, resid, r);
	return v;
}

int64_t cont_state_map(const struct cont_state *st, int64_t x)
{
	return state_value(st, NULL, x);
}

/* ---- the clock layer ---- */

struct cont_driver {
	int (*fn)(void *arg, int64_t *sleep_ns);
	void *arg;
};

struct cont_clock {
	struct hclock_clock c;
	struct cont_state *st; /* what it reads: own or the caller's (switched atomically) */
	struct cont_state own;
	struct cont_driver *drv; /* who drives it (clock_drive), NULL: nothing (atomic) */
	struct cont_driver drv_mem;
};

static struct cont_state *state_of(const struct hclock_clock *c)
{
	return __atomic_load_n(&((const struct cont_clock *)c)->st, __ATOMIC_ACQUIRE);
}

static int64_t cont_now(struct hclock_clock *c)
{
	return cont_state_read(state_of(c), c->base, NULL);
}

static int64_t cont_map(const struct hclock_clock *c, int64_t x)
{
	return cont_state_map(state_of(c), x);
}

static void cont_read(struct hclock_clock *c, hclock_reading *r)
{
	cont_state_read(state_of(c), c->base, r);
}

/* the bounds at a reading t taken a while ago: the correction still to come at t is found
 * from t itself (d ~ t - vu, off by at most |slope d + corr|, which moves it by crate
 * times that: allowed for) */
static void cont_bounds(const struct hclock_clock *c, int64_t t, double *lo, double *hi)
{
	struct cont_fn f;
	read_fn(state_of(c), NULL, &f, NULL);
	struct bound b = {f.b_at_ns, f.b_lo_ns, f.b_hi_ns, f.b_rate};
	bound_at(&b, t, lo, hi);
	if (!bound_known(&b))
		return;
	double d = (double)diff_ns(t, f.vu_ns);
	double resid = d < (double)f.slew_ns ? f.corr_ns - f.crate * (d > 0 ? d : 0) : 0;
	double slack = 0.5 + b.rate * fabs(resid) + fabs(f.crate) * (fabs(f.slope * d) +
	                                                              fabs(f.corr_ns));
	*lo += resid - slack;
	*hi += resid + slack;
}

/* serialized as the linear model of its current target (a frozen copy) */
static void cont_flatten(const struct hclock_clock *c, struct wbuf *w)
{
	struct lm t;
	struct bound b;
	cont_state_target(state_of(c), &t, &b);
	wbuf_put_i64(w, t.x0_ns);
	wbuf_put_f64(w, t.intercept_ns);
	wbuf_put_f64(w, t.slope);
	int known = bound_known(&b);
	wbuf_put_u8(w, (uint8_t)known);
	if (known) {
		wbuf_put_i64(w, b.at_ns);
		wbuf_put_f64(w, b.lo_ns);
		wbuf_put_f64(w, b.hi_ns);
		wbuf_put_f64(w, b.rate);
	}
}

static int cont_describe(const struct hclock_clock *c, char *buf, size_t len)
{
	struct lm t;
	struct bound b;
	cont_state_target(state_of(c), &t, &b);
	return snprintf(buf, len, "cont(slope=%.4e,offset=%.1fns@%lld)", t.slope, t.intercept_ns,
	                (long long)t.x0_ns);
}

static int cont_drive(struct hclock_clock *c, int64_t *sleep_ns)
{
	struct cont_driver *d = __atomic_load_n(&((struct cont_clock *)c)->drv, __ATOMIC_ACQUIRE);
	return d && d->fn(d->arg, sleep_ns) == 0;
}

static const struct clock_ops cont_ops = {
	.name = "cont", .type = CLOCK_T_LINEAR, .now = cont_now, .map = cont_map,
	.read = cont_read, .bounds = cont_bounds, .flatten = cont_flatten,
	.describe = cont_describe, .drive = cont_drive,
};

int cont_clock_create(hclock_clock *base, struct cont_state *st, hclock_clock **out)
{
	*out = NULL;
	if (base->inner)
		return err_set(HCLOCK_EINVAL, "a continuous clock reads a base clock, not a model");
	struct cont_clock *k = fault_calloc(1, sizeof(*k));
	if (!k)
		return err_set(HCLOCK_ENOMEM, "out of memory creating a continuous clock");
	clock_init(&k->c, &cont_ops, base);
	if (st) {
		k->st = st;
	} else {
		struct bound none = bound_unknown();
		k->st = &k->own;
		cont_state_init(k->st, &(struct lm){0, 0, 0}, &none, HCLOCK_BOUNDS_NONE);
	}
	*out = &k->c;
	return 0;
}

struct cont_state *cont_clock_state(hclock_clock *c)
{
	return c && c->ops == &cont_ops ? state_of(c) : NULL;
}

void cont_clock_set_state(hclock_clock *c, struct cont_state *st)
{
	__atomic_store_n(&((struct cont_clock *)c)->st, st, __ATOMIC_RELEASE);
}

void cont_clock_own_copy(hclock_clock *c)
{
	struct cont_clock *k = (struct cont_clock *)c;
	struct cont_state *from = state_of(c);
	if (from == &k->own)
		return;
	struct cont_fn f;
	read_fn(from, NULL, &f, NULL); /* its writer may still be at work */
	store_fn(&k->own, &f);
	cont_clock_set_state(c, &k->own);
}

void cont_clock_set_driver(hclock_clock *c, int (*fn)(void *arg, int64_t *sleep_ns), void *arg)
{
	if (!c || c->ops != &cont_ops)
		return;
	struct cont_clock *k = (struct cont_clock *)c;
	if (!fn) {
		__atomic_store_n(&k->drv, NULL, __ATOMIC_RELEASE);
		return;
	}
	k->drv_mem = (struct cont_driver){fn, arg};
	__atomic_store_n(&k->drv, &k->drv_mem, __ATOMIC_RELEASE);
}
