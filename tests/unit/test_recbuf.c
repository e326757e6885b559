/*
 * test_recbuf.c - the tracer's lock-free record buffers (trace/recbuf.h) under threads, no
 * MPI. Several threads append numbered records at once while a writer thread empties the
 * buffers, fast or slow (a slow one makes both buffers fill: drops). Every record must come
 * out exactly once or be counted dropped, each thread's records in its order, none torn (a
 * checksum over its fields), and the REC_DROP records must add up to the drops. A signal
 * handler that flushes in the middle of a thread's appends must hand out whole records only.
 * Waiting for the writer (recbuf_wait_for_writer): the same runs drop nothing; a writer that
 * holds its buffer makes the first wait reach its deadline, after which records are dropped
 * at once (the run ends, nothing hangs); after recbuf_stop nothing waits.
 * The checker must reject streams with a duplicate, a torn record, a reordering or a wrong
 * drop count (the checks bite).
 *
 * test_recbuf [RECORDS]: records per thread (default 1000000).
 * test_recbuf cost THREADS [RECORDS]: no test; the wall time per record of THREADS threads
 *   appending RECORDS each at once into buffers that hold them all (default 1000000), the
 *   best of 5 runs.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "test.h"
#include "trace/recbuf.h"
#include "util/rng.h"

#define MAXT 8

/* the fields of thread t's record number seq (seeded): all but kind and tid derived from
 * them, the checksum in t2_l */
static struct rec make(uint64_t seed, uint32_t t, uint64_t seq)
{
	uint64_t h = rng_mix64(seed ^ ((uint64_t)t << 48) ^ seq);
	struct rec r = {.kind = REC_CALL, .flags = (uint8_t)(h & 3), .func = (uint16_t)(h >> 8),
	                .peer = (int32_t)(h >> 24), .tag = (int32_t)t, .comm = h,
	                .t_g = (int64_t)(h >> 1), .t_l = (int64_t)seq, .t2_g = (int64_t)~h};
	r.t2_l = (int64_t)rng_mix64(h ^ r.comm ^ (uint64_t)r.peer ^ r.func);
	return r;
}

struct check {
	uint64_t seed;
	int nthreads;
	int64_t last[MAXT];      /* each thread's last seq delivered, -1 none */
	uint64_t delivered[MAXT];
	uint64_t said;           /* the REC_DROP records' sum */
	uint64_t bad;            /* records that fail a check */
	char first[200];         /* what the first of them was */
};

static void check_init(struct check *c, uint64_t seed, int nthreads)
{
	memset(c, 0, sizeof(*c));
	c->seed = seed;
	c->nthreads = nthreads;
	for (int t = 0; t < MAXT; t++)
		c->last[t] = -1;
}

static void bad(struct check *c, const char *what, const struct rec *r)
{
	if (!c->bad++)
		snprintf(c->first, sizeof(c->first), "%s (kind %u tag %d seq %lld)", what, r->kind,
		         r->tag, (long long)r->t_l);
}

/* recbuf_put_fn: also called from a signal handler (plain memory only) */
static void put(const struct rec *b, size_t n, void *ctx)
{
	struct check *c = ctx;
	for (size_t i = 0; i < n; i++) {
		const struct rec *r = &b[i];
		if (r->kind == REC_DROP) {
			c->said += r->bytes;
			continue;
		}
		uint32_t t = (uint32_t)r->tag;
		if (r->kind != REC_CALL || t >= (uint32_t)c->nthreads || r->tid != t + 100) {
			bad(c, "a record of no thread", r);
			continue;
		}
		struct rec w = make(c->seed, t, (uint64_t)r->t_l);
		w.tid = r->tid;
		if (memcmp(&w, r, sizeof(w))) {
			bad(c, "a torn record (checksum)", r);
			continue;
		}
		if (r->t_l <= c->last[t]) {
			bad(c, "a duplicate or a record out of its thread's order", r);
			continue;
		}
		c->last[t] = r->t_l;
		c->delivered[t]++;
	}
}

struct run {
	recbuf *rb;
	uint64_t seed, n;
	int64_t writer_sleep_ns; /* per buffer the writer takes */
	struct check ck;
	uint64_t dropped[MAXT];  /* what each thread's appends said */
};

struct producer {
	struct run *run;
	uint32_t t;
};

