/*
 * test_cont.c - the continuous clock's read function (model/cont.h) on a base clock the test
 * drives: continuity and bounded rate while a correction is slewed in, the target reached
 * after it, a step only on request, bounds that contain the target through the slew, and no
 * backward step in millions of reads from two threads while a writer forces large
 * corrections both ways (on the real CLOCK_MONOTONIC).
 */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "clock/clock.h"
#include "model/cont.h"
#include "test.h"
#include "util/rng.h"

static int64_t fake_x;

static int64_t fake_now(struct hclock_clock *c)
{
	(void)c;
	return fake_x;
}

static int fake_describe(const struct hclock_clock *c, char *buf, size_t len)
{
	(void)c;
	return snprintf(buf, len, "fake");
}

static const struct clock_ops fake_ops = {.name = "fake", .now = fake_now,
                                          .describe = fake_describe};

/* target(x) as a double (the truth of these tests) */
static double target_at(const struct lm *m, int64_t x)
{
	return (double)x + m->intercept_ns + m->slope * (double)(x - m->x0_ns);
}

static void slew_checks(struct rng *r)
{
	struct hclock_clock *base = calloc(1, sizeof(*base)), *c;
	clock_init(base, &fake_ops, NULL);
	TEST_CHECK(cont_clock_create(base, NULL, &c) == 0, "create");
	struct cont_state *st = cont_clock_state(c);
	fake_x = 5000000000ll;
	struct lm m = {fake_x, 1e6 * (2 * rng_uniform(r) - 1), 80e-6 * (2 * rng_uniform(r) - 1)};
	struct bound b = {fake_x, -100, 100, 5e-6};
	cont_state_init(st, &m, &b, HCLOCK_BOUNDS_LIVE);
	TEST_CHECK(llabs(hclock_now(c) - llround(target_at(&m, fake_x))) <= 1, "init");
	for (int k = 0; k < 20; k++) {
		fake_x += (int64_t)(1e6 + 1e8 * rng_uniform(r));
		int64_t before = hclock_now(c);
		struct lm n = m;
		double jump = (rng_uniform(r) < 0.5 ? -1 : 1) * (10 + 1e5 * rng_uniform(r));
		n.intercept_ns += jump;
		n.slope += 1e-6 * (2 * rng_uniform(r) - 1);
		b.at_ns = llround(target_at(&n, fake_x));
		double slew = 500e-6;
		double corr = cont_state_update(st, base, &n, &b, slew, 0, fake_x, 0, NULL);
		TEST_CHECK(hclock_now(c) == before, "jumped at the update by %lld ns",
		           (long long)(hclock_now(c) - before));
		TEST_CHECK(fabs(corr - (target_at(&n, fake_x) - (double)before)) < 1, "correction");
		/* walk through the slew: rate within 1 + slope +- slew, bounds contain the target */
		int64_t prev = before, x0 = fake_x, D = (int64_t)ceil(fabs(corr) / slew);
		for (int i = 1; i <= 50; i++) {
			fake_x = x0 + D * i / 40;
			hclock_reading rd;
			hclock_read(c, &rd);
			double dx = (double)(D / 40), dv = (double)(rd.now_ns - prev);
			TEST_CHECK(dv >= dx * (1 + n.slope - slew) - 2 && dv <= dx * (1 + n.slope + slew) + 2,
			           "rate during the slew: %g ns over %g", dv, dx);
			double tr = target_at(&n, fake_x);
			TEST_CHECK(tr >= (double)rd.earliest_ns && tr <= (double)rd.latest_ns,
			           "target %.1f outside [%lld, %lld] during the slew", tr,
			           (long long)rd.earliest_ns, (long long)rd.latest_ns);
			double lo, hi;
			hclock_clock_bounds(c, rd.now_ns, &lo, &hi);
			TEST_CHECK(tr >= (double)rd.now_ns + lo && tr <= (double)rd.now_ns + hi,
			           "hclock_clock_bounds misses the target during the slew");
			TEST_CHECK(rd.status == HCLOCK_BOUNDS_LIVE, "status %d", rd.status);
			prev = rd.now_ns;
		}
		TEST_CHECK(fabs((double)hclock_now(c) - target_at(&n, fake_x)) <= 1,
		           "target not reached after the slew: %g ns off",
		           (double)hclock_now(c) - target_at(&n, fake_x));
		m = n;
	}
	/* a step on request */
	struct lm n = m;
	n.intercept_ns -= 1e6;
	int64_t before = hclock_now(c);
	cont_state_update(st, base, &n, &b, 500e-6, 1, fake_x, 1000, NULL);
	TEST_CHECK(before - hclock_now(c) > 999000, "no step on request");
	/* stale after last + 1000 ns */
	fake_x += 2000;
	hclock_reading rd;
	hclock_read(c, &rd);
	TEST_CHECK(rd.status == HCLOCK_BOUNDS_STALE, "status %d, expected stale", rd.status);
	cont_state_set_status(st, HCLOCK_BOUNDS_FROZEN);
	hclock_read(c, &rd);
	TEST_CHECK(rd.status == HCLOCK_BOUNDS_FROZEN, "status %d, expected frozen", rd.status);
	/* no bounds */
	struct bound none = bound_unknown();
	cont_state_update(st, base, &n, &none, 500e-6, 0, fake_x, 0, NULL);
	hclock_read(c, &rd);
	TEST_CHECK(rd.status == HCLOCK_BOUNDS_NONE && rd.earliest_ns == INT64_MIN, "no bounds");
	/* a model cannot be stacked on it */
	hclock_clock *bad = NULL;
	TEST_CHECK(hclock_model_linear(c, 0, 0, 0, &bad) == HCLOCK_EINVAL && !bad, "stacked");
	hclock_clock_free(c);
	hclock_clock_free(base);
}

