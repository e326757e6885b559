/*
 * test_stall.c - numerics/stall.h: points made through a stall are told by their round trip
 * and left out. Random lines of known slope and intercept, fit points whose offsets are off
 * by up to half their round trip (floor 0.5-10 us, a jittery tail), and a few stalled ones
 * (round trips of 1-5 ms, off by half of that): every stalled point is left out, every point
 * within the floor's margin kept, and the line through the kept points is within the clean
 * points' error where the line through all of them is not (the case bites). 20 seeds.
 * And the stall hook (util/fault.h, at=stall): on= limits the draws to its sites, draws lie
 * in the range, two threads drawing at once (a continuous clock's and the program's) get
 * exactly the stalls they asked for between them, bad values are refused.
 */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "hclock.h"
#include "numerics/linreg.h"
#include "numerics/stall.h"
#include "test.h"
#include "util/fault.h"
#include "util/rng.h"

#define N 60

static void line_case(void)
{
	struct rng r;
	rng_seed(&r, test_seed);
	double slope = (2 * rng_uniform(&r) - 1) * 1e-4, icpt = (2 * rng_uniform(&r) - 1) * 1e6;
	double floor = 500 + rng_uniform(&r) * 9500;
	int64_t x[N], xk[N];
	double y[N], yk[N], rtt[N];
	int stalled[N], nstall = 0;
	for (int i = 0; i < N; i++) {
		x[i] = 1000000000 + (int64_t)i * 5000000;
		stalled[i] = rng_uniform(&r) < 0.1;
		/* clean: the floor and a jitter of up to the floor (well inside the margin) */
		rtt[i] = stalled[i] ? 1e6 + rng_uniform(&r) * 4e6 : floor * (1 + rng_uniform(&r));
		double err = stalled[i] ? -rtt[i] / 2 : (rng_uniform(&r) - 0.5) * rtt[i];
		y[i] = icpt + slope * (double)(x[i] - x[0]) + err;
		nstall += stalled[i];
	}
	rtt[0] = floor; /* the floor is seen */
	stalled[0] = 0;
	y[0] = icpt;
	size_t k = stall_keep(x, y, rtt, N, xk, yk);
	size_t want = 0;
	for (int i = 0; i < N; i++)
		want += !stalled[i];
	TEST_CHECK(k == want, "kept %zu of %d points, %zu are clean (floor %.0f ns)", k, N, want,
	           floor);
	for (size_t i = 0, j = 0; i < N; i++)
		if (!stalled[i]) {
			TEST_CHECK(j < k && xk[j] == x[i] && yk[j] == y[i], "clean point %zu not kept in order",
			           i);
			j++;
		}
	struct lm clean, all;
	TEST_CHECK(linreg_fit(xk, yk, k, &clean) == LINREG_OK, "fit of the kept points");
	TEST_CHECK(linreg_fit(x, y, N, &all) == LINREG_OK, "fit of all points");
	int64_t at = x[N - 1] + 1000000000; /* one second after the last point */
	double truth = icpt + slope * (double)(at - x[0]);
	double e_clean = fabs(lm_offset(&clean, at) - truth), e_all = fabs(lm_offset(&all, at) - truth);
	/* each kept point is off by at most its round trip's half (<= the floor); the line one
	 * second after a 0.3 s span by at most about 3 e / span x 1.3 s */
	TEST_CHECK(e_clean <= floor * 3 / 0.295 * 1.3, "kept points' line off by %.0f ns one second "
	           "later (floor %.0f ns)", e_clean, floor);
	if (nstall)
		TEST_CHECK(e_all > e_clean, "all points' line off by %.0f ns, the kept ones' by %.0f: "
		           "the stalls do not bite", e_all, e_clean);
}

#define DRAWS 20000

static void *draw_child(void *arg)
{
	int64_t *bad = arg;
	for (int i = 0; i < DRAWS; i++) {
		int64_t d = fault_stall_draw_at(FAULT_STALL_CHILD);
		*bad += d < 10000000 || d > 100000000;
	}
	return NULL;
}