static void *producer_main(void *arg)
{
	struct producer *p = arg;
	struct run *run = p->run;
	struct rng g;
	rng_seed(&g, run->seed + p->t);
	for (uint64_t s = 0; s < run->n; s++) {
		struct rec r = make(run->seed, p->t, s);
		if (!recbuf_append(run->rb, &r, p->t + 100, 0))
			run->dropped[p->t]++;
		if ((rng_u64(&g) & 0xffff) == 0)
			sched_yield(); /* other interleavings */
	}
	return NULL;
}

static void *writer_main(void *arg)
{
	struct run *run = arg;
	const struct rec *b;
	size_t n;
	while ((b = recbuf_take(run->rb, &n, 1))) {
		if (run->writer_sleep_ns) {
			struct timespec ts = {0, run->writer_sleep_ns};
			nanosleep(&ts, NULL);
		}
		put(b, n, &run->ck);
		recbuf_written(run->rb);
	}
	return NULL;
}

/* the writer stopped, and the buffer handed to it as it stopped written (tracer.c's
 * finalize does the same) */
static void writer_end(struct run *run, pthread_t w)
{
	recbuf_stop(run->rb);
	pthread_join(w, NULL);
	const struct rec *b;
	size_t k;
	if ((b = recbuf_take(run->rb, &k, 0))) {
		put(b, k, &run->ck);
		recbuf_written(run->rb);
	}
}

#define WAIT_FOREVER_NS (3600 * 1000000000LL) /* a deadline no stall reaches, ns */

/* nthreads threads append n records each into buffers of cap; the totals are checked.
 * wait_ns > 0: the threads wait for the writer (recbuf_wait_for_writer, that deadline), and
 * nothing may be dropped */
static void threads_run(uint64_t seed, int nthreads, uint64_t n, size_t cap, int64_t sleep_ns,
                        int64_t wait_ns)
{
	test_seed = seed;
	struct run run = {.seed = seed, .n = n, .writer_sleep_ns = sleep_ns};
	check_init(&run.ck, seed, nthreads);
	run.rb = recbuf_create(cap);
	TEST_CHECK(run.rb, "recbuf_create(%zu)", cap);
	if (!run.rb)
		return;
	recbuf_wait_for_writer(run.rb, wait_ns);
	pthread_t w, th[MAXT];
	struct producer p[MAXT];
	pthread_create(&w, NULL, writer_main, &run);
	for (int t = 0; t < nthreads; t++) {
		p[t] = (struct producer){&run, (uint32_t)t};
		pthread_create(&th[t], NULL, producer_main, &p[t]);
	}
	for (int t = 0; t < nthreads; t++)
		pthread_join(th[t], NULL);
	writer_end(&run, w);
	long sk = recbuf_flush(run.rb, NULL, 0, put, &run.ck);
	TEST_CHECK(sk == 0, "the last flush wrote everything (%ld)", sk);
	uint64_t drops = 0, got = 0;
	for (int t = 0; t < nthreads; t++) {
		TEST_CHECK(run.ck.delivered[t] + run.dropped[t] == n,
		           "thread %d: %llu delivered + %llu dropped = %llu appended", t,
		           (unsigned long long)run.ck.delivered[t],
		           (unsigned long long)run.dropped[t], (unsigned long long)n);
		drops += run.dropped[t];
		got += run.ck.delivered[t];
	}
	TEST_CHECK(!run.ck.bad, "%llu bad records, the first: %s", (unsigned long long)run.ck.bad,
	           run.ck.first);
	TEST_CHECK(drops == recbuf_dropped(run.rb) && run.ck.said == drops,
	           "drops: the threads' %llu, recbuf_dropped %llu, the REC_DROP records' %llu",
	           (unsigned long long)drops, (unsigned long long)recbuf_dropped(run.rb),
	           (unsigned long long)run.ck.said);
	struct recbuf_waits wt;
	recbuf_waits(run.rb, &wt);
	if (wait_ns)
		TEST_CHECK(!drops && !wt.gave_up && (wt.waits > 0) == (wt.waited_ns > 0) &&
		           (!sleep_ns || wt.waits > 0),
		           "waiting for the writer: %llu dropped (expected 0), %llu waits, %lld ns "
		           "waited, gave up %d", (unsigned long long)drops,
		           (unsigned long long)wt.waits, (long long)wt.waited_ns, wt.gave_up);
	else
		TEST_CHECK(!wt.waits && !wt.waited_ns && !wt.gave_up,
		           "dropping: no waits (%llu, %lld ns, gave up %d)",
		           (unsigned long long)wt.waits, (long long)wt.waited_ns, wt.gave_up);
	printf("seed %llu: %d threads x %llu records, buffers of %zu, writer %lld us per buffer, "
	       "%s: %llu delivered, %llu dropped, %llu waits of %.3f ms in all\n",
	       (unsigned long long)seed, nthreads, (unsigned long long)n, cap,
	       (long long)sleep_ns / 1000, wait_ns ? "wait" : "drop", (unsigned long long)got,
	       (unsigned long long)drops, (unsigned long long)wt.waits, wt.waited_ns * 1e-6);
	recbuf_free(run.rb);
}

