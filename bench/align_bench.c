/*
 * align_bench.c - throughput of the convex hull alignment, one core.
 *
 *   align_bench [MAX_EVENTS [IO_MAX_EVENTS]]
 *
 * For n = 1e4, 1e5, ... MAX_EVENTS message points (half each direction, realtime-sized
 * timestamps, 20 us + exponential latency): "hull+bisector" builds both half hulls, solves
 * LP 5 and takes Duda's bisector; "bounds" computes Delta1/Delta2 at every point (LP 6 at
 * the hull vertices, interpolated). "io" writes two CSV traces of n/2 messages each way and
 * times the whole path of hclock align: read and match; fit, compose, bounds and metrics at
 * every event; write the corrected traces and the --bounds CSV. Prints message events per
 * second (numerics: median of a few runs; I/O: one run, files in /tmp).
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hclock_align.h"
#include "numerics/hull.h"

static uint64_t rng = 88172645463325252ull;

static double unif(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (double)(rng >> 11) / 9007199254740992.0;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void gen(struct hull_pt *p, size_t n, int sign)
{
	int64_t x = 0;
	for (size_t i = 0; i < n; i++) {
		double lat = 20000 + 30000 * -log(1 - unif());
		x += 1 + (int64_t)(unif() * 2e5);
		p[i].x = x;
		p[i].y = (int64_t)(x * 1.00003 + 5e6 + sign * lat);
	}
}

static void bench_numerics(size_t n)
{
	size_t h = n / 2, reps = n <= 100000 ? 15 : n <= 1000000 ? 7 : 3;
	struct hull_pt *up = malloc(h * sizeof(*up)), *dn = malloc(h * sizeof(*dn));
	struct hull_pt *lo = malloc(h * sizeof(*lo)), *hi = malloc(h * sizeof(*hi));
	int64_t *xs = malloc(h * sizeof(*xs));
	long double *vmax = malloc(h * sizeof(*vmax)), *vmin = malloc(h * sizeof(*vmin));
	double th[16], tb[16];
	size_t nlo = 0, nhi = 0;
	volatile long double sink = 0;

	gen(up, h, 1);
	gen(dn, h, -1);
	for (size_t i = 0; i < h; i++)
		xs[i] = up[i].x;
	for (size_t r = 0; r < reps; r++) {
		struct corridor c;
		struct line e;
		double t0 = now(), t1, t2;
		nlo = hull_lower(up, h, lo);
		nhi = hull_upper(dn, h, hi);
		corridor_init(&c, lo, nlo, hi, nhi);
		e = corridor_bisector(&c);
		t1 = now();
		/* bounds at every point of both directions */
		corridor_lp6_sorted(&c, xs, h, vmax, vmin);
		for (size_t i = 0; i < h; i++)
			sink += vmax[i] - line_at(e, xs[i]);
		corridor_lp6_sorted(&c, xs, h, vmax, vmin);
		for (size_t i = 0; i < h; i++)
			sink += line_at(e, xs[i]) - vmin[i];
		t2 = now();
		th[r] = t1 - t0;
		tb[r] = t2 - t1;
	}
	qsort(th, reps, sizeof(*th), cmp_d);
	qsort(tb, reps, sizeof(*tb), cmp_d);
	printf("%10zu  hull+bisector %8.1f M/s   bounds %8.1f M/s   (hull points %zu)\n", n,
	       n / th[reps / 2] * 1e-6, n / tb[reps / 2] * 1e-6, nlo + nhi);
	free(up);
	free(dn);
	free(lo);
	free(hi);
	free(xs);
	free(vmax);
	free(vmin);
	(void)sink;
}

struct bev {
	int64_t t;
	size_t id;
	int send;
};

static int cmp_bev(const void *a, const void *b)
{
	const struct bev *x = a, *y = b;
	return (x->t > y->t) - (x->t < y->t);
}

