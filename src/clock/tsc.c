/*
 * tsc.c - base clock "tsc": the x86 time stamp counter, converted to ns with a frequency
 * calibrated against CLOCK_MONOTONIC over CALIB_NS. Refused without an invariant TSC
 * (CPUID 0x80000007 EDX bit 8), whose rate would change with power states.
 * The calibration travels with a serialized clock, so a copied model maps ticks the same way.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "clock/clock.h"
#include "util/err.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <x86intrin.h>
#define HAVE_TSC 1
#endif

#define CALIB_NS 20000000 /* 20 ms */

struct tsc_clock {
	struct hclock_clock c;
	uint64_t tsc0;      /* counter at calibration start, ticks */
	int64_t mono0_ns;   /* CLOCK_MONOTONIC at tsc0, ns */
	double ns_per_tick; /* calibrated period, ns */
};

#ifdef HAVE_TSC
static int64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A (tsc, monotonic) pair, the tsc read bracketed by the tightest of a few monotonic pairs. */
static void sample(uint64_t *tsc, int64_t *mono)
{
	int64_t best = INT64_MAX;
	for (int i = 0; i < 5; i++) {
		int64_t a = mono_ns();
		uint64_t t = __rdtsc();
		int64_t b = mono_ns();
		if (b - a < best) {
			best = b - a;
			*tsc = t;
			*mono = a + (b - a) / 2;
		}
	}
}

static int64_t tsc_now(struct hclock_clock *c)
{
	struct tsc_clock *t = (struct tsc_clock *)c;
	return t->mono0_ns + round_ns((double)(int64_t)(__rdtsc() - t->tsc0) * t->ns_per_tick);
}
#else
static int64_t tsc_now(struct hclock_clock *c)
{
	(void)c;
	return 0;
}
#endif

static int tsc_describe(const struct hclock_clock *c, char *buf, size_t len)
{
	const struct tsc_clock *t = (const struct tsc_clock *)c;
	return snprintf(buf, len, "tsc(%.6f GHz)", 1.0 / t->ns_per_tick);
}

static void tsc_flatten(const struct hclock_clock *c, struct wbuf *w)
{
	const struct tsc_clock *t = (const struct tsc_clock *)c;
	wbuf_put_u64(w, t->tsc0);
	wbuf_put_i64(w, t->mono0_ns);
	wbuf_put_f64(w, t->ns_per_tick);
}

static const struct clock_ops tsc_ops = {
	.name = "tsc", .type = CLOCK_T_TSC, .now = tsc_now, .flatten = tsc_flatten,
	.describe = tsc_describe,
};

static int tsc_build(struct rbuf *r, struct hclock_clock **out)
{
#ifdef HAVE_TSC
	unsigned a, b, c, d;
	if (!__get_cpuid(0x80000007, &a, &b, &c, &d) || !(d & (1u << 8)))
		return err_set(HCLOCK_EUNSUPP,
		               "clock 'tsc' needs an invariant TSC, which this CPU lacks; use monotonic");
	struct tsc_clock *t = calloc(1, sizeof(*t));
	if (!t)
		return err_set(HCLOCK_ENOMEM, "out of memory creating a clock");
	clock_init(&t->c, &tsc_ops, NULL);
	t->c.source = clock_machine_id() ^ CLOCK_T_TSC;
	if (r) {
		if (rbuf_u64(r, &t->tsc0) || rbuf_i64(r, &t->mono0_ns) || rbuf_f64(r, &t->ns_per_tick) ||
		    !(t->ns_per_tick > 0)) {
			free(t);
			return err_set(HCLOCK_EINVAL, "serialized tsc clock is truncated or invalid");
		}
	} else {
		uint64_t t1;
		int64_t m1;
		sample(&t->tsc0, &t->mono0_ns);
		struct timespec ts = {0, CALIB_NS};
		nanosleep(&ts, NULL);
		sample(&t1, &m1);
		t->ns_per_tick = (double)(m1 - t->mono0_ns) / (double)(t1 - t->tsc0);
	}
	*out = &t->c;
	return 0;
#else
	(void)r;
	(void)out;
	return err_set(HCLOCK_EUNSUPP, "clock 'tsc' is only available on x86; use monotonic");
#endif
}

static int tsc_create(const struct clock_ctx *ctx, struct hclock_clock **out)
{
	(void)ctx;
	return tsc_build(NULL, out);
}

/* the calibration travels with the clock, so every process maps ticks the same way */
static int tsc_unflatten(struct rbuf *r, const struct clock_ctx *ctx, struct hclock_clock *inner,
                         struct hclock_clock **out)
{
	(void)ctx;
	(void)inner;
	return tsc_build(r, out);
}

const struct clock_type clock_type_tsc = {
	.name = "tsc", .tag = CLOCK_T_TSC,
	.help = "x86 rdtsc calibrated against CLOCK_MONOTONIC (needs an invariant TSC)",
	.create = tsc_create, .unflatten = tsc_unflatten,
};