/* ---- waiting for a writer that never gives its buffer back ---- */

/* 3 threads append into 64-record buffers whose writer takes one buffer and then holds it
 * (a disk that hangs): the first wait reaches the deadline, waiting is off, everything
 * after is dropped at once; the run ends in about one deadline, and every record is
 * delivered or counted dropped. Then recbuf_stop: nothing waits after it. */
struct stuck {
	recbuf *rb;
	struct run *run;
	atomic_int held, release;
};

static void *stuck_writer(void *arg)
{
	struct stuck *st = arg;
	size_t n;
	const struct rec *b = recbuf_take(st->rb, &n, 1);
	if (b) {
		atomic_store(&st->held, 1);
		while (!atomic_load(&st->release)) {
			struct timespec ts = {0, 1000000};
			nanosleep(&ts, NULL);
		}
		put(b, n, &st->run->ck);
		recbuf_written(st->rb);
	}
	return NULL;
}

static int64_t now_ns(void);

static void stuck_run(uint64_t seed)
{
	enum { CAP = 64, NT = 3, N = 20000 };
	const int64_t deadline = 50000000; /* 50 ms */
	test_seed = seed;
	struct run run = {.seed = seed, .n = N};
	check_init(&run.ck, seed, NT);
	struct stuck st = {.rb = recbuf_create(CAP), .run = &run};
	run.rb = st.rb;
	TEST_CHECK(run.rb, "recbuf_create(%d)", CAP);
	if (!run.rb)
		return;
	recbuf_wait_for_writer(run.rb, deadline);
	pthread_t w, th[NT];
	struct producer p[NT];
	pthread_create(&w, NULL, stuck_writer, &st);
	int64_t t0 = now_ns();
	for (int t = 0; t < NT; t++) {
		p[t] = (struct producer){&run, (uint32_t)t};
		pthread_create(&th[t], NULL, producer_main, &p[t]);
	}
	for (int t = 0; t < NT; t++)
		pthread_join(th[t], NULL);
	int64_t took = now_ns() - t0;
	struct recbuf_waits wt;
	recbuf_waits(run.rb, &wt);
	uint64_t drops = 0;
	for (int t = 0; t < NT; t++)
		drops += run.dropped[t];
	TEST_CHECK(atomic_load(&st.held) && wt.gave_up && drops > 0 && wt.waits >= 1 &&
	           wt.waited_ns >= deadline && took >= deadline && took < 40 * deadline,
	           "a writer that holds its buffer: gave up %d, %llu dropped, %llu waits of %lld "
	           "ns in all, the appends took %lld ns (deadline %lld ns)", wt.gave_up,
	           (unsigned long long)drops, (unsigned long long)wt.waits, (long long)wt.waited_ns,
	           (long long)took, (long long)deadline);
	/* the writer gives it back late: what is in the buffers comes out, the totals add up */
	atomic_store(&st.release, 1);
	pthread_join(w, NULL);
	const struct rec *b;
	size_t k;
	if ((b = recbuf_take(run.rb, &k, 0))) {
		put(b, k, &run.ck);
		recbuf_written(run.rb);
	}
	long sk = recbuf_flush(run.rb, NULL, 0, put, &run.ck);
	uint64_t got = 0;
	for (int t = 0; t < NT; t++)
		got += run.ck.delivered[t];
	TEST_CHECK(sk == 0 && !run.ck.bad && got + drops == (uint64_t)NT * N &&
	           drops == recbuf_dropped(run.rb) && run.ck.said == drops,
	           "after giving up: %llu delivered + %llu dropped = %llu appended, the REC_DROP "
	           "records say %llu, %llu bad (%s)", (unsigned long long)got,
	           (unsigned long long)drops, (unsigned long long)NT * N,
	           (unsigned long long)run.ck.said, (unsigned long long)run.ck.bad, run.ck.first);
	printf("seed %llu: a writer that holds its buffer: %llu waits, %.1f ms waited, %llu of %d "
	       "dropped, the appends took %.1f ms\n", (unsigned long long)seed,
	       (unsigned long long)wt.waits, wt.waited_ns * 1e-6, (unsigned long long)drops,
	       NT * N, took * 1e-6);
	recbuf_free(run.rb);

	/* recbuf_stop: a full buffer and no writer; an append drops at once */
	recbuf *rb = recbuf_create(2);
	recbuf_wait_for_writer(rb, 10 * 1000000000LL);
	struct rec r = make(seed, 0, 0);
	int in = recbuf_append(rb, &r, 100, 0) + recbuf_append(rb, &r, 100, 0) +
	         recbuf_append(rb, &r, 100, 0); /* the third switches: the writer has one */
	recbuf_append(rb, &r, 100, 0);
	recbuf_stop(rb);
	t0 = now_ns();
	int dropped = !recbuf_append(rb, &r, 100, 0);
	took = now_ns() - t0;
	recbuf_waits(rb, &wt);
	TEST_CHECK(in == 3 && dropped && took < 1000000000 && !wt.gave_up,
	           "after recbuf_stop nothing waits: %d of 3 in, the fifth dropped %d after %lld ns, "
	           "gave up %d", in, dropped, (long long)took, wt.gave_up);
	recbuf_free(rb);
}