static int bench_io(size_t n, const char *dir)
{
	char pa[512], pb[512], po[512], pbnd[512], err[512];
	const char *in[2] = {pa, pb};
	FILE *fa, *fb, *fbnd;
	struct hull_pt *ab = malloc(n / 2 * sizeof(*ab)), *ba = malloc(n / 2 * sizeof(*ba));
	size_t i = 0, j = 0, h = n / 2;
	struct hclock_align_opts o;
	hclock_align *a;
	double t0, t1, t2, t3;
	const int64_t base = INT64_C(1700000000000000000);

	snprintf(pa, sizeof(pa), "%s/a.csv", dir);
	snprintf(pb, sizeof(pb), "%s/b.csv", dir);
	snprintf(po, sizeof(po), "%s/out", dir);
	snprintf(pbnd, sizeof(pbnd), "%s/bounds.csv", dir);
	/* a->b: x on a, y on b; b->a: x on a (recv), y on b (send) */
	gen(ab, h, 1);
	gen(ba, h, -1);
	fa = fopen(pa, "w");
	fb = fopen(pb, "w");
	if (!fa || !fb)
		return -1;
	fputs("event,id,peer,time_ns\n", fa);
	fputs("event,id,peer,time_ns\n", fb);
	while (i < h || j < h) {
		if (j >= h || (i < h && ab[i].x <= ba[j].x)) {
			fprintf(fa, "send,%zu,b,%" PRId64 "\n", i, base + ab[i].x);
			i++;
		} else {
			fprintf(fa, "recv,%zu,b,%" PRId64 "\n", h + j, base + ba[j].x);
			j++;
		}
	}
	/* b's events in b time order */
	{
		struct bev *e = malloc(2 * h * sizeof(*e));
		if (!e)
			return -1;
		for (i = 0; i < h; i++) {
			e[i] = (struct bev){ab[i].y, i, 0};
			e[h + i] = (struct bev){ba[i].y, h + i, 1};
		}
		qsort(e, 2 * h, sizeof(*e), cmp_bev);
		for (i = 0; i < 2 * h; i++)
			fprintf(fb, "%s,%zu,a,%" PRId64 "\n", e[i].send ? "send" : "recv", e[i].id,
			        base + e[i].t);
		free(e);
	}
	fclose(fa);
	fclose(fb);
	free(ab);
	free(ba);
	hclock_align_opts_init(&o);
	o.reference = "a";
	t0 = now();
	if (hclock_align_open(in, 2, &a, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	t1 = now();
	if (hclock_align_run(a, &o, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	t2 = now();
	/* what hclock align writes: corrected traces and the bounds at every event */
	fbnd = fopen(pbnd, "w");
	if (!fbnd) {
		perror(pbnd);
		return -1;
	}
	if (hclock_align_bounds_csv(a, fbnd) | fclose(fbnd)) {
		fprintf(stderr, "%s: write error\n", pbnd);
		return -1;
	}
	if (hclock_align_write(a, po, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	t3 = now();
	printf("%10zu  with I/O: read+match %6.1f M/s   fit+compose+bounds+metrics %6.1f M/s   "
	       "write %6.1f M/s   total %6.1f M/s\n", n, n / (t1 - t0) * 1e-6,
	       n / (t2 - t1) * 1e-6, n / (t3 - t2) * 1e-6, n / (t3 - t0) * 1e-6);
	hclock_align_free(a);
	unlink(pa);
	unlink(pb);
	unlink(pbnd);
	snprintf(pa, sizeof(pa), "%s/out/a.csv", dir);
	snprintf(pb, sizeof(pb), "%s/out/b.csv", dir);
	unlink(pa);
	unlink(pb);
	rmdir(po);
	return 0;
}

int main(int argc, char **argv)
{
	size_t max = argc > 1 ? strtoull(argv[1], NULL, 0) : 10000000;
	size_t iomax = argc > 2 ? strtoull(argv[2], NULL, 0) : max;
	char dir[] = "/tmp/hclock-align-bench-XXXXXX";

	printf("message events, one core (n = points in both directions)\n");
	for (size_t n = 10000; n <= max; n *= 10)
		bench_numerics(n);
	if (!mkdtemp(dir))
		return 1;
	for (size_t n = 10000; n <= iomax; n *= 10)
		if (bench_io(n, dir))
			return 1;
	rmdir(dir);
	return 0;
}