/* ---- two readers and a writer on the real monotonic clock ---- */

#define NREADS 3000000
static hclock_clock *gclk;
static int64_t shared_last; /* the other thread's latest reading */
static long backwards;

static void *reader(void *arg)
{
	(void)arg;
	int64_t prev = INT64_MIN;
	long back = 0;
	for (long i = 0; i < NREADS; i++) {
		int64_t seen = __atomic_load_n(&shared_last, __ATOMIC_ACQUIRE);
		int64_t v = hclock_now(gclk);
		back += v < prev || v < seen;
		prev = v;
		__atomic_store_n(&shared_last, v, __ATOMIC_RELEASE);
	}
	__atomic_fetch_add(&backwards, back, __ATOMIC_RELAXED);
	return NULL;
}

static int stop_writer;
static long nupdates;

static void *writer(void *arg)
{
	struct rng *r = arg;
	struct cont_state *st = cont_clock_state(gclk);
	hclock_clock *base = gclk->inner;
	struct bound b = {0, -100, 100, 5e-6};
	while (!__atomic_load_n(&stop_writer, __ATOMIC_ACQUIRE)) {
		int64_t x = hclock_now(base);
		/* corrections of up to 50 ms both ways at 500 ppm: slews of up to 100 s overlap */
		struct lm t = {x, 5e7 * (2 * rng_uniform(r) - 1), 100e-6 * (2 * rng_uniform(r) - 1)};
		cont_state_update(st, base, &t, &b, 500e-6, 0, x, 0, NULL);
		nupdates++;
	}
	return NULL;
}

static void thread_checks(struct rng *r)
{
	hclock_clock *base;
	TEST_CHECK(hclock_base_create("monotonic", NULL, &base) == 0, "monotonic");
	TEST_CHECK(cont_clock_create(base, NULL, &gclk) == 0, "create");
	pthread_t a, b, w;
	pthread_create(&w, NULL, writer, r);
	pthread_create(&a, NULL, reader, NULL);
	pthread_create(&b, NULL, reader, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	__atomic_store_n(&stop_writer, 1, __ATOMIC_RELEASE);
	pthread_join(w, NULL);
	TEST_CHECK(backwards == 0, "%ld backward steps in %d reads from 2 threads", backwards,
	           2 * NREADS);
	TEST_CHECK(nupdates > 10, "writer made only %ld updates", nupdates);
	printf("test_cont: %d reads from 2 threads during %ld updates, %ld backward steps\n",
	       2 * NREADS, nupdates, backwards);
	hclock_clock_free(gclk);
	hclock_clock_free(base);
}

int main(int argc, char **argv)
{
	test_seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 1;
	for (int sd = 0; sd < 10; sd++, test_seed++) {
		struct rng r;
		rng_seed(&r, test_seed);
		slew_checks(&r);
	}
	struct rng r;
	rng_seed(&r, test_seed);
	thread_checks(&r);
	return test_end("test_cont");
}
