/*
 * finish.c - what the tracer tells of its clock at MPI_Finalize (finish.h): the drift check
 * and the summary of --event-truth, whose histogram each reading adds to as it is made, and
 * the truth of every reading kept for DIR/raw/truth.R (truthfile.h).
 */
#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock/clock.h"
#include "hclock.h"
#include "trace/finish.h"
#include "trace/truthfile.h"
#include "transport/yield.h"
#include "util/err.h"
#include "util/pmpi.h"

/* HCLOCK_TRACE_TRUTH=1 (hclock trace --event-truth; emulated clocks only): the true error
 * of every global reading the tracer makes, |reading - the reference's clock at that
 * instant|, in a histogram. The truth is read just before and just after (the reading lies
 * between: the midpoint is within the reads' time, ~100 ns, of it); a pair further apart
 * than TRUTH_GAP_NS (the process was preempted between them) is counted, not used. */
#define TRUTH_BINS 1024 /* 8 ns wide up to 1024 ns, then 16 per octave (6 %) */
#define TRUTH_GAP_NS 1000
static struct {
	hclock_clock *base;          /* the truth's clock */
	atomic_uint_fast64_t bin[TRUTH_BINS], skipped;
	_Atomic int64_t max_ns;
	atomic_uint_fast64_t outside; /* readings whose truth lay outside the bounds the
	                                 records carry (tracer.c's rec_bounds), by more than the
	                                 truth's own uncertainty */
	_Atomic int64_t out_max_ns;   /* ... the most by which, ns */
	/* every reading's truth for DIR/raw/truth.R (truthfile.h): entry i is claimed by
	 * the add on next, written, its true_hi_ns last (release: non-zero once complete, a
	 * truth of 0 being unreadable); next may pass TRUTH_FILE_CAP, the excess is lost */
	struct truth_entry *kept;
	atomic_uint_fast64_t next, unread; /* unread: ref1 or ref2 0, or ref2 < ref1 */
} TT;

void finish_truth_start(hclock_clock *base)
{
	TT.base = base;
	/* 48 MiB of address space, its pages touched only as readings fill them */
	TT.kept = calloc(TRUTH_FILE_CAP, sizeof(*TT.kept));
}

int64_t finish_truth_ref(void)
{
	int64_t mine, ref;
	return clock_truth(TT.base, &mine, &ref) ? 0 : ref;
}

static int truth_bin(int64_t err)
{
	if (err < 1024)
		return (int)(err / 8);
	int e = 63 - __builtin_clzll((unsigned long long)err); /* >= 10 */
	int b = 128 + (e - 10) * 16 + (int)((err >> (e - 4)) & 15);
	return b < TRUTH_BINS ? b : TRUTH_BINS - 1;
}

/* the upper edge of bin b, ns */
static long long truth_edge(int b)
{
	if (b < 128)
		return 8LL * (b + 1);
	int e = 10 + (b - 128) / 16, sub = (b - 128) % 16;
	return (long long)(16 + sub + 1) << (e - 4);
}

static void atomic_max(_Atomic int64_t *m, int64_t v)
{
	int64_t o = atomic_load_explicit(m, memory_order_relaxed);
	while (v > o && !atomic_compare_exchange_weak_explicit(m, &o, v, memory_order_relaxed,
	                                                          memory_order_relaxed))
		;
}

/* the reading g (ns) kept with its truth [ref1, ref2] (ns), or counted */
static void keep(int64_t g, int64_t ref1, int64_t ref2)
{
	if (!ref1 || !ref2 || ref2 < ref1) {
		atomic_fetch_add_explicit(&TT.unread, 1, memory_order_relaxed);
		return;
	}
	uint64_t i = atomic_fetch_add_explicit(&TT.next, 1, memory_order_relaxed);
	if (i >= TRUTH_FILE_CAP || !TT.kept)
		return; /* counted by next */
	TT.kept[i].t_g = g;
	TT.kept[i].true_lo_ns = ref1;
	__atomic_store_n(&TT.kept[i].true_hi_ns, ref2, __ATOMIC_RELEASE);
}

