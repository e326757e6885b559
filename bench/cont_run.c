/*
 * cont_run.c - one launch of the continuous clock's benchmark (bench/cont drives it).
 *
 *   cont_run --emulate SPEC [--cont SPEC] [--oneshot SPEC] [--seconds D] [--probe-ms P]
 *            [--reads N] [--load none|allreduce|pingpong] [--csv FILE]
 *
 * Under emulated clocks (known truth): the one-shot sync (--oneshot; "none" skips it) and the
 * continuous sync (--cont; "none" skips it) run one after the other on the same base clock.
 * Then for D seconds every rank probes both global clocks every P ms: true error, the
 * continuous clock's bounds (is the truth inside, half-widths), its period. Meanwhile, on
 * every rank not on the reference node, two reader threads read the continuous clock N times
 * in all (bursts spread over the run) and count backward steps, each thread against itself
 * and against the other's latest reading (a reading that starts after another ended must not
 * be smaller). The main thread either sleeps between probes (--load none) or runs a
 * communication loop on the application's communicator: 8 B MPI_Allreduce, or 8 B ping-pongs
 * between ranks 2i and 2i+1; its time per iteration is recorded in chunks of 1000.
 *
 * Output: rank 0 writes every probe to FILE as CSV (t_s,rank,node,cont_err_ns,lo_ns,hi_ns,
 * in_bounds,status,oneshot_err_ns,period_s) and prints one JSON object on stdout: the specs,
 * sync durations, per rank the engine's statistics, its thread's CPU time, the reads and
 * backward steps, the load loop's chunk medians, and over the probes the smallest and median
 * of the latest exchange's fastest round trip and the median of the link's noise
 * (hclock_sync_stats rtt_ns and noise_ns; -1: none).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "emulate/emu.h"
#include "hclock.h"
#include "sync/sync.h"

struct probe {
	double t_s;          /* real time since the emulation's epoch, s */
	double cont_err_ns;  /* continuous clock reading - truth, ns */
	double lo_ns, hi_ns; /* truth - reading lies in [lo, hi] (NAN: no bounds) */
	double oneshot_err_ns;
	double period_s;
	double rtt_ns, noise_ns; /* the latest exchange's fastest round trip, the window's
	                            offset scatter (hclock_sync_stats), ns; NAN: none */
	int status;
};

struct rank_sum {
	double sync_one_s, sync_cont_s;
	double cpu_s, elapsed_s;
	double reads, backward, cross_backward;
	double exchanges, timeouts, served, halvings, doublings, shrinks, max_corr_ns;
	double load_iters, load_chunk_median_ns, load_chunk_p90_ns;
	double node;
	double nprobe;
	double rtt_min_ns, rtt_median_ns, noise_median_ns; /* over the probes, ns (-1: none) */
};
#define NSUM (sizeof(struct rank_sum) / sizeof(double))

static int rank, size;

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

static void sleep_s(double s)
{
	if (s <= 0)
		return;
	struct timespec ts = {(time_t)s, (long)((s - floor(s)) * 1e9)};
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static void die(const char *what)
{
	fprintf(stderr, "cont_run (rank %d): %s: %s\n", rank, what, hclock_last_error());
	MPI_Abort(MPI_COMM_WORLD, 2);
}

/* ---- reader threads ---------------------------------------------------------------------- */

struct readers {
	hclock_clock *clk;
	long per_thread;       /* reads each thread makes */
	double t_end;          /* monotonic s: spread the reads until then */
	_Atomic int64_t last;  /* the largest reading finished so far (both threads) */
	long backward[2], cross[2], done[2];
};
struct reader_arg {
	struct readers *r;
	int id;
};

static void *reader(void *p)
{
	struct reader_arg *a = p;
	struct readers *r = a->r;
	const long burst = 20000;
	int64_t prev = INT64_MIN;
	long n = 0;
	while (n < r->per_thread) {
		long m = r->per_thread - n < burst ? r->per_thread - n : burst;
		for (long i = 0; i < m; i++) {
			int64_t seen = atomic_load_explicit(&r->last, memory_order_acquire);
			int64_t v = hclock_now(r->clk);
			r->backward[a->id] += v < prev;
			r->cross[a->id] += v < seen;
			prev = v;
			int64_t cur = seen;
			while (v > cur && !atomic_compare_exchange_weak(&r->last, &cur, v))
				;
		}
		n += m;
		/* spread what is left over the time that is left */
		double left = r->t_end - now_s();
		long bursts = (r->per_thread - n + burst - 1) / burst;
		if (bursts > 0 && left > 0)
			sleep_s(left / (double)bursts);
	}
	r->done[a->id] = n;
	return NULL;
}

/* ---- the main thread's load ---------------------------------------------------------------- */

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* One iteration of the load, 8 B on the wire. up: this rank's time is over. Returns 1 while
 * the load goes on, 0 when it ended for this rank: the allreduce carries the largest "time
 * over" flag, so every rank leaves after the same iteration; a ping carries its sender's
 * flag, so a pair ends together; a rank without a partner has no part. */
static int load_step(int load, MPI_Comm app, int up)
{
	double in = up, out = 0;
	if (load == 1) {
		MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_MAX, app);
		return out == 0;
	}
	int peer = rank ^ 1;
	if (peer >= size)
		return 0;
	if (rank & 1) {
		MPI_Recv(&out, 1, MPI_DOUBLE, peer, 11, app, MPI_STATUS_IGNORE);
		MPI_Send(&in, 1, MPI_DOUBLE, peer, 11, app);
		return out == 0;
	}
	MPI_Send(&in, 1, MPI_DOUBLE, peer, 11, app);
	MPI_Recv(&out, 1, MPI_DOUBLE, peer, 11, app, MPI_STATUS_IGNORE);
	return in == 0;
}