static void fault_sites(void)
{
	static const struct {
		const char *on;
		int oneshot, child, parent;
	} c[] = {{"", 1, 1, 1}, {",on=all", 1, 1, 1}, {",on=oneshot", 1, 0, 0},
	         {",on=cont", 0, 1, 1}, {",on=child", 0, 1, 0}, {",on=parent", 0, 0, 1}};
	char v[128];
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		snprintf(v, sizeof(v), "rank=all,at=stall,ms=10-100,share=1%s", c[i].on);
		TEST_CHECK(fault_configure(v, 3) == 0, "%s refused", v);
		int64_t a = fault_stall_draw(), b = fault_stall_draw_at(FAULT_STALL_CHILD),
		        d = fault_stall_draw_at(FAULT_STALL_PARENT);
		TEST_CHECK(!a == !c[i].oneshot && !b == !c[i].child && !d == !c[i].parent,
		           "%s: stalls %lld %lld %lld ns (one-shot, child, parent)", v, (long long)a,
		           (long long)b, (long long)d);
	}
	/* two threads at once: every draw a stall within the range, each counted once */
	TEST_CHECK(fault_configure("rank=all,at=stall,ms=10-100,share=1,on=cont", 3) == 0,
	           "on=cont refused");
	pthread_t th;
	int64_t bad_t = 0, bad_m = 0;
	pthread_create(&th, NULL, draw_child, &bad_t);
	for (int i = 0; i < DRAWS; i++) {
		int64_t d = fault_stall_draw_at(FAULT_STALL_PARENT);
		bad_m += d < 10000000 || d > 100000000;
	}
	pthread_join(th, NULL);
	TEST_CHECK(!bad_t && !bad_m, "%lld and %lld draws outside 10-100 ms", (long long)bad_t,
	           (long long)bad_m);
	TEST_CHECK(fault_stalls(FAULT_STALL_CHILD) == DRAWS &&
	           fault_stalls(FAULT_STALL_PARENT) == DRAWS &&
	           fault_stalls(FAULT_STALL_ONESHOT) == 0, "counted %llu child, %llu parent stalls "
	           "of %d each", (unsigned long long)fault_stalls(FAULT_STALL_CHILD),
	           (unsigned long long)fault_stalls(FAULT_STALL_PARENT), DRAWS);
	/* another rank not named: nothing */
	TEST_CHECK(fault_configure("rank=1,at=stall,share=1,on=child", 3) == 0 &&
	           fault_stall_draw_at(FAULT_STALL_CHILD) == 0, "rank 3 stalled by rank=1");
	TEST_CHECK(fault_configure("rank=all,at=stall,on=nowhere", 3) == HCLOCK_EINVAL,
	           "on=nowhere accepted");
	TEST_CHECK(fault_configure("rank=1,at=fit,on=child", 3) == HCLOCK_EINVAL,
	           "on= without at=stall accepted");
	fault_configure(NULL, 3);
	TEST_CHECK(fault_stall_draw_at(FAULT_STALL_CHILD) == 0, "stalls after disarming");
}

/* the modes that make a check bite: on for the named process(es) only, counting nothing;
 * late's period */
static void fault_modes(void)
{
	TEST_CHECK(fault_configure("rank=all,at=corrupt", 3) == 0 && fault_mode(FAULT_CORRUPT) &&
	           !fault_mode(FAULT_LATE) && !fault_hit(FAULT_OP), "at=corrupt on rank=all");
	TEST_CHECK(fault_configure("rank=2,at=corrupt", 3) == 0 && !fault_mode(FAULT_CORRUPT),
	           "rank 3 corrupted by rank=2");
	TEST_CHECK(fault_configure("rank=3,at=late", 3) == 0 && fault_mode(FAULT_LATE) &&
	           fault_period() == 5, "at=late: on, period %ld (5)", fault_period());
	TEST_CHECK(fault_configure("rank=all,at=late,k=3", 3) == 0 && fault_mode(FAULT_LATE) &&
	           fault_period() == 3, "at=late,k=3: period %ld", fault_period());
	TEST_CHECK(fault_configure("rank=all,at=op", 3) == HCLOCK_EINVAL,
	           "rank=all with a counted point accepted");
	fault_configure(NULL, 3);
	TEST_CHECK(!fault_mode(FAULT_CORRUPT) && !fault_mode(FAULT_LATE), "modes after disarming");
}

int main(void)
{
	for (test_seed = 1; test_seed <= 20; test_seed++)
		line_case();
	/* the rule itself */
	test_seed = 0;
	TEST_CHECK(!stall_judge(1e9, 0), "an unknown floor (0) judged a stall");
	TEST_CHECK(!stall_judge(1e9, INFINITY), "an unknown floor (inf) judged a stall");
	TEST_CHECK(!stall_judge(NAN, 1000), "a NaN round trip judged a stall");
	TEST_CHECK(!stall_judge(3 * 1000 + STALL_MARGIN_NS, 1000), "the margin itself a stall");
	TEST_CHECK(stall_judge(3 * 1000 + STALL_MARGIN_NS + 1, 1000), "beyond the margin no stall");
	/* garbage: NaN and infinite round trips, none kept wrongly, nothing crashes */
	int64_t x[4] = {1, 2, 3, 4}, xk[4];
	double y[4] = {0, 0, 0, 0}, yk[4], rtt[4] = {NAN, INFINITY, 1000, -5};
	size_t k = stall_keep(x, y, rtt, 4, xk, yk);
	TEST_CHECK(k <= 4, "garbage kept %zu of 4", k);
	TEST_CHECK(stall_keep(x, y, rtt, 0, xk, yk) == 0, "no points, some kept");
	fault_sites();
	fault_modes();
	return test_end("test_stall");
}