/* ---- a flush from a signal handler that may interrupt an append ---- */

static struct run srun;
static atomic_int sig_done;
static long sig_skipped;

static void on_usr1(int sig)
{
	(void)sig;
	struct rec last = make(srun.seed, 1, 0); /* the cut record: thread 1's only one */
	last.tid = 101;
	sig_skipped = recbuf_flush(srun.rb, &last, 2000000000, put, &srun.ck);
	atomic_store(&sig_done, 1);
}

static void *sig_producer(void *arg)
{
	(void)arg;
	uint64_t s = 0;
	while (!atomic_load_explicit(&sig_done, memory_order_relaxed) && s < (1u << 30)) {
		struct rec r = make(srun.seed, 0, s++);
		recbuf_append(srun.rb, &r, 100, 0);
	}
	srun.n = s; /* appended (one perhaps interrupted by the flush) */
	return NULL;
}

/* returns whether the signal interrupted an append (a slot skipped) */
static int signal_run(uint64_t seed, size_t cap)
{
	test_seed = seed;
	memset(&srun, 0, sizeof(srun));
	srun.seed = seed;
	check_init(&srun.ck, seed, 2);
	atomic_store(&sig_done, 0);
	sig_skipped = -2;
	srun.rb = recbuf_create(cap);
	TEST_CHECK(srun.rb, "recbuf_create(%zu)", cap);
	if (!srun.rb)
		return 0;
	sigset_t usr1, old;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_t w, th;
	pthread_sigmask(SIG_BLOCK, &usr1, &old); /* the writer never takes it */
	pthread_create(&w, NULL, writer_main, &srun);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_create(&th, NULL, sig_producer, NULL);
	struct rng g;
	rng_seed(&g, seed);
	struct timespec ts = {0, 200000 + (long)(rng_u64(&g) % 2000000)};
	nanosleep(&ts, NULL);
	pthread_kill(th, SIGUSR1);
	pthread_join(th, NULL);
	writer_end(&srun, w);
	TEST_CHECK(sig_skipped == 0 || sig_skipped == 1, "the handler's flush: %ld", sig_skipped);
	if (!sig_skipped) { /* the rest, as at the end */
		long sk = recbuf_flush(srun.rb, NULL, 0, put, &srun.ck);
		TEST_CHECK(sk == 0, "the last flush: %ld", sk);
	}
	TEST_CHECK(!srun.ck.bad, "%llu bad records, the first: %s",
	           (unsigned long long)srun.ck.bad, srun.ck.first);
	uint64_t d = recbuf_dropped(srun.rb), got = srun.ck.delivered[0];
	TEST_CHECK(got + d == srun.n && srun.ck.delivered[1] == 1 && srun.ck.said == d,
	           "signal flush: %llu delivered + %llu dropped = %llu appended, the cut record "
	           "delivered (%llu), the REC_DROP records say %llu",
	           (unsigned long long)got, (unsigned long long)d, (unsigned long long)srun.n,
	           (unsigned long long)srun.ck.delivered[1], (unsigned long long)srun.ck.said);
	recbuf_free(srun.rb);
	return sig_skipped == 1;
}

/* ---- the checker bites ---- */

