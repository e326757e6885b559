/*
 * rtt.c - Mean-RTT-Offset (Hunold & Carpen-Amarie, Alg. 8; Jones & Koenig, Fig. 1).
 * The mean round trip of a pair is measured once (RTT_EXCHANGES after RTT_WARMUP, outliers
 * rejected) and cached per pair; each measurement then takes the reference's timestamps plus
 * half that RTT as the client's present, and returns the median of the offsets over n
 * exchanges (with the larger of the pair's mean RTT and the round trip of the exchange it
 * came from, by which offset_measure tells a stall).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "numerics/stats.h"
#include "offset/offset.h"
#include "util/err.h"
#include "util/fault.h"

#define RTT_WARMUP 5
#define RTT_EXCHANGES 50

struct rtt_entry {
	MPI_Comm comm;
	int ref, client;
	double rtt_ns; /* mean round trip, ns */
};

struct rtt_alg {
	struct offset_alg a;
	struct rtt_entry *cache;
	size_t ncache, cap;
	struct rtt_entry spare; /* the last pair, when the cache could not grow: both ends must
	                           agree on which pairs are measured already */
	int have_spare;
};

static const double *find(const struct rtt_alg *r, const struct pp_link *l)
{
	for (size_t i = 0; i < r->ncache; i++)
		if (r->cache[i].comm == l->comm && r->cache[i].ref == l->ref &&
		    r->cache[i].client == l->client)
			return &r->cache[i].rtt_ns;
	if (r->have_spare && r->spare.comm == l->comm && r->spare.ref == l->ref &&
	    r->spare.client == l->client)
		return &r->spare.rtt_ns;
	return NULL;
}

/* Both ends run this once per pair; the client learns the mean RTT, of the exchanges within
 * 4 robust sigmas of the median: on shared cores a few exchanges wait a whole scheduler
 * tick (4 ms here), and one of them in a plain mean of 50 moves every offset of the pair by
 * 40 us (measured: MPICH on 4 ranks and 2 cores, models 4 ms apart on one node). */
static double measure_rtt(struct pp_link *l)
{
	double rtt[RTT_EXCHANGES];
	for (int i = 0; i < RTT_WARMUP + RTT_EXCHANGES; i++) {
		if (l->me == l->ref) {
			pp_recv(l, l->client);
			pp_send(l, 0, l->client);
		} else {
			int64_t t0 = hclock_now(l->clk);
			pp_send(l, t0, l->ref);
			pp_recv(l, l->ref);
			if (i >= RTT_WARMUP)
				rtt[i - RTT_WARMUP] = (double)(hclock_now(l->clk) - t0);
		}
	}
	pp_count(l, RTT_WARMUP + RTT_EXCHANGES);
	return l->me == l->ref ? 0 : stats_robust_mean(rtt, RTT_EXCHANGES, 4);
}

/* The pair's mean RTT: cached, or measured now (and cached if memory allows; if not, the
 * measurement still happens so the peer is served, and the error is returned). */
static int pair_rtt(struct rtt_alg *r, struct pp_link *l, double *rtt)
{
	const double *c = find(r, l);
	if (c) {
		*rtt = *c;
		return 0;
	}
	*rtt = measure_rtt(l);
	struct rtt_entry e = {l->comm, l->ref, l->client, *rtt};
	if (r->ncache == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 8;
		struct rtt_entry *n = fault_realloc(r->cache, cap * sizeof(*n));
		if (!n) {
			r->spare = e;
			r->have_spare = 1;
			return err_set(HCLOCK_ENOMEM, "out of memory");
		}
		r->cache = n;
		r->cap = cap;
	}
	r->cache[r->ncache++] = e;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* the client's n exchanges: the median offset and the exchange it came from: its local time
 * and, to tell a stall by (numerics/stall.h), the larger of its own round trip and the
 * pair's mean (the offset is off by up to half of either: a mean measured through a stall
 * shows here, where the exchanges after it are fast) */
static int client_offsets(struct pp_link *l, int n, double rtt, struct offset_sample *out)
{
	double *off = fault_malloc((size_t)n * sizeof(*off) * 2); /* offsets, then sorted */
	double *own = fault_malloc((size_t)n * sizeof(*own));     /* each exchange's round trip */
	int64_t *loc = fault_malloc((size_t)n * sizeof(*loc));
	for (int i = 0; i < n; i++) {
		int64_t t0 = hclock_now(l->clk);
		pp_ssend(l, 0, l->ref);
		int64_t tr = pp_recv(l, l->ref);
		int64_t now = hclock_now(l->clk);
		if (off && own && loc) {
			loc[i] = now;
			off[i] = (double)(tr - now) + rtt / 2;
			own[i] = (double)(now - t0);
		}
	}
	int rc = 0;
	if (!off || !own || !loc) {
		rc = err_set(HCLOCK_ENOMEM, "out of memory");
	} else {
		double *sorted = off + n;
		memcpy(sorted, off, (size_t)n * sizeof(*off));
		qsort(sorted, (size_t)n, sizeof(*sorted), cmp_double);
		double med = sorted[(n - 1) / 2];
		for (int i = 0; i < n; i++)
			if (off[i] == med) {
				*out = (struct offset_sample){loc[i], med, fmax(rtt, own[i])};
				break;
			}
	}
	free(off);
	free(own);
	free(loc);
	return rc;
}

static int rtt_measure(struct offset_alg *a, struct pp_link *l, struct offset_sample *out)
{
	struct rtt_alg *r = (struct rtt_alg *)a;
	int n = a->nexchanges, rc;
	double rtt;
	if (l->me != l->ref && l->me != l->client)
		return 0;
	rc = pair_rtt(r, l, &rtt);
	if (l->me == l->ref) {
		for (int i = 0; i < n; i++) {
			pp_recv(l, l->client);
			pp_ssend(l, hclock_now(l->clk), l->client);
		}
	} else {
		int c = client_offsets(l, n, rtt, out);
		if (!rc)
			rc = c;
	}
	pp_count(l, n);
	return l->rc ? l->rc : rc;
}

static void rtt_reset(struct offset_alg *a)
{
	((struct rtt_alg *)a)->ncache = 0;
	((struct rtt_alg *)a)->have_spare = 0;
}

/* a retake: the pair's RTT, measured in the stalled measurement, is measured again */
static void rtt_retake(struct offset_alg *a, const struct pp_link *l)
{
	struct rtt_alg *r = (struct rtt_alg *)a;
	for (size_t i = 0; i < r->ncache; i++)
		if (r->cache[i].comm == l->comm && r->cache[i].ref == l->ref &&
		    r->cache[i].client == l->client) {
			r->cache[i] = r->cache[--r->ncache];
			break;
		}
	if (r->have_spare && r->spare.comm == l->comm && r->spare.ref == l->ref &&
	    r->spare.client == l->client)
		r->have_spare = 0;
}

static void rtt_destroy(struct offset_alg *a)
{
	struct rtt_alg *r = (struct rtt_alg *)a;
	free(r->cache);
	free(r);
}

static const struct offset_ops rtt_ops = {
	.measure = rtt_measure, .reset = rtt_reset, .retake = rtt_retake, .destroy = rtt_destroy,
};

const struct offset_type offset_type_rtt = {
	.name = "rtt",
	.help = "Mean-RTT-Offset (Alg. 8): mean RTT measured once per pair, median offset",
	.ops = &rtt_ops,
	.size = sizeof(struct rtt_alg),
};
