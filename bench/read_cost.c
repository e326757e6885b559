/*
 * read_cost.c - what reading a global clock costs against a raw read of its base clock.
 * For each base clock: ns per hclock_now() of the base, of a one-model global clock (HCA3's
 * result) and of a two-model nest (h2's inter + intra), of a continuous clock (the
 * seqlocked, slewed read function; hclock_now and hclock_read with its bounds), and of
 * the bare source (clock_gettime / rdtsc) for reference. Best of BATCHES batches of N reads
 * each.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "hclock.h"
#include "model/cont.h"

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#define N 2000000
#define BATCHES 7

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static volatile int64_t sink;

static double per_read(hclock_clock *c)
{
	double best = 1e30;
	for (int b = 0; b < BATCHES; b++) {
		int64_t t0 = now_ns(), acc = 0;
		for (int i = 0; i < N; i++)
			acc += hclock_now(c);
		double d = (double)(now_ns() - t0) / N;
		sink = acc;
		if (d < best)
			best = d;
	}
	return best;
}

static double per_full_read(hclock_clock *c)
{
	double best = 1e30;
	for (int b = 0; b < BATCHES; b++) {
		int64_t t0 = now_ns(), acc = 0;
		for (int i = 0; i < N; i++) {
			hclock_reading r;
			hclock_read(c, &r);
			acc += r.now_ns + r.latest_ns;
		}
		double d = (double)(now_ns() - t0) / N;
		sink = acc;
		if (d < best)
			best = d;
	}
	return best;
}

static double bare_gettime(void)
{
	double best = 1e30;
	for (int b = 0; b < BATCHES; b++) {
		int64_t t0 = now_ns(), acc = 0;
		for (int i = 0; i < N; i++) {
			struct timespec ts;
			clock_gettime(CLOCK_MONOTONIC, &ts);
			acc += ts.tv_nsec;
		}
		double d = (double)(now_ns() - t0) / N;
		sink = acc;
		if (d < best)
			best = d;
	}
	return best;
}

int main(void)
{
	const char *names[] = {"monotonic", "realtime", "tsc"};
	printf("%-10s %10s %10s %11s %8s %13s %8s %8s\n", "base", "base_ns", "global_ns",
	       "nested2_ns", "cont_ns", "cont_read_ns", "ratio1", "ratio_c");
	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
		hclock_clock *base, *g1, *inter, *g2;
		if (hclock_base_create(names[k], NULL, &base)) {
			printf("%-10s skipped: %s\n", names[k], hclock_last_error());
			continue;
		}
		int64_t t = hclock_now(base);
		hclock_model_linear(base, t, 1234.5, 3.2e-5, &g1);
		hclock_model_linear(base, t, 99.0, -1.1e-5, &inter);
		hclock_model_linear(inter, t, -12.25, 2.0e-7, &g2);
		hclock_clock *gc;
		cont_clock_create(base, NULL, &gc);
		struct bound bd = {t, -300, 300, 5e-6};
		cont_state_init(cont_clock_state(gc), &(struct lm){t, 1234.5, 3.2e-5}, &bd,
		                HCLOCK_BOUNDS_LIVE);
		double b = per_read(base), r1 = per_read(g1), r2 = per_read(g2), rc = per_read(gc),
		       rr = per_full_read(gc);
		printf("%-10s %10.2f %10.2f %11.2f %8.2f %13.2f %8.3f %8.3f\n", names[k], b, r1, r2, rc, rr,
		       r1 / b, rc / b);
		hclock_clock_free(gc);
		hclock_clock_free(g2);
		hclock_clock_free(inter);
		hclock_clock_free(g1);
		hclock_clock_free(base);
	}
	printf("bare clock_gettime(CLOCK_MONOTONIC): %.2f ns\n", bare_gettime());
	return 0;
}