static void checker_bites(uint64_t seed)
{
	test_seed = seed;
	struct rec s[4];
	for (int i = 0; i < 4; i++) {
		s[i] = make(seed, 1, (uint64_t)i);
		s[i].tid = 101;
	}
	struct check c;
	check_init(&c, seed, 2);
	put(s, 4, &c);
	TEST_CHECK(!c.bad && c.delivered[1] == 4, "a good stream passes (%llu bad)",
	           (unsigned long long)c.bad);
	struct rec dup[3] = {s[0], s[1], s[1]}, torn[2] = {s[0], s[1]}, rev[2] = {s[1], s[0]};
	torn[1].t_g ^= 1;
	struct rec mixed = s[2];
	memcpy(&mixed.t2_g, &s[3].t2_g, 16); /* half of another record */
	const struct {
		const char *what;
		struct rec *r;
		size_t n;
	} cases[] = {{"a duplicate", dup, 3}, {"a flipped bit", torn, 2}, {"two swapped", rev, 2},
	             {"a half of another record", &mixed, 1}};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		check_init(&c, seed, 2);
		put(cases[i].r, cases[i].n, &c);
		TEST_CHECK(c.bad == 1, "%s is found (%llu bad)", cases[i].what,
		           (unsigned long long)c.bad);
	}
	/* REC_DROP records that do not add up to the drops: the totals check would fail */
	struct rec m = {.kind = REC_DROP, .bytes = 3};
	check_init(&c, seed, 2);
	put(&m, 1, &c);
	TEST_CHECK(c.said == 3, "a REC_DROP record's count is summed (%llu)",
	           (unsigned long long)c.said);
}

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int cost(int nthreads, uint64_t n)
{
	if (nthreads < 1 || nthreads > MAXT || !n) {
		fprintf(stderr, "test_recbuf cost: expected 1 to %d threads and a positive number of "
		        "records\n", MAXT);
		return 2;
	}
	double best = 0;
	for (int rep = 0; rep < 5; rep++) {
		struct run run = {.seed = 1, .n = n};
		check_init(&run.ck, 1, nthreads);
		if (!(run.rb = recbuf_create((size_t)n * (size_t)nthreads + 1))) {
			fprintf(stderr, "test_recbuf cost: no memory for %llu records\n",
			        (unsigned long long)n * (unsigned long long)nthreads);
			return 1;
		}
		pthread_t th[MAXT];
		struct producer p[MAXT];
		int64_t t0 = now_ns();
		for (int t = 0; t < nthreads; t++) {
			p[t] = (struct producer){&run, (uint32_t)t};
			pthread_create(&th[t], NULL, producer_main, &p[t]);
		}
		for (int t = 0; t < nthreads; t++)
			pthread_join(th[t], NULL);
		double ns = (double)(now_ns() - t0) / ((double)n * nthreads);
		best = rep && best < ns ? best : ns;
		recbuf_free(run.rb);
	}
	printf("%d threads x %llu records: %.1f ns per record (wall time, best of 5)\n", nthreads,
	       (unsigned long long)n, best);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 2 && !strcmp(argv[1], "cost"))
		return cost(atoi(argv[2]), argc > 3 ? strtoull(argv[3], NULL, 10) : 1000000);
	uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
	struct sigaction sa = {0};
	sa.sa_handler = on_usr1;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	const uint64_t seeds[] = {1, 2, 3};
	for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++) {
		uint64_t seed = seeds[i];
		checker_bites(seed);
		threads_run(seed, 4, n, 4096, 0, 0);        /* a fast writer */
		threads_run(seed, 6, n / 2, 1024, 200000, 0); /* a slow one: drops */
		threads_run(seed, 8, n / 4, 2, 0, 0);       /* a switch every other record */
		/* waiting for the writer: nothing dropped. The deadline far above any stall: a
		 * starved writer thread (0.4 % of a core at nice 19 beside a load of 8) once held a
		 * buffer past the tracer's 10 s, and giving up is stuck_run's case */
		threads_run(seed, 6, n / 8, 1024, 200000, WAIT_FOREVER_NS); /* the slow one */
		threads_run(seed, 8, n / 32, 2, 0, WAIT_FOREVER_NS);
		stuck_run(seed);
	}
	int interrupted = 0, runs = 0;
	for (uint64_t seed = 1; seed <= 40; seed++, runs++)
		interrupted += signal_run(seed, seed & 1 ? 64 : 1 << 20);
	printf("signal flushes: %d of %d interrupted an append (its slot skipped)\n", interrupted,
	       runs);
	return test_end("test_recbuf");
}
