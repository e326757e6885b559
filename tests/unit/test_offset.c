/*
 * test_offset.c - the offset estimators against a scripted transport (transport/link.h)
 * with known clocks and known delays, no MPI: the client's clock runs at (1 + skew) with an
 * offset, the reference's is true time, and every message takes a delay of a minimum plus
 * an exponential tail (zero with probability 0.3: a sharp minimum, as on real networks),
 * different minima each way (delay asymmetry). The estimators' bias is then exact:
 *   skampi, min: (dmin_fwd - dmin_back') / 2 once some exchange had the minimum each way;
 *   rtt (constant delays): (d_fwd - d_back') / 2,
 * where the way back d_back' includes the client's processing of the reply.
 * Also: a transport that fails one message must not cut the exchange short.
 */
#include <math.h>
#include <string.h>

#include "clock/clock.h"
#include "offset/offset.h"
#include "test.h"
#include "util/rng.h"

#define PROC_NS 50 /* the client's time between receiving a reply and reading its clock */

/* the scripted world: true time T, ns */
static struct {
	int64_t T;
	double off_ns, skew;        /* client clock = T * (1 + skew) + off */
	int64_t dmin_f, dmin_b;     /* minimum one-way delays, ns */
	double tail_mean_ns;        /* 0: constant delays */
	struct rng rng;
	int64_t reply;              /* the reference's timestamp in flight */
	int fail_at, sends;         /* fail the fail_at-th send (0: never); sends so far */
	int stall_from, stall_to;   /* sends in [from, to] come back STALL_NS late (a client that
	                               waits for the core at every wake-up) */
} w;

#define STALL_NS 1000000

static int64_t delay(int64_t dmin)
{
	if (w.tail_mean_ns <= 0 || rng_uniform(&w.rng) < 0.3)
		return dmin;
	return dmin + (int64_t)(-w.tail_mean_ns * log(1 - rng_uniform(&w.rng)));
}

static int64_t client_ns(int64_t T)
{
	return T + (int64_t)llround(w.off_ns + w.skew * (double)T);
}

/* the truth the client's estimate should give at its clock time x: reference minus client */
static double truth_at(int64_t x)
{
	/* invert x = T (1 + skew) + off */
	double T = ((double)x - w.off_ns) / (1 + w.skew);
	return T - (double)x;
}

static int64_t script_now(struct hclock_clock *c)
{
	(void)c;
	return client_ns(w.T);
}

static const struct clock_ops script_clock_ops = {.name = "scripted", .now = script_now};

/* The client sends: the message travels, the reference answers with its time at once (its
 * side of every estimator: receive, then send its clock), and the answer travels back. */
static int script_send(struct pp_link *l, int64_t t, int dest, int sync)
{
	(void)l, (void)t, (void)dest, (void)sync;
	w.sends++;
	w.T += delay(w.dmin_f);
	w.reply = w.T;
	w.T += delay(w.dmin_b);
	if (w.sends >= w.stall_from && w.sends <= w.stall_to)
		w.T += STALL_NS;
	return w.sends == w.fail_at ? HCLOCK_EMPI : 0;
}

static int script_recv(struct pp_link *l, int src, int64_t *t)
{
	(void)l, (void)src;
	*t = w.reply;
	w.T += PROC_NS; /* the client's own processing */
	return 0;
}

static const struct link_ops script_link_ops = {.send = script_send, .recv = script_recv};

static void setup(uint64_t seed, double tail)
{
	memset(&w, 0, sizeof(w));
	rng_seed(&w.rng, seed);
	w.T = 1000000000;
	w.off_ns = (2 * rng_uniform(&w.rng) - 1) * 1e6;
	w.skew = (2 * rng_uniform(&w.rng) - 1) * 1e-4;
	w.dmin_f = 200 + 2 * (int64_t)(rng_uniform(&w.rng) * 900);
	w.dmin_b = 200 + 2 * (int64_t)(rng_uniform(&w.rng) * 900);
	w.tail_mean_ns = tail;
}

/* One measurement of the estimator alone (paper: no retakes, no flag message). */
static int measure(const char *name, int n, struct offset_sample *s)
{
	struct hclock_clock clk;
	struct offset_alg *a;
	struct pp_link l = {.ops = &script_link_ops, .ref = 0, .client = 1, .me = 1, .clk = &clk};
	clock_init(&clk, &script_clock_ops, NULL);
	TEST_CHECK(offset_create(offset_type_find(name, strlen(name)), n, &a) == 0, "%s", name);
	a->paper = 1;
	int rc = offset_measure(a, &l, s);
	offset_destroy(a);
	return rc;
}

/* offset_measure's retakes (numerics/stall.h): a measurement whose every ping-pong came back
 * STALL_NS late is off by about STALL_NS / 2; retaken, the result is a clean one. Three
 * passes with one estimator: stalled then clean (the first of a pair is always taken twice),
 * clean then a stalled one retaken (counted), and paper, which keeps the stalled one (the
 * check bites). */
