/*
 * metrics.c - the measures of Section 4.1 over the corrected events: inversions and "too
 * fast" messages per receiving node, and the broadcast differential delay (arrival of one
 * broadcast on each node minus its arrival on the reference).
 */
#include <math.h>
#include <stdlib.h>

#include "align/align_priv.h"

/* inversions (received before sent) and too-fast messages (latency below the minimum, given
 * or half the smallest corrected round trip of the pair) */
static int message_metrics(struct hclock_align *a)
{
	size_t nn = a->set.nnodes;
	double *minlat = malloc(nn * nn * sizeof(double));

	if (!minlat)
		return HCLOCK_ENOMEM;
	for (size_t i = 0; i < nn * nn; i++)
		minlat[i] = INFINITY;
	for (size_t i = 0; i < a->nmsg; i++) {
		const struct repair_msg *m = &a->msg[i];
		double l = (double)(a->node[m->dst].corr[m->re] - a->node[m->src].corr[m->se]);
		if (l < minlat[m->src * nn + m->dst])
			minlat[m->src * nn + m->dst] = l;
	}
	for (size_t i = 0; i < a->nmsg; i++) {
		const struct repair_msg *m = &a->msg[i];
		struct anode *d = &a->node[m->dst];
		double l = (double)(d->corr[m->re] - a->node[m->src].corr[m->se]), tau;
		d->nrecv++;
		d->inversions += l < 0;
		if (a->opts.min_latency_ns >= 0)
			tau = (double)a->opts.min_latency_ns;
		else /* half the smallest corrected round trip of this pair */
			tau = (minlat[m->src * nn + m->dst] + minlat[m->dst * nn + m->src]) / 2;
		d->too_fast += isfinite(tau) && l < tau;
	}
	free(minlat);
	return 0;
}

static int cmp_bc(const void *x, const void *y)
{
	const size_t *a = x, *b = y; /* {id lo, id hi, node, event} packed as 4 size_t */
	for (int i = 0; i < 3; i++)
		if (a[i] != b[i])
			return a[i] < b[i] ? -1 : 1;
	return 0;
}

/* every broadcast event as {id high, id low, node (the reference 0, others v + 1), event},
 * sorted: one broadcast's copies are neighbours, the reference's first. Returns the count. */
static size_t bcast_keys(const struct hclock_align *a, size_t *bk)
{
	size_t nb = 0;

	for (size_t v = 0; v < a->set.nnodes; v++)
		for (size_t k = 0; k < a->set.nodes[v].nev; k++) {
			const struct trace_event *e = &a->set.nodes[v].ev[k];
			if (e->kind != TRACE_BCAST)
				continue;
			bk[4 * nb] = (size_t)(e->msg >> 32);
			bk[4 * nb + 1] = (size_t)(e->msg & 0xffffffffu);
			bk[4 * nb + 2] = v == a->ref ? 0 : v + 1;
			bk[4 * nb + 3] = k;
			nb++;
		}
	qsort(bk, nb, 4 * sizeof(size_t), cmp_bc);
	return nb;
}

/* the differential delays of the broadcasts the reference saw, and their statistics */
static void bcast_delays(struct hclock_align *a, const size_t *bk, size_t nb)
{
	double sum = 0, sq = 0;

	for (size_t i = 0; i < nb;) {
		size_t j = i + 1;
		while (j < nb && bk[4 * j] == bk[4 * i] && bk[4 * j + 1] == bk[4 * i + 1])
			j++;
		if (bk[4 * i + 2] == 0) {
			int64_t cr = a->node[a->ref].corr[bk[4 * i + 3]];
			for (size_t k = i + 1; k < j; k++) {
				size_t v = bk[4 * k + 2] - 1;
				struct bcast_pt *p = &a->bc[a->nbc++];
				p->node = v;
				p->d_ns = (double)(a->node[v].corr[bk[4 * k + 3]] - cr);
				p->t_s = (double)(cr - a->t0) * 1e-9;
			}
		}
		i = j;
	}
	for (size_t i = 0; i < a->nbc; i++) {
		double d = a->bc[i].d_ns;
		if (!i || d < a->bc_min)
			a->bc_min = d;
		if (!i || d > a->bc_max)
			a->bc_max = d;
		sum += d;
	}
	if (a->nbc) {
		a->bc_mean = sum / (double)a->nbc;
		for (size_t i = 0; i < a->nbc; i++)
			sq += (a->bc[i].d_ns - a->bc_mean) * (a->bc[i].d_ns - a->bc_mean);
		a->bc_std = sqrt(sq / (double)a->nbc);
	}
}

int align_metrics(struct hclock_align *a)
{
	size_t nb = 0, *bk;
	int r = message_metrics(a);

	if (r)
		return r;
	for (size_t v = 0; v < a->set.nnodes; v++)
		for (size_t k = 0; k < a->set.nodes[v].nev; k++)
			nb += a->set.nodes[v].ev[k].kind == TRACE_BCAST;
	a->bc_min = a->bc_max = a->bc_mean = a->bc_std = NAN;
	if (!nb)
		return 0;
	bk = malloc(nb * 4 * sizeof(size_t));
	a->bc = malloc(nb * sizeof(*a->bc));
	if (!bk || !a->bc) {
		free(bk);
		return HCLOCK_ENOMEM;
	}
	bcast_delays(a, bk, bcast_keys(a, bk));
	free(bk);
	return 0;
}