int main(int argc, char **argv)
{
	const char *emuspec = NULL, *cont = "cont(h2(hca3/100/hull/20/span=0.3,prop))";
	const char *oneshot = "h2(hca3/100/hull/20/span=0.3,prop)", *csv = NULL, *loadname = "none";
	double seconds = 60, probe_ms = 100;
	long reads = 0;
	int got;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &got);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	for (int i = 1; i < argc; i++) {
		const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!v) {
			if (!rank)
				fprintf(stderr, "cont_run: %s needs a value\n", k);
			MPI_Finalize();
			return 2;
		}
		i++;
		if (!strcmp(k, "--emulate"))
			emuspec = v;
		else if (!strcmp(k, "--cont"))
			cont = v;
		else if (!strcmp(k, "--oneshot"))
			oneshot = v;
		else if (!strcmp(k, "--seconds"))
			seconds = atof(v);
		else if (!strcmp(k, "--probe-ms"))
			probe_ms = atof(v);
		else if (!strcmp(k, "--reads"))
			reads = atol(v);
		else if (!strcmp(k, "--load"))
			loadname = v;
		else if (!strcmp(k, "--csv"))
			csv = v;
		else {
			if (!rank)
				fprintf(stderr, "cont_run: unknown option %s (see the comment at the top of "
				        "bench/cont_run.c)\n", k);
			MPI_Finalize();
			return 2;
		}
	}
	int load = !strcmp(loadname, "allreduce") ? 1 : !strcmp(loadname, "pingpong") ? 2 : 0;
	if (!emuspec || (!load && strcmp(loadname, "none")) || seconds <= 0 || probe_ms <= 0) {
		if (!rank)
			fprintf(stderr, "cont_run: need --emulate SPEC; --load none|allreduce|pingpong; "
			        "positive --seconds and --probe-ms\n");
		MPI_Finalize();
		return 2;
	}
	if (got < MPI_THREAD_MULTIPLE && strcmp(cont, "none")) {
		if (!rank)
			fprintf(stderr, "cont_run: the MPI library gave thread level %d, the continuous "
			        "clock's thread needs MPI_THREAD_MULTIPLE\n", got);
		MPI_Finalize();
		return 2;
	}
	MPI_Comm app;
	MPI_Comm_dup(MPI_COMM_WORLD, &app);
	hclock_emu *emu;
	hclock_clock *base, *g1 = NULL, *g2 = NULL;
	if (hclock_emu_create(emuspec, app, &emu))
		die("--emulate");
	if (hclock_base_create("monotonic", emu, &base))
		die("base clock");
	struct rank_sum sum = {0};
	sum.node = hclock_emu_node(emu);
	hclock_sync *s1 = NULL, *s2 = NULL;
	double t;
	if (strcmp(oneshot, "none")) {
		if (hclock_sync_create(oneshot, &s1))
			die("--oneshot");
		t = now_s();
		if (hclock_sync_run(s1, app, base, &g1))
			die("one-shot sync");
		sum.sync_one_s = now_s() - t;
	}
	if (strcmp(cont, "none")) {
		if (hclock_sync_create(cont, &s2))
			die("--cont");
		t = now_s();
		if (hclock_sync_run(s2, app, base, &g2))
			die("continuous sync");
		sum.sync_cont_s = now_s() - t;
	}

	/* readers */
	struct readers rd = {.clk = g2, .last = INT64_MIN};
	struct reader_arg ra[2] = {{&rd, 0}, {&rd, 1}};
	pthread_t th[2];
	int nreaders = g2 && reads > 0 && hclock_emu_node(emu) != emu->ref_node ? 2 : 0;
	double t0 = now_s(), t_end = t0 + seconds;
	rd.per_thread = reads / 2;
	rd.t_end = t_end - 1;
	for (int i = 0; i < nreaders; i++)
		pthread_create(&th[i], NULL, reader, &ra[i]);

	/* probes and load */
	size_t cap = (size_t)(seconds * 1000 / probe_ms) + 16, np = 0;
	struct probe *pr = calloc(cap, sizeof(*pr));
	size_t ccap = 1024, nc = 0;
	double *chunk = malloc(ccap * sizeof(*chunk));
	double next = t0, cstart = now_s();
	long citer = 0;
	int part = load != 0;
	for (;;) {
		double n = now_s();
		if (n >= t_end && !part)
			break;
		if (n >= next && np < cap) {
			struct probe *p = &pr[np++];
			p->t_s = emu_T_ns(emu) * 1e-9;
			p->lo_ns = p->hi_ns = NAN;
			p->cont_err_ns = p->oneshot_err_ns = NAN;
			p->rtt_ns = p->noise_ns = NAN;
			if (g2) {
				hclock_reading r;
				double lo, hi;
				hclock_true_error(g2, emu, &p->cont_err_ns);
				hclock_read(g2, &r);
				p->status = r.status;
				if (!hclock_clock_bounds(g2, r.now_ns, &lo, &hi)) {
					p->lo_ns = lo;
					p->hi_ns = hi;
				}
				struct hclock_sync_stats st;
				if (!hclock_sync_stats(s2, &st)) {
					p->period_s = st.period_s;
					if (st.exchanges) {
						p->rtt_ns = st.rtt_ns;
						p->noise_ns = st.noise_ns;
					}
				}
			}
			if (g1)
				hclock_true_error(g1, emu, &p->oneshot_err_ns);
			next += probe_ms * 1e-3;
			if (next < n)
				next = n + probe_ms * 1e-3;
		}
		if (!part) {
			sleep_s(fmin(next, t_end) - now_s());
			continue;
		}
		part = load_step(load, app, n >= t_end);
		if (++citer == 1000) {
			double e = now_s();
			if (nc == ccap)
				chunk = realloc(chunk, (ccap *= 2) * sizeof(*chunk));
			chunk[nc++] = (e - cstart) / 1000 * 1e9;
			sum.load_iters += 1000;
			citer = 0;
			cstart = e;
		}
	}
	for (int i = 0; i < nreaders; i++)
		pthread_join(th[i], NULL);
	sum.elapsed_s = now_s() - t0;
	sum.reads = rd.done[0] + rd.done[1];
	sum.backward = rd.backward[0] + rd.backward[1];
	sum.cross_backward = rd.cross[0] + rd.cross[1];
	sum.nprobe = (double)np;
	if (nc) {
		qsort(chunk, nc, sizeof(*chunk), cmp_d);
		sum.load_chunk_median_ns = chunk[nc / 2];
		sum.load_chunk_p90_ns = chunk[nc * 9 / 10];
	}
	sum.rtt_min_ns = sum.rtt_median_ns = sum.noise_median_ns = -1; /* none */
	double *v = malloc((np ? np : 1) * sizeof(*v));
	for (int pass = 0; v && pass < 2; pass++) {
		size_t k = 0;
		for (size_t i = 0; i < np; i++) {
			double x = pass ? pr[i].noise_ns : pr[i].rtt_ns;
			if (!isnan(x) && x > 0)
				v[k++] = x;
		}
		if (!k)
			continue;
		qsort(v, k, sizeof(*v), cmp_d);
		if (pass) {
			sum.noise_median_ns = v[k / 2];
		} else {
			sum.rtt_min_ns = v[0];
			sum.rtt_median_ns = v[k / 2];
		}
	}
	free(v);
	if (s2) {
		struct hclock_sync_stats st;
		double cpu = -1;
		if (!hclock_sync_stats(s2, &st)) {
			sum.exchanges = st.exchanges;
			sum.timeouts = st.timeouts;
			sum.served = st.served;
			sum.halvings = st.halvings;
			sum.doublings = st.doublings;
			sum.shrinks = st.shrinks;
			sum.max_corr_ns = st.max_corr_ns;
			cpu = st.thread_cpu_s;
		}
		sum.cpu_s = cpu;
		if (hclock_sync_stop(s2))
			die("stop");
	}

	/* gather: summaries, then the probes */
	double *all = rank ? NULL : malloc(sizeof(double) * NSUM * size);
	MPI_Gather(&sum, NSUM, MPI_DOUBLE, all, NSUM, MPI_DOUBLE, 0, app);
	int cnt = (int)(np * sizeof(struct probe)), *cnts = NULL, *displ = NULL;
	char *buf = NULL;
	if (!rank) {
		cnts = calloc(size, sizeof(int));
		displ = calloc(size, sizeof(int));
	}
	MPI_Gather(&cnt, 1, MPI_INT, cnts, 1, MPI_INT, 0, app);
	if (!rank) {
		long tot = 0;
		for (int i = 0; i < size; i++) {
			displ[i] = (int)tot;
			tot += cnts[i];
		}
		buf = malloc(tot ? tot : 1);
	}
	MPI_Gatherv(pr, cnt, MPI_BYTE, buf, cnts, displ, MPI_BYTE, 0, app);
	if (!rank) {
		FILE *f = csv ? fopen(csv, "w") : NULL;
		if (csv && !f) {
			fprintf(stderr, "cont_run: cannot write %s: %s\n", csv, strerror(errno));
		} else if (f) {
			fprintf(f, "t_s,rank,node,cont_err_ns,lo_ns,hi_ns,in_bounds,status,"
			        "oneshot_err_ns,period_s\n");
			for (int i = 0; i < size; i++) {
				struct probe *p = (struct probe *)(buf + displ[i]);
				int node = (int)all[i * NSUM + offsetof(struct rank_sum, node) / sizeof(double)];
				for (int j = 0; j < cnts[i] / (int)sizeof(struct probe); j++, p++) {
					int inb = !isnan(p->lo_ns) && -p->cont_err_ns >= p->lo_ns - 1 &&
					          -p->cont_err_ns <= p->hi_ns + 1;
					fprintf(f, "%.6f,%d,%d,%.2f,%.2f,%.2f,%d,%d,%.2f,%.4f\n", p->t_s, i, node,
					        p->cont_err_ns, p->lo_ns, p->hi_ns, inb, p->status,
					        p->oneshot_err_ns, p->period_s);
				}
			}
			fclose(f);
		}
		static const char *names[] = {
			"sync_oneshot_s", "sync_cont_s", "cpu_s", "elapsed_s", "reads", "backward",
			"cross_backward", "exchanges", "timeouts", "served", "halvings", "doublings",
			"shrinks", "max_corr_ns", "load_iters", "load_chunk_median_ns",
			"load_chunk_p90_ns", "node", "probes", "rtt_min_ns", "rtt_median_ns",
			"noise_median_ns"};
		_Static_assert(sizeof(names) / sizeof(names[0]) == NSUM, "names");
		printf("{\"emulate\": \"%s\", \"cont\": \"%s\", \"oneshot\": \"%s\", \"load\": \"%s\", "
		       "\"seconds\": %g, \"ranks\": [", emuspec, cont, oneshot, loadname, seconds);
		for (int i = 0; i < size; i++) {
			printf("%s{", i ? ", " : "");
			for (size_t k = 0; k < NSUM; k++)
				printf("%s\"%s\": %.9g", k ? ", " : "", names[k], all[i * NSUM + k]);
			printf("}");
		}
		printf("]}\n");
		free(all);
		free(cnts);
		free(displ);
		free(buf);
	}
	free(pr);
	free(chunk);
	if (s1)
		hclock_sync_free(s1);
	if (s2)
		hclock_sync_free(s2);
	hclock_clock_free(g1);
	hclock_clock_free(g2);
	hclock_clock_free(base);
	hclock_emu_free(emu);
	MPI_Comm_free(&app);
	MPI_Finalize();
	return 0;
}