void finish_truth_note(int64_t g, int64_t ref1,
                       int (*bounds)(int64_t g, int64_t *lo_g, int64_t *hi_g))
{
	int64_t ref2 = finish_truth_ref(), gap = ref2 - ref1;
	keep(g, ref1, ref2);
	if (gap < 0 || gap > TRUTH_GAP_NS) {
		atomic_fetch_add_explicit(&TT.skipped, 1, memory_order_relaxed);
		return;
	}
	int64_t truth = ref1 + gap / 2, err = llabs(g - truth);
	atomic_fetch_add_explicit(&TT.bin[truth_bin(err)], 1, memory_order_relaxed);
	atomic_max(&TT.max_ns, err);
	/* the bounds a message record made now would carry */
	int64_t lo_g, hi_g;
	if (!bounds(g, &lo_g, &hi_g))
		return;
	int64_t out = (truth < lo_g ? lo_g - truth : truth - hi_g) - gap / 2 - 1;
	if (out > 0) {
		atomic_fetch_add_explicit(&TT.outside, 1, memory_order_relaxed);
		atomic_max(&TT.out_max_ns, out);
	}
}

/* --event-truth: the histograms of the processes off the reference's node (of all, with
 * one node) summed on rank 0, which prints one line. Collective. */
void finish_truth_report(hclock_emu *emu)
{
	uint64_t h[TRUTH_BINS + 2], sum[TRUTH_BINS + 2];
	int64_t mx[2] = {atomic_load(&TT.max_ns), atomic_load(&TT.out_max_ns)}, gmx[2] = {0, 0};
	/* a node is a time source: an emulated node, or a host's kernel clock */
	uint64_t n0 = TT.base->source;
	int off, noff = 0;
	PMPI_Bcast(&n0, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
	off = TT.base->source != n0;
	PMPI_Allreduce(&off, &noff, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	int mine = off || !noff;
	for (int i = 0; i < TRUTH_BINS; i++)
		h[i] = mine ? atomic_load(&TT.bin[i]) : 0;
	h[TRUTH_BINS] = mine ? atomic_load(&TT.skipped) : 0;
	h[TRUTH_BINS + 1] = mine ? atomic_load(&TT.outside) : 0;
	if (!mine)
		mx[0] = mx[1] = 0;
	PMPI_Reduce(h, sum, TRUTH_BINS + 2, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
	PMPI_Reduce(mx, gmx, 2, MPI_INT64_T, MPI_MAX, 0, MPI_COMM_WORLD);
	int rank = 0;
	PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (rank)
		return;
	uint64_t n = 0;
	for (int i = 0; i < TRUTH_BINS; i++)
		n += sum[i];
	const double q[3] = {0.5, 0.99, 0.999};
	long long at[3] = {0, 0, 0};
	for (int k = 0; k < 3 && n; k++) {
		uint64_t c = 0, want = (uint64_t)ceil(q[k] * (double)n);
		int i = 0;
		while (i < TRUTH_BINS - 1 && (c += sum[i]) < want)
			i++;
		at[k] = truth_edge(i) < gmx[0] ? truth_edge(i) : (long long)gmx[0]; /* an upper bound */
	}
	char line[600];
	snprintf(line, sizeof(line),
	         "true error of %llu global readings on the processes %s (%s): median <= "
	         "%lld ns, p99 <= %lld ns, p99.9 <= %lld ns, max %lld ns; %llu readings left out "
	         "(preempted between the truth's two reads); %llu outside the bounds their "
	         "message records would carry (by up to %lld ns)",
	         (unsigned long long)n, noff ? "off the reference's node" : "(one node)",
	         emu ? "emulation" : "truth from CLOCK_REALTIME", at[0],
	         at[1], at[2], (long long)gmx[0], (unsigned long long)sum[TRUTH_BINS],
	         (unsigned long long)sum[TRUTH_BINS + 1], (long long)gmx[1]);
	err_line("hclock trace", "%s", line);
}

static int by_reading(const void *a, const void *b)
{
	int64_t x = ((const struct truth_entry *)a)->t_g, y = ((const struct truth_entry *)b)->t_g;
	return (x > y) - (x < y);
}

/* The entries kept, new ones stopped (a reading from here on is not kept); into *n those
 * complete, *lost the readings not kept. An entry a thread is still writing is waited for,
 * up to 100 ms; past that the complete ones are copied out and the array is left allocated
 * (that thread writes into it yet). NULL when none (or out of memory: all lost). */
static struct truth_entry *kept_entries(size_t *n, uint64_t *lost)
{
	/* TT.kept itself stays as it is: a thread that claimed an entry before reads it */
	uint64_t next = atomic_exchange(&TT.next, (uint64_t)1 << 62);
	struct truth_entry *e = TT.kept;
	size_t m = e ? (size_t)(next < TRUTH_FILE_CAP ? next : TRUTH_FILE_CAP) : 0, done = 0;
	*lost = atomic_load(&TT.unread) + (next - m);
	for (int i = 0; i < 100; i++) {
		while (done < m && __atomic_load_n(&e[done].true_hi_ns, __ATOMIC_ACQUIRE))
			done++;
		if (done == m)
			break;
		nanosleep(&(struct timespec){0, 1000000}, NULL);
	}
	*n = m;
	if (done == m)
		return e;
	struct truth_entry *c = malloc(m * sizeof(*c));
	*n = 0;
	for (size_t i = 0; c && i < m; i++)
		if (__atomic_load_n(&e[i].true_hi_ns, __ATOMIC_ACQUIRE))
			c[(*n)++] = e[i];
	*lost += m - *n;
	return c;
}

int finish_truth_write(const char *dir, int rank)
{
	size_t n;
	uint64_t lost;
	struct truth_entry *e = kept_entries(&n, &lost);
	if (!dir) {
		free(e);
		return 0;
	}
	if (e)
		qsort(e, n, sizeof(*e), by_reading);
	struct truth_header h = {.rank = rank, .count = n, .lost = lost};
	memcpy(h.magic, TRUTH_FILE_MAGIC, 8);
	char path[4300], who[64];
	snprintf(path, sizeof(path), "%s/raw/truth.%d", dir, rank);
	FILE *f = fopen(path, "wb");
	int bad = !f || fwrite(&h, sizeof(h), 1, f) != 1 || (n && fwrite(e, sizeof(*e), n, f) != n);
	int why = bad ? errno : 0;
	if (f && fclose(f) && !bad)
		bad = 1, why = errno;
	free(e);
	if (!bad)
		return 0;
	if (f)
		unlink(path); /* whole or not at all */
	snprintf(who, sizeof(who), "hclock trace (rank %d)", rank);
	err_line(who, "cannot write %s: %s", path, strerror(why ? why : EIO));
	return -1;
}

/* The drift check at MPI_Finalize, on hclock's public calls: Check-Global-Clock (Hunold &
 * Carpen-Amarie, Alg. 6) at one point, every process measured: rank 0 measures each
 * process's offset on the global clock in turn (10 SKaMPI-Offset exchanges), each process
 * then reads its true error (emulated clocks). Collective. Rank 0 gets the largest |offset|
 * in *max_ns, the check's uncertainty in *unc_ns (the largest over the processes of half
 * their fastest round trip, which bounds each offset's error: the true largest offset is
 * within *max_ns +- *unc_ns) and the largest |true error| in *true_ns (left alone without
 * emulation); all are left alone (NAN) when any process failed. */
void finish_drift_check(hclock_clock *g, hclock_emu *emu, double *max_ns, float *unc_ns,
                        double *true_ns)
{
	/* |offset| ns, |true error| ns, failed, half the fastest round trip ns */
	double mine[4] = {0, 0, 0, 0}, all[4] = {0, 0, 0, 0}, rtt = 0;
	int rc = 0, rank = 0, size = 1;
	PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
	PMPI_Comm_size(MPI_COMM_WORLD, &size);
	if (rank == 0) {
		for (int k = 1; k < size; k++)
			rc = first_err(rc, hclock_measure_offset(MPI_COMM_WORLD, g, 0, k, 10, NULL, NULL));
	} else {
		rc = hclock_measure_offset(MPI_COMM_WORLD, g, 0, rank, 10, &mine[0], &rtt);
		mine[0] = fabs(mine[0]);
		mine[3] = rtt / 2;
	}
	int truth = emu || TT.base; /* the emulation's, or --event-truth=realtime's */
	if (truth) {
		rc = first_err(rc, hclock_true_error(g, emu, &mine[1]));
		mine[1] = fabs(mine[1]);
	}
	mine[2] = rc != 0;
	/* the processes measured first must not take the cores of those measured after */
	if (yield_reduce(mine, all, 4, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD) || rank || all[2])
		return;
	*max_ns = all[0];
	*unc_ns = (float)all[3];
	if (truth)
		*true_ns = all[1];
}