static void stall_case(const char *name)
{
	struct hclock_clock clk;
	struct offset_alg *a;
	uint64_t retakes = 0;
	struct pp_link l = {.ops = &script_link_ops, .ref = 0, .client = 1, .me = 1, .clk = &clk,
	                    .retakes = &retakes};
	struct offset_sample s;
	int n = 5;
	clock_init(&clk, &script_clock_ops, NULL);
	TEST_CHECK(offset_create(offset_type_find(name, strlen(name)), n, &a) == 0, "%s", name);
	double bias = (double)(w.dmin_f - w.dmin_b - PROC_NS) / 2, tol = 3000;
	/* 1: the first measurement stalled (all its ping-pongs: rtt's 55 for the pair's RTT too,
	 * which the retake must measure again), its calibration retake clean */
	w.stall_from = 1, w.stall_to = strcmp(name, "rtt") ? n : 5 + 50 + n;
	TEST_CHECK(offset_measure(a, &l, &s) == 0, "%s", name);
	TEST_CHECK(fabs(s.offset_ns - truth_at(s.local_ns) - bias) <= tol && s.rtt_ns < 1e5,
	           "%s: a stalled first measurement kept: off by %.0f ns, round trip %.0f ns", name,
	           s.offset_ns - truth_at(s.local_ns) - bias, s.rtt_ns);
	TEST_CHECK(retakes == 0, "%s: the calibration counted as %llu retakes", name,
	           (unsigned long long)retakes);
	/* 2: a later measurement stalled: retaken (1), the clean one returned */
	w.stall_from = w.sends + 1, w.stall_to = w.sends + n;
	TEST_CHECK(offset_measure(a, &l, &s) == 0, "%s", name);
	TEST_CHECK(fabs(s.offset_ns - truth_at(s.local_ns) - bias) <= tol && s.rtt_ns < 1e5,
	           "%s: a stalled measurement kept: off by %.0f ns, round trip %.0f ns", name,
	           s.offset_ns - truth_at(s.local_ns) - bias, s.rtt_ns);
	TEST_CHECK(retakes == 1, "%s: %llu retakes, expected 1", name, (unsigned long long)retakes);
	/* 3: paper keeps it */
	a->paper = 1;
	w.stall_from = w.sends + 1, w.stall_to = w.sends + n;
	TEST_CHECK(offset_measure(a, &l, &s) == 0, "%s", name);
	TEST_CHECK(fabs(s.offset_ns - truth_at(s.local_ns) - bias) > STALL_NS / 4,
	           "%s/paper: a stalled measurement is only %.0f ns off: the case does not bite",
	           name, s.offset_ns - truth_at(s.local_ns) - bias);
	offset_destroy(a);
}

static void bias_case(const char *name, int n, double tail)
{
	struct offset_sample s;
	int64_t T0 = w.T;
	int rc = measure(name, n, &s);
	/* the client's processing after a reply (PROC_NS) is part of the way back */
	double bias = (double)(w.dmin_f - w.dmin_b - PROC_NS) / 2;
	double want = truth_at(s.local_ns) + bias;
	/* the truth moves by |skew| x the measurement's length while the bounds are taken */
	double tol = 1 + fabs(w.skew) * (double)(w.T - T0);
	TEST_CHECK(rc == 0, "%s: rc %d", name, rc);
	TEST_CHECK(fabs(s.offset_ns - want) <= tol, "%s: estimate %.1f ns, truth %.1f + bias %.1f "
	           "(dmin %lld/%lld ns, tail %g ns)", name, s.offset_ns, truth_at(s.local_ns), bias,
	           (long long)w.dmin_f, (long long)w.dmin_b, tail);
	if (strcmp(name, "rtt"))
		TEST_CHECK(fabs(s.rtt_ns - (double)(w.dmin_f + w.dmin_b + PROC_NS)) <= 2,
		           "%s: smallest round trip %.0f ns, expected %lld", name, s.rtt_ns,
		           (long long)(w.dmin_f + w.dmin_b + PROC_NS));
}

int main(void)
{
	for (test_seed = 1; test_seed <= 20; test_seed++) {
		setup(test_seed, 500);
		bias_case("skampi", 60, 500);
		setup(test_seed, 500);
		bias_case("min", 300, 500);
		setup(test_seed, 0);
		bias_case("rtt", 9, 0);
	}
	for (test_seed = 1; test_seed <= 5; test_seed++)
		for (size_t i = 0; offset_types[i]; i++) {
			setup(test_seed, 0);
			stall_case(offset_types[i]->name);
		}
	/* a failing message: the exchange goes on to its end and reports the failure */
	for (size_t i = 0; offset_types[i]; i++) {
		struct offset_sample s;
		setup(99, 100);
		w.fail_at = 3;
		int rc = measure(offset_types[i]->name, 10, &s);
		int expect = strcmp(offset_types[i]->name, "rtt") ? 10 : 5 + 50 + 10;
		TEST_CHECK(rc == HCLOCK_EMPI, "%s: a failed send returned %d", offset_types[i]->name, rc);
		TEST_CHECK(w.sends == expect, "%s: %d messages sent after a failure, expected all %d",
		           offset_types[i]->name, w.sends, expect);
	}
	return test_end("test_offset");
}
